// Local smoke measure for issue 18 item 6 (not committed).
import { dropSchema, scratchSchema } from './flow.js';
import { runWebhookBench } from './webhooks.js';
const databaseUrl = 'postgresql://postgres@127.0.0.1:5432/test';
const schema = scratchSchema('bench');
const backlog = Number(process.env.BACKLOG ?? 1000);
const extra = JSON.parse(process.env.EXTRA_ENV ?? '{}');
try {
  const r = await runWebhookBench({
    label: 'PG', users: 5, warmupSeconds: 0, seconds: 1, properties: 500, backlog, timeoutMs: 120_000,
    endpoints: Number(process.env.ENDPOINTS ?? 1),
    serviceEnv: { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema, REDIS_URL: 'redis://127.0.0.1:6379', CHANNEL_ENV: 'production', BOOKING_SYNC_INTERVAL_MS: '0', SIMULATOR_SIZE: '500', ...extra },
    balance: 10n ** 13n,
  });
  const d = r.drain;
  console.log(JSON.stringify({ perSecond: d.perSecond, delivered: d.delivered, firstMs: d.firstMs, cpuUsPerDelivery: d.cpuUsPerDelivery, cores: d.cpuShare, pg: d.postgres, verified: r.receiver.verified, bad: r.receiver.badSignatures, dup: r.receiver.duplicates, problems: r.problems, stages: d.stages }, null, 1));
  console.log(r.sessions?.states.slice(0, 8));
} finally {
  await dropSchema(databaseUrl, schema);
}
