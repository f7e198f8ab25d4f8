import { createService } from './app.js';
import { ConfigError, loadConfig } from './config.js';

/** A bad configuration stops the start with its message and exit code 2: a bad variable, or a database of the other environment. */
async function orExit<T>(start: () => T | Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}

const config = await orExit(() => loadConfig());
const service = await orExit(() => createService(config));
const port = await service.listen();
const log = service.deps.logger;
log.info(
  { port, tls: Boolean(config.transport.tls), env: config.env, database: service.deps.db.kind, redis: Boolean(config.redisUrl) },
  'listening',
);

if (service.adminToken.created) {
  log.info({ file: `${config.dataDir}/admin-token` }, 'operator token created (npm run admin reads it from there)');
}
if (service.demoCredentials) {
  const d = service.demoCredentials;
  // Printed once, on the first start of an empty sandbox; only digests are stored.
  process.stdout.write(
    [
      '',
      'Sandbox demo channel created. These secrets are shown once:',
      `  user_id        ${d.user_id}`,
      `  api_key        ${d.api_key}`,
      `  client_id      ${d.client_id}`,
      `  client_secret  ${d.client_secret}`,
      `Try: curl -H 'X-Api-Key: ${d.api_key}' ${config.transport.tls ? 'https://localhost' : 'http://127.0.0.1'}:${port}/channel/v1/channels/me`,
      '',
    ].join('\n') + '\n',
  );
}

// A renewed certificate (TLS_CERT_FILE, TLS_KEY_FILE) is taken up without a restart.
process.on('SIGHUP', () => {
  try {
    service.reloadTls();
  } catch (error) {
    log.error({ err: error }, 'TLS certificate reload failed; the previous one stays in use');
  }
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    log.info({ signal }, 'shutting down');
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
