/**
 * Runs the inventory-provider simulator on its own (`npm run simulator`), e.g. as UPSTREAM_URL of
 * a local service or a load test's provider. Configured only through the environment.
 */

import { pino } from 'pino';
import { z } from 'zod';
import { startSimulator } from './server.js';

const envSchema = z.object({
  SIMULATOR_PORT: z.coerce.number().int().min(0).max(65535).default(4100),
  SIMULATOR_HOST: z.string().default('127.0.0.1'),
  SIMULATOR_SEED: z.coerce.number().int().min(0).max(0xffff_ffff).default(42),
  SIMULATOR_SIZE: z.coerce.number().int().min(1).max(100_000).default(500),
  SIMULATOR_VOLATILITY: z.coerce.number().min(0).max(1).default(0),
});

const log = pino({ name: 'simulator' });

// An empty variable means "unset", as in most shells' `VAR= cmd`.
const present = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined && v !== ''));
const parsed = envSchema.safeParse(present);
if (!parsed.success) {
  const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
  console.error(`invalid simulator configuration:\n${lines.join('\n')}`);
  process.exit(2);
}
const env = parsed.data;

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
