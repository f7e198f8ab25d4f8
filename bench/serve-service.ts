/**
 * Child process of `npm run bench`: starts the channel service (by default embedded PGlite in a
 * temporary directory; the bundled inventory simulator in-process), creates a channel, and prints
 * `{"port":…,"apiKey":"…","channelId":"…"}` as one JSON line on stdout. Stops on SIGTERM / SIGINT.
 *
 * The service reads no variable of the caller's environment except, when given, the JSON object
 * BENCH_SERVICE_ENV, whose entries override the defaults below (run.ts passes DATABASE_URL,
 * DATABASE_SCHEMA, CHANNEL_ENV and BOOKING_SYNC_INTERVAL_MS for the PostgreSQL scenario), and
 * BENCH_CHANNEL_BALANCE, the channel's opening balance in KRW (default none).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createService } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createChannel } from '../src/services/operator.js';

const dataDir = mkdtempSync(join(tmpdir(), 'channel-bench-'));
const overrides = JSON.parse(process.env.BENCH_SERVICE_ENV || '{}') as Record<string, string>;
const balance = process.env.BENCH_CHANNEL_BALANCE ? BigInt(process.env.BENCH_CHANNEL_BALANCE) : undefined;
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  PORT: '0',
  HOST: '127.0.0.1',
  CHANNEL_ENV: 'sandbox',
  ...overrides,
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
  const channel = await createChannel(service.deps.db.prisma, { name: 'Bench Channel', balance });
  process.stdout.write(`${JSON.stringify({ port, apiKey: channel.api_key, channelId: channel.user_id })}\n`);
} catch (error) {
  console.error('serve-service: start failed', error);
  await stop(1);
}
