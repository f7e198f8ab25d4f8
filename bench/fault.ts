/**
 * The `fault` group of `npm run bench` (`npm run bench -- fault`): recovery after a kill -9 under
 * booking load (issue 18, item 8). On PostgreSQL, with the provider out of process:
 *   1. the service (bench/serve-service.ts, production, a scratch schema) takes booking flows from
 *      BENCH_FAULT_USERS users (availability → price check → book, bench/flow.ts bookOnce) for
 *      BENCH_FAULT_LOAD_SECONDS; the provider books after BENCH_FAULT_BOOK_DELAY_MS (a relay here
 *      delays each booking request), so bookings are in flight when
 *   2. the service is killed with SIGKILL;
 *   3. it is started again on the same schema, and the time from that restart (the spawn) to no
 *      booking left `processing` or `cancelling` is measured (polling PostgreSQL every 50 ms), with
 *      the time to its ready line beside it. Target: ≤ 10 s.
 * Then the ledger is checked: the balance is the sum of the channel's ledger entries and its
 * opening balance less the bookings made; every booking has one charge, every void one its void.
 * The booking sync runs every second in both runs (BOOKING_SYNC_INTERVAL_MS=1000), so a service
 * without the recovery (the baseline's) is measured by what it has: its sweeper's request lease.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startChild, startSimulator, stopChild, type Child, type SimulatorChild } from './children.js';
import { bookOnce, dropSchema, scratchSchema, withClient } from './flow.js';
import { endLine, fmt, loadAverage, runLine, type GroupObject } from './report.js';
import type { ServiceSource } from './service-dir.js';

export interface FaultOptions {
  source: ServiceSource;
  databaseUrl: string;
  users: number;
  loadSeconds: number;
  bookDelayMs: number;
  /** The longest the restarted service is waited for, s. */
  timeoutSeconds: number;
  simulatorSize: number;
}

export interface FaultResult {
  section: string;
  problems: string[];
  objects: GroupObject[];
}

const SCENARIO = 'recovery after kill -9 under booking load';
const TARGET_MS = 10_000;
const BALANCE = 10n ** 13n;

type ServiceInfo = { port: number; apiKey: string; channelId: string };

/** A relay to the provider that holds each booking request (POST /bookings) `delayMs` before passing it on. */
async function delayingRelay(target: string, delayMs: number): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const booking = req.method === 'POST' && req.url === '/bookings';
      setTimeout(
        () => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'connection' && k !== 'content-length') headers[k] = v;
          fetch(`${target}${req.url}`, { method: req.method, headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) })
            .then(async (answer) => {
              res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
              res.end(Buffer.from(await answer.arrayBuffer()));
            })
            .catch(() => res.destroy());
        },
        booking ? delayMs : 0,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function inFlight(url: string, schema: string): Promise<{ processing: number; cancelling: number }> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ processing: string; cancelling: string }>(
      `SELECT count(*) FILTER (WHERE status = 'processing')::text AS processing, count(*) FILTER (WHERE status = 'cancelling')::text AS cancelling FROM "${schema}".bookings`,
    );
    return { processing: Number(rows[0]!.processing), cancelling: Number(rows[0]!.cancelling) };
  });
}

async function statuses(url: string, schema: string, channelId: string): Promise<Record<string, number>> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ status: string; n: string }>(`SELECT status::text, count(*)::text AS n FROM "${schema}".bookings WHERE channel_id = $1 GROUP BY status`, [channelId]);
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  });
}

/** The ledger of the loaded channel once everything is settled. */
async function ledgerProblems(url: string, schema: string, channelId: string): Promise<string[]> {
  return withClient(url, async (c) => {
    const one = async (sql: string) => (await c.query<Record<string, string>>(sql.replaceAll('$schema', `"${schema}"`), [channelId])).rows[0]!;
    const b = await one(`SELECT
        coalesce(sum(total_amount) FILTER (WHERE status IN ('confirmed', 'pending')), 0)::text AS live_amount,
        count(*)::text AS rows,
        count(*) FILTER (WHERE status = 'void')::text AS void
      FROM $schema.bookings WHERE channel_id = $1`);
    const l = await one(`SELECT
        coalesce(sum(amount), 0)::text AS total,
        count(*) FILTER (WHERE kind = 'booking_charge')::text AS charges,
        count(*) FILTER (WHERE kind = 'booking_void')::text AS voids,
        (SELECT balance FROM $schema.channels WHERE id = $1)::text AS balance
      FROM $schema.ledger_entries WHERE channel_id = $1`);
    const problems: string[] = [];
    const expect = (what: string, got: string | bigint, want: string | bigint) => {
      if (String(got) !== String(want)) problems.push(`${what}: ${got}, expected ${want}`);
    };
    expect('sum of ledger entries vs balance', l.total!, l.balance!);
    expect('balance', l.balance!, BALANCE - BigInt(b.live_amount!));
    expect('charge entries', l.charges!, b.rows!);
    expect('void entries', l.voids!, b.void!);
    return problems;
  });
}

export async function faultGroup(o: FaultOptions): Promise<FaultResult> {
  const head = runLine('fault', o.source);
  const loadStart = loadAverage();
  const schema = scratchSchema('fault');
  const env = (upstream: string) => ({
    BENCH_SERVICE_ENV: JSON.stringify({
      DATABASE_URL: o.databaseUrl,
      DATABASE_SCHEMA: schema,
      CHANNEL_ENV: 'production',
      BOOKING_SYNC_INTERVAL_MS: '1000',
      SIMULATOR_SIZE: String(o.simulatorSize),
      UPSTREAM_URL: upstream,
    }),
    BENCH_CHANNEL_BALANCE: String(BALANCE),
  });
  let simulator: SimulatorChild | undefined;
  let relay: { url: string; server: Server } | undefined;
  let restarted: Child<ServiceInfo> | undefined;
  const problems: string[] = [];
  try {
    simulator = await startSimulator(o.simulatorSize);
    relay = await delayingRelay(simulator.url, o.bookDelayMs);
    const first = await startChild<ServiceInfo>('serve-service.ts', { env: env(relay.url) });

    // Booking load until the kill; a user's flow cut short by it simply ends.
    let killed = false;
    let booked = 0;
    let failed = 0;
    const users = Array.from({ length: o.users }, async (_, user) => {
      let flow = user * 1_000;
      while (!killed) {
        try {
          const made = await bookOnce({ port: first.info.port, apiKey: first.info.apiKey, flow, properties: o.simulatorSize });
          booked++;
          flow = made.nextFlow;
        } catch {
          if (!killed) failed++;
          flow += 20;
        }
      }
    });
    await new Promise((r) => setTimeout(r, o.loadSeconds * 1_000));
    killed = true;
    first.child.kill('SIGKILL');
    await new Promise((r) => (first.child.exitCode !== null || first.child.signalCode !== null ? r(null) : first.child.once('exit', r)));
    await Promise.all(users);
    const atKill = await inFlight(o.databaseUrl, schema);
    process.stderr.write(`  killed after ${o.loadSeconds} s: ${booked} bookings answered, ${atKill.processing} processing and ${atKill.cancelling} cancelling left\n`);

    // Restart, and watch the rows from the spawn on.
    const t0 = performance.now();
    let readyMs: number | undefined;
    const starting = startChild<ServiceInfo>('serve-service.ts', { env: env(relay.url) }).then((child) => {
      readyMs = performance.now() - t0;
      restarted = child;
      return child;
    });
    let recoveredMs: number | undefined;
    const deadline = t0 + o.timeoutSeconds * 1_000;
    while (performance.now() < deadline) {
      const left = await inFlight(o.databaseUrl, schema).catch(() => null);
      if (left && left.processing + left.cancelling === 0 && (readyMs !== undefined || atKill.processing + atKill.cancelling > 0)) {
        recoveredMs = performance.now() - t0;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await starting;
    if (recoveredMs === undefined) problems.push(`rows still in flight ${o.timeoutSeconds} s after the restart`);
    else if (recoveredMs > TARGET_MS) problems.push(`recovery took ${fmt(recoveredMs / 1000, 1)} s (target ≤ ${TARGET_MS / 1000} s)`);
    if (atKill.processing + atKill.cancelling === 0) problems.push('nothing was in flight at the kill (raise BENCH_FAULT_BOOK_DELAY_MS or BENCH_FAULT_USERS)');
    const settledAs = await statuses(o.databaseUrl, schema, first.info.channelId);
    await stopChild(restarted!.child);
    restarted = undefined;
    const ledger = await ledgerProblems(o.databaseUrl, schema, first.info.channelId);
    problems.push(...ledger.map((p) => `ledger: ${p}`));
    const loadEnd = loadAverage();

    const s = (ms: number | undefined) => (ms === undefined ? 'n/a' : `${fmt(ms / 1000, 2)} s`);
    process.stderr.write(`  restart → ready ${s(readyMs)}; restart → nothing in flight ${s(recoveredMs)}\n`);
    const section = [
      '### Recovery after kill -9 under booking load (PostgreSQL, provider out of process)',
      '',
      head,
      '',
      `${o.users} users book (availability → price check → book) for ${o.loadSeconds} s; the provider (\`npm run simulator\`) takes ` +
        `${o.bookDelayMs} ms to book (a relay in the bench delays each booking request). The service is killed with SIGKILL, started again on ` +
        'the same schema, and PostgreSQL is polled every 50 ms for bookings left `processing` or `cancelling`. The booking sync runs every second.',
      '',
      '| Bookings answered before the kill | Failed flows | In flight at the kill | Restart → ready | Restart → nothing in flight | Target | Statuses after | Ledger |',
      '|---:|---:|---|---:|---:|---:|---|---|',
      `| ${fmt(booked)} | ${fmt(failed)} | ${atKill.processing} processing, ${atKill.cancelling} cancelling | ${s(readyMs)} | ${s(recoveredMs)} | ≤ ${TARGET_MS / 1000} s | ` +
        `${Object.entries(settledAs).map(([k, v]) => `${k} ${v}`).join(', ')} | ${ledger.length ? ledger.join('; ') : 'holds'} |`,
      ...(problems.length ? ['', `**Warning:** ${problems.join('; ')}.`] : []),
      '',
      endLine(),
    ].join('\n');
    const object: GroupObject = {
      scenario: SCENARIO,
      target: 'service on PostgreSQL',
      unit: 'restart',
      perSecond: null,
      latencyMs: null,
      cpuUsPerUnit: { process: null },
      ratios: {},
      count: atKill.processing + atKill.cancelling,
      failures: problems.length,
      details: { recoveredMs: recoveredMs ?? null, readyMs: readyMs ?? null, targetMs: TARGET_MS, inFlightAtKill: atKill, bookedBeforeKill: booked, failedFlows: failed, statusesAfter: settledAs, ledgerHolds: ledger.length === 0 },
      service: { commit: o.source.commit, dirty: o.source.dirty, via: o.source.via, nodeEnv: o.source.nodeEnv },
      loadAverage: { start: loadStart, end: loadEnd },
      settings: { users: o.users, loadSeconds: o.loadSeconds, bookDelayMs: o.bookDelayMs, timeoutSeconds: o.timeoutSeconds, syncIntervalMs: 1000 },
    };
    return { section, problems, objects: [object] };
  } finally {
    if (restarted) await stopChild(restarted.child);
    if (relay) {
      relay.server.closeAllConnections();
      await new Promise((r) => relay!.server.close(r));
    }
    if (simulator) await stopChild(simulator.child);
    await dropSchema(o.databaseUrl, schema);
  }
}
