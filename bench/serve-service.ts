/**
 * Child process of `npm run bench`: starts the channel service (by default embedded PGlite in a
 * temporary directory; the bundled inventory simulator in-process), creates a channel (with rate
 * limits the load never reaches), and prints
 * `{"port":…,"apiKey":"…","channelId":"…","simulatorUrl":…}` as one JSON line on stdout (simulatorUrl:
 * the in-process simulator's address, null with UPSTREAM_URL). Stops on SIGTERM / SIGINT.
 *
 * The service's code comes from BENCH_SERVICE_DIR when set (another checkout, with its own
 * node_modules; bench/service-dir.ts), else from this checkout: src/app.ts, src/config.ts and
 * src/services/channels/index.ts are imported from there, and this process runs there.
 *
 * The service reads no variable of the caller's environment except, when given, the JSON object
 * BENCH_SERVICE_ENV, whose entries override the defaults below (run.ts passes DATABASE_URL,
 * DATABASE_SCHEMA, CHANNEL_ENV and BOOKING_SYNC_INTERVAL_MS for the PostgreSQL scenario), and
 * BENCH_CHANNEL_BALANCE, the channel's opening balance in KRW (default none).
 *
 * When started with an IPC channel (bench/children.ts), it answers requests of the orchestrator:
 * - `memory`: process.memoryUsage() after two full collections (when node runs with --expose-gc);
 * - `outbox` { count }: writes `count` outbox events in one INSERT … SELECT (one statement, one
 *   commit, so one NOTIFY), copies of the first 200 events already in the outbox with new ids and
 *   occurred_at = clock_timestamp(); answers { inserted, committedAt } (wall clock, ms, taken when
 *   the statement has returned, i.e. after the commit);
 * - `outboxCount`: how many outbox events there are, and how many are not yet published;
 * - `deliveries`: webhook deliveries by status, and attempts made;
 * - `stages` { since, until }: for the deliveries of events that occurred in [since, until) (wall
 *   clock, ms), p50/p99 in ms of two stages of their way out: occurred_at → fanned out (the event's
 *   published_at, the clock read when the fan-out that wrote its deliveries began), and fanned out →
 *   the first attempt started (started_at);
 * - `profile` { action: 'start' | 'stop', path }: a CPU profile (node:inspector) of what the
 *   service does between start and stop, written to `path` as a .cpuprofile (BENCH_PROFILE_DIR);
 * - `heapSnapshot` { path }: v8.writeHeapSnapshot(path) (diagnostics; large and slow on a big heap);
 * - `cpu`: process.cpuUsage() (µs of user and system CPU time since start) and the wall clock (ms);
 * - `gc` { action: 'start' | 'stop' }: the garbage collections between start and stop (v8.GCProfiler):
 *   young (scavenges) and full ones, their count and time in ms, and the bytes the young ones moved
 *   into the old generation (`promoted`: what a request leaves there, bench/README.md "Issue 20");
 * - `loopDelay` { reset }: the event loop's delay (perf_hooks.monitorEventLoopDelay, 10 ms
 *   resolution) since the last reset: { mean, p99, max } in ms; `reset: true` starts over (the
 *   monitor starts with the first such request).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { GCProfiler, writeHeapSnapshot } from 'node:v8';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { answerRequests, cpuReading, serviceDir, wallNow, type GcSummary } from './children.js';

/** A module of the measured service's checkout (typed as this checkout's). */
function serviceModule<T>(path: string): Promise<T> {
  return import(pathToFileURL(join(serviceDir(), path)).href) as Promise<T>;
}
const { createService } = await serviceModule<typeof import('../src/app.js')>('src/app.ts');
const { loadConfig } = await serviceModule<typeof import('../src/config.js')>('src/config.ts');
const { createChannel } = await serviceModule<typeof import('../src/services/channels/index.js')>('src/services/channels/index.ts');

const dataDir = mkdtempSync(join(tmpdir(), 'channel-bench-'));
const overrides = JSON.parse(process.env.BENCH_SERVICE_ENV || '{}') as Record<string, string>;
const balance = process.env.BENCH_CHANNEL_BALANCE ? BigInt(process.env.BENCH_CHANNEL_BALANCE) : undefined;
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  PORT: '0',
  HOST: '127.0.0.1',
  CHANNEL_ENV: 'sandbox',
  // The load generators speak plain HTTP on loopback; production would refuse it (403 HTTPS_REQUIRED).
  REQUIRE_HTTPS: 'false',
  // Production needs its public origin (the links it hands out start with it).
  PUBLIC_BASE_URL: 'https://channel.example',
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
  // The bench measures the service, not the channel's request rate (60 or 600 a minute): the
  // limiter still charges every request, against a limit the load never reaches.
  await service.deps.db.prisma.channel.update({
    where: { id: channel.user_id },
    data: { rateLimitSandbox: 1_000_000_000, rateLimitProduction: 1_000_000_000 },
  });
  answerRequests((message) => handle(message));
  // The bundled simulator's address when it runs in this process (its /_control/stats, in sandbox).
  const simulatorUrl = (service as { simulatorUrl?: string | null }).simulatorUrl ?? null;
  process.stdout.write(`${JSON.stringify({ port, apiKey: channel.api_key, channelId: channel.user_id, simulatorUrl })}\n`);
} catch (error) {
  console.error('serve-service: start failed', error);
  await stop(1);
}

let inspector: Session | undefined;
let gcProfiler: GCProfiler | undefined;

interface GCStatistic {
  gcType: string;
  cost: number;
  beforeGC: { heapSpaceStatistics: { spaceName: string; spaceUsedSize: number }[] };
  afterGC: { heapSpaceStatistics: { spaceName: string; spaceUsedSize: number }[] };
}

/** Bytes in the old generation (every space but the young ones) of one side of a collection. */
function oldGeneration(side: GCStatistic['beforeGC']): number {
  return side.heapSpaceStatistics.filter((space) => !space.spaceName.startsWith('new')).reduce((sum, space) => sum + space.spaceUsedSize, 0);
}

/** Young and full collections, their count and time (ms), and what the young ones promoted. */
function gcSummary(statistics: GCStatistic[]): GcSummary {
  const summary: GcSummary = { scavenges: 0, scavengeMs: 0, full: 0, fullMs: 0, promoted: 0 };
  for (const gc of statistics) {
    if (gc.gcType === 'Scavenge' || gc.gcType === 'MinorMarkCompact') {
      summary.scavenges++;
      summary.scavengeMs += gc.cost / 1000;
      summary.promoted += Math.max(0, oldGeneration(gc.afterGC) - oldGeneration(gc.beforeGC));
    } else {
      summary.full++;
      summary.fullMs += gc.cost / 1000;
    }
  }
  return summary;
}
const gc = (globalThis as { gc?: () => void }).gc;
// Enabled on the first `loopDelay` request, so the scenarios that never ask are not measured by it.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });

async function handle(message: Record<string, unknown> & { cmd: string }): Promise<unknown> {
  const prisma = service.deps.db.prisma;
  switch (message.cmd) {
    case 'memory': {
      if (gc) {
        gc();
        await new Promise((resolve) => setImmediate(resolve));
        gc();
      }
      return { ...process.memoryUsage(), collected: Boolean(gc) };
    }
    case 'outbox': {
      const count = Number(message.count);
      if (!Number.isInteger(count) || count < 1) throw new Error('count must be a positive integer');
      const inserted = await prisma.$executeRawUnsafe(
        `WITH src AS (
           SELECT channel_id, booking_id, type, payload, row_number() OVER (ORDER BY occurred_at, id) - 1 AS k
           FROM outbox_events ORDER BY occurred_at, id LIMIT 200),
         m AS (SELECT count(*) AS n FROM src)
         INSERT INTO outbox_events (id, channel_id, booking_id, type, payload, occurred_at)
         SELECT gen_random_uuid(), src.channel_id, src.booking_id, src.type, src.payload, clock_timestamp()
         FROM generate_series(0, $1::int - 1) AS g CROSS JOIN m JOIN src ON src.k = g % m.n`,
        count,
      );
      const committedAt = wallNow();
      if (inserted !== count) throw new Error(`inserted ${inserted} outbox events, not ${count} (is the outbox empty?)`);
      return { inserted, committedAt };
    }
    case 'outboxCount': {
      const [row] = await prisma.$queryRawUnsafe<{ total: number; unpublished: number }[]>(
        'SELECT count(*)::int AS total, (count(*) FILTER (WHERE published_at IS NULL))::int AS unpublished FROM outbox_events',
      );
      return row;
    }
    case 'deliveries': {
      const rows = await prisma.$queryRawUnsafe<{ status: string; n: number; attempts: number }[]>(
        'SELECT status, count(*)::int AS n, coalesce(sum(attempts), 0)::int AS attempts FROM webhook_deliveries GROUP BY status ORDER BY status',
      );
      return rows;
    }
    case 'profile': {
      if (message.action === 'start') {
        inspector ??= new Session();
        inspector.connect();
        await inspector.post('Profiler.enable');
        await inspector.post('Profiler.setSamplingInterval', { interval: 200 });
        await inspector.post('Profiler.start');
        return true;
      }
      if (!inspector) throw new Error('no profile started');
      const { profile } = await inspector.post('Profiler.stop');
      inspector.disconnect();
      writeFileSync(String(message.path), JSON.stringify(profile));
      return message.path;
    }
    case 'stages': {
      const [row] = await prisma.$queryRawUnsafe<Record<string, number | null>[]>(
        `WITH s AS (
           SELECT extract(epoch FROM o.published_at - o.occurred_at) * 1000 AS fan_out,
                  extract(epoch FROM a.started_at - o.published_at) * 1000 AS to_send
           FROM webhook_deliveries d
           JOIN outbox_events o ON o.id = d.event_id
           JOIN webhook_attempts a ON a.delivery_id = d.id AND a.attempt = 1
           WHERE o.occurred_at >= $1::timestamptz AND o.occurred_at < $2::timestamptz)
         SELECT count(*)::int AS n,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY fan_out) AS fan_out_p50,
           percentile_cont(0.99) WITHIN GROUP (ORDER BY fan_out) AS fan_out_p99,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY to_send) AS to_send_p50,
           percentile_cont(0.99) WITHIN GROUP (ORDER BY to_send) AS to_send_p99
         FROM s`,
        new Date(Number(message.since)).toISOString(),
        new Date(Number(message.until)).toISOString(),
      );
      return row;
    }
    case 'heapSnapshot':
      return writeHeapSnapshot(String(message.path));
    case 'cpu':
      return cpuReading();
    case 'gc': {
      if (message.action === 'start') {
        gcProfiler = new GCProfiler();
        gcProfiler.start();
        return true;
      }
      if (!gcProfiler) throw new Error('no gc profile started');
      const profile = gcProfiler.stop();
      gcProfiler = undefined;
      return gcSummary((profile?.statistics ?? []) as unknown as GCStatistic[]);
    }
    case 'loopDelay': {
      loopDelay.enable();
      const value = { mean: loopDelay.mean / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 };
      if (message.reset) loopDelay.reset();
      return value;
    }
    default:
      throw new Error(`unknown request ${message.cmd}`);
  }
}
