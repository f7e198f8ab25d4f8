/**
 * Child process of `npm run bench`: starts the channel service (embedded PGlite in a temporary
 * directory, the bundled inventory simulator in-process), creates a channel, and prints
 * `{"port":…,"apiKey":"…"}` as one JSON line on stdout. Stops on SIGTERM / SIGINT.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createService } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createChannel } from '../src/services/operator.js';

const dataDir = mkdtempSync(join(tmpdir(), 'channel-bench-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  PORT: '0',
  HOST: '127.0.0.1',
  CHANNEL_ENV: 'sandbox',
});

const service = await createService(config);
let stopping = false;
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    await service.close().catch((error: unknown) => console.error('serve-service: close failed', error));
    rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(code);
}
process.once('SIGTERM', () => void stop(0));
process.once('SIGINT', () => void stop(0));

try {
  const port = await service.listen(0);
  const channel = await createChannel(service.deps.db.prisma, { name: 'Bench Channel' });
  process.stdout.write(`${JSON.stringify({ port, apiKey: channel.api_key })}\n`);
} catch (error) {
  console.error('serve-service: start failed', error);
  await stop(1);
}
