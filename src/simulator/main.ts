/**
 * Runs the inventory-provider simulator on its own (`npm run simulator`), e.g. as UPSTREAM_URL of
 * a local service or a load test's provider. Configured only through the environment.
 */

import { pino } from 'pino';
import { ConfigError, loadConfig } from '../config.js';
import { startSimulator } from './server.js';

const log = pino({ name: 'simulator' });

let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(2);
}
const env = {
  SIMULATOR_PORT: config.simulator.port,
  SIMULATOR_HOST: config.simulator.host,
  SIMULATOR_SEED: config.simulator.seed,
  SIMULATOR_SIZE: config.simulator.size,
  SIMULATOR_VOLATILITY: config.simulator.volatility,
};

const simulator = await startSimulator({
  port: env.SIMULATOR_PORT,
  host: env.SIMULATOR_HOST,
  seed: env.SIMULATOR_SEED,
  size: env.SIMULATOR_SIZE,
  volatility: env.SIMULATOR_VOLATILITY,
  onError: (error) => log.error({ err: error }, 'unexpected error'),
}).catch((error: unknown) => {
  // Typically the port is taken: one log line and a failing exit, not a stack trace.
  log.fatal({ err: error, port: env.SIMULATOR_PORT, host: env.SIMULATOR_HOST }, 'cannot listen');
  process.exit(1);
});
log.info(
  { url: simulator.url, port: simulator.port, seed: env.SIMULATOR_SEED, size: env.SIMULATOR_SIZE, volatility: env.SIMULATOR_VOLATILITY },
  'simulator listening',
);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    log.info({ signal }, 'shutting down');
    simulator.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
