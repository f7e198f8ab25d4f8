/**
 * `npm run bench`: measures the channel service, each figure beside its twins in the same run,
 * and writes the figures into bench/README.md (one block per group) and bench/results.json (one
 * object per scenario and target).
 *
 * Groups (`npm run bench -- <group…>` runs some; all six when none is named):
 * - http: the REST property read, GraphQL property + room types and the availability-search mix
 *   (provider in process and out of process), each beside its plain, Hono (and Yoga) twins
 *   (bench/http.ts);
 * - flow: complete v1 booking flows on PostgreSQL (provider in process, then out of process),
 *   beside pgbench's TPC-B (bench/flow.ts);
 * - webhooks: webhook events end to end (bench/webhooks.ts);
 * - subscriptions: graphql-ws subscribers on one instance (bench/subscriptions.ts);
 * - fault: the service killed with SIGKILL under booking load on PostgreSQL, restarted, and the time
 *   until no booking is left in flight (bench/fault.ts);
 * - content: the content file (JSON and CSV) of BENCH_CONTENT_SIZE properties (default 100,000,
 *   provider out of process) downloaded while the service's RSS is watched (bench/content.ts).
 *
 * Every child process (service, twins, simulator, receiver, subscribers) is started and stopped
 * by bench/children.ts; the load generators run here, so they never share an event loop with the
 * server they measure. Settings (environment): see bench/README.md.
 */
import { ask, stopAllChildren, startChild, startSimulator, stopChild, type SimulatorChild } from './children.js';
import { postgresCpu, treeCpu, type PostgresCpu } from './cpu.js';
import { contentGroup } from './content.js';
import { faultGroup } from './fault.js';
import { checkLedger, dropSchema, dropScratchSchemas, runFlows, runPgbench, scratchSchema, serverVersion, STEPS, type FlowResult, type LedgerCheck, type PgbenchResult } from './flow.js';
import { HTTP_SCENARIOS, httpGroup, type HttpScenario } from './http.js';
import { complete, endLine, fmt, GROUPS, loadAverage, micros, ratio, RUN, runLine, writeReadme, writeResults, baselineOf, type Group, type GroupObject } from './report.js';
import { resolveServiceSource, type ServiceSource } from './service-dir.js';
import { runSubscriptionBench, subscriptionSection, type SubscriptionBenchResult } from './subscriptions.js';
import { cpuUsed, pgPer, runWebhookBench, webhookSection, type Cpu, type WebhookBenchResult } from './webhooks.js';

function positiveInt(name: string, fallback: number, allowZero = false): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new Error(`${name} must be a ${allowZero ? 'non-negative' : 'positive'} integer, got "${raw}"`);
  }
  return value;
}

const duration = positiveInt('BENCH_DURATION', 10);
const connections = positiveInt('BENCH_CONNECTIONS', 50);
const warmup = positiveInt('BENCH_WARMUP', 2, true);
const flowUsers = positiveInt('BENCH_FLOW_USERS', 20);
const pgbenchScale = positiveInt('BENCH_PGBENCH_SCALE', 10);
const databaseUrl = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const webhookSeconds = positiveInt('BENCH_WEBHOOK_SECONDS', 5);
const webhookBacklog = positiveInt('BENCH_WEBHOOK_BACKLOG', 1000);
const subscribers = positiveInt('BENCH_SUBSCRIBERS', 5000);
/** The large subscription run (in-process bus): this many subscribers on one instance; 0 skips it. */
const subscribersLarge = positiveInt('BENCH_SUBSCRIBERS_LARGE', 15000, true);
const subscriptionBookings = positiveInt('BENCH_SUBSCRIPTION_BOOKINGS', 5);
const faultUsers = positiveInt('BENCH_FAULT_USERS', 20);
const faultLoadSeconds = positiveInt('BENCH_FAULT_LOAD_SECONDS', 5);
const faultBookDelayMs = positiveInt('BENCH_FAULT_BOOK_DELAY_MS', 200, true);
const faultTimeoutSeconds = positiveInt('BENCH_FAULT_TIMEOUT_SECONDS', 240);
/** The content group's catalog: the provider's SIMULATOR_SIZE (at most 100,000). */
const contentSize = positiveInt('BENCH_CONTENT_SIZE', 100_000);
if (contentSize > 100_000) throw new Error(`BENCH_CONTENT_SIZE must be at most 100000 (the simulator's largest catalog), got ${contentSize}`);
/** BENCH_HTTP_SCENARIOS: some of rest, graphql, search (comma-separated); all by default. */
const httpOnly: readonly HttpScenario[] = (() => {
  const raw = process.env.BENCH_HTTP_SCENARIOS;
  if (!raw) return HTTP_SCENARIOS;
  const names = raw.split(',').map((n) => n.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(HTTP_SCENARIOS as readonly string[]).includes(n));
  if (unknown.length || !names.length) throw new Error(`BENCH_HTTP_SCENARIOS: choose among ${HTTP_SCENARIOS.join(', ')}, got "${raw}"`);
  return names as HttpScenario[];
})();
/** The simulator's catalog size (its default); the flows book properties 1..this. */
const SIMULATOR_SIZE = 500;
/** Opening balance of the flow scenario's channel, KRW: far more than any run can spend. */
const FLOW_BALANCE = 10n ** 13n;

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAllChildren()
      .then(() => dropScratchSchemas(databaseUrl))
      .finally(() => process.exit(130));
  });
}

interface GroupResult {
  section: string;
  problems: string[];
  objects: GroupObject[];
}

/** { baseline: value ÷ the baseline run's } when results.json has a baseline for it. */
function vsBaseline(scenario: string, target: string, value: number): Record<string, number> {
  const base = baselineOf(scenario, target);
  return base ? { baseline: value / base } : {};
}

function service(source: ServiceSource): NonNullable<GroupObject['service']> {
  return { commit: source.commit, dirty: source.dirty, via: source.via, nodeEnv: source.nodeEnv };
}

// ---------------------------------------------------------------------------------------------
// flow: v1 booking flows on PostgreSQL, provider in process and out of process, beside pgbench

function ms(value: number): string {
  return fmt(value, 1);
}

function counts(map: Map<string, number>): string {
  return [...map].map(([key, n]) => `${key}: ${n}`).join(', ');
}

function failureCount(map: Map<string, number>): number {
  let n = 0;
  for (const v of map.values()) n += v;
  return n;
}

const STEP_LABELS = {
  availability: 'availability `GET /channel/v1/search/availability/{id}`',
  'price check': 'price check `GET /channel/v1/search/price-check`',
  book: 'book `POST /channel/v1/bookings`',
} as const;

interface FlowRun {
  label: string;
  flow: FlowResult;
  ledger: LedgerCheck;
  /** CPU µs over the measured window: the service, the out-of-process provider, PostgreSQL. */
  cpu: { service: number; provider: number | null; postgres: PostgresCpu };
  load: { start: number[]; end: number[] };
}

/** One run of the booking flow against a fresh service (and a fresh simulator when out of process). */
async function flowRun(label: string, outOfProcess: boolean): Promise<FlowRun> {
  const schema = scratchSchema('bench');
  const applicationName = `bench_flow_${process.pid}_${Date.now()}`;
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', applicationName);
  let simulator: SimulatorChild | undefined;
  try {
    if (outOfProcess) simulator = await startSimulator(SIMULATOR_SIZE);
    const pgService = await startChild<{ port: number; apiKey: string; channelId: string }>('serve-service.ts', {
      env: {
        BENCH_SERVICE_ENV: JSON.stringify({
          DATABASE_URL: url.toString(),
          DATABASE_SCHEMA: schema,
          CHANNEL_ENV: 'production',
          BOOKING_SYNC_INTERVAL_MS: '0',
          SIMULATOR_SIZE: String(SIMULATOR_SIZE),
          ...(simulator ? { UPSTREAM_URL: simulator.url } : {}),
        }),
        BENCH_CHANNEL_BALANCE: String(FLOW_BALANCE),
      },
    });
    const pg = postgresCpu(databaseUrl, applicationName);
    let cpu0: Cpu | undefined;
    let cpu1: Cpu | undefined;
    let provider0: number | null = null;
    let provider1: number | null = null;
    let postgres: PostgresCpu | undefined;
    let loadStart: number[] = [];
    let flow: FlowResult;
    try {
      flow = await runFlows({
        port: pgService.info.port,
        apiKey: pgService.info.apiKey,
        users: flowUsers,
        warmupSeconds: warmup,
        seconds: duration,
        properties: SIMULATOR_SIZE,
        beforeMeasured: async () => {
          loadStart = loadAverage();
          await pg.start();
          provider0 = simulator ? treeCpu(simulator.pid) : null;
          cpu0 = await ask<Cpu>(pgService.child, { cmd: 'cpu' });
        },
        afterMeasured: async () => {
          cpu1 = await ask<Cpu>(pgService.child, { cmd: 'cpu' });
          provider1 = simulator ? treeCpu(simulator.pid) : null;
          postgres = await pg.stop();
        },
      });
    } finally {
      await stopChild(pgService.child);
    }
    const ledger = await checkLedger(databaseUrl, schema, pgService.info.channelId, FLOW_BALANCE, flow.booked);
    const stepFailures = STEPS.map((step) => counts(flow.steps[step].failures)).filter(Boolean);
    const perFlow = (v: number | null) => (v === null ? 'n/a' : micros(v / Math.max(1, flow.flow.count)));
    const run: FlowRun = {
      label,
      flow,
      ledger,
      cpu: {
        service: cpuUsed(cpu0!, cpu1!),
        provider: provider0 !== null && provider1 !== null ? provider1 - provider0 : null,
        postgres: postgres!,
      },
      load: { start: loadStart, end: loadAverage() },
    };
    process.stderr.write(
      `  ${fmt(flow.flowsPerSecond, 1)} flows/s  p50 ${ms(flow.flow.p50)} ms  p99 ${ms(flow.flow.p99)} ms  book p50 ${ms(flow.steps.book.latency.p50)} ms` +
        `  CPU µs/flow: service ${perFlow(run.cpu.service)}, provider ${perFlow(run.cpu.provider)}, PostgreSQL ${perFlow(run.cpu.postgres.sessions)} (all ${perFlow(run.cpu.postgres.server)})` +
        `  failures ${stepFailures.join('; ') || 0}\n`,
    );
    return run;
  } finally {
    if (simulator) await stopChild(simulator.child);
    await dropSchema(databaseUrl, schema);
  }
}

function flowProblems(r: FlowRun): string[] {
  const f = r.flow;
  const stepFailures = STEPS.map((step) => counts(f.steps[step].failures)).filter(Boolean);
  return [
    ...(stepFailures.length ? [`booking-flow steps failed (${stepFailures.join('; ')})`] : []),
    ...(f.completed === 0 ? ['no booking flow completed'] : []),
    ...(f.amountMismatches ? [`${f.amountMismatches} bookings charged another amount than the price check's`] : []),
    ...(r.ledger.ok ? [] : [`the ledger check failed (${r.ledger.problems.join('; ')})`]),
  ].map((p) => `${r.label}: ${p}`);
}

function perFlowCpu(r: FlowRun): { service: number; provider: number | null; postgresSessions: number | null; postgresServer: number | null } {
  const n = Math.max(1, r.flow.flow.count);
  return {
    service: r.cpu.service / n,
    provider: r.cpu.provider === null ? null : r.cpu.provider / n,
    postgresSessions: r.cpu.postgres.sessions === null ? null : r.cpu.postgres.sessions / n,
    postgresServer: r.cpu.postgres.server === null ? null : r.cpu.postgres.server / n,
  };
}

/** The PostgreSQL section: the flows beside pgbench, their CPU, their steps, and what was counted. */
function flowSection(runs: FlowRun[], b: PgbenchResult, pgVersion: string): string {
  const first = runs[0]!.flow;
  const lines = [
    `PostgreSQL ${pgVersion} on 127.0.0.1, database \`${new URL(databaseUrl).pathname.slice(1)}\`; ` +
      `${first.users} virtual users / pgbench clients, ${first.seconds} s each (after ${warmup} s warm-up).`,
    '',
    '| Workload | Clients | Completed | Per second | vs pgbench tps | vs baseline | Latency avg ms | p50 ms | p99 ms | Failed |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...runs.map((r) => {
      const f = r.flow;
      const failed = STEPS.reduce((n, step) => n + failureCount(f.steps[step].failures), 0);
      const base = baselineOf(FLOW_SCENARIO, r.label);
      return (
        `| v1 booking flow (availability → price check → book), ${r.label} | ${f.users} | ${fmt(f.completed)} flows | ${fmt(f.flowsPerSecond, 1)} flows/s | ` +
        `${ratio(f.flowsPerSecond / b.tps)} | ${ratio(base ? f.flowsPerSecond / base : undefined)} | ${ms(f.flow.avg)} | ${ms(f.flow.p50)} | ${ms(f.flow.p99)} | ${failed} |`
      );
    }),
    `| pgbench TPC-B (scale ${b.scale}, \`-M prepared -j ${b.threads}\`) | ${b.clients} | ${fmt(b.processed)} tx | ` +
      `${fmt(b.tps)} tps | | | ${ms(b.latencyAverage)} | ${ms(b.latency.p50)} | ${ms(b.latency.p99)} | ${b.failed} |`,
    '',
    'CPU per completed flow (µs) over the measured window (from its start until the last flow under way has ended, ÷ the flows completed in it): ' +
      "the service's `process.cpuUsage()`; the provider's (`npm run simulator`'s process tree, from /proc; with the provider in process its work is in the service's figure); " +
      "PostgreSQL's, from /proc: the backends of the service's sessions (pg_stat_activity by application_name), and every PostgreSQL process of the machine " +
      '(WAL writer, checkpointer, and anyone else\'s sessions included).',
    '',
    '| Run | service CPU µs/flow | provider CPU µs/flow | PostgreSQL, service\'s sessions, µs/flow | PostgreSQL, all processes, µs/flow | sessions seen |',
    '|---|---:|---:|---:|---:|---:|',
    ...runs.map((r) => {
      const c = perFlowCpu(r);
      const pg = r.cpu.postgres;
      return (
        `| ${r.label} | ${micros(c.service)} | ${r.label.includes('out of process') ? micros(c.provider) : '(in the service)'} | ${micros(c.postgresSessions)} | ${micros(c.postgresServer)} | ` +
        `${pg.backends}${pg.gone ? ` (${pg.gone} ended during the window)` : ''}${pg.note ? ` — ${pg.note}` : ''} |`
      );
    }),
    '',
    `In the time the service completes one booking flow (${runs.map((r) => `${r.label}`).join(' / ')}), PostgreSQL alone completes about ` +
      `${runs.map((r) => fmt(r.flow.flowsPerSecond > 0 ? b.tps / r.flow.flowsPerSecond : 0)).join(' / ')} TPC-B ` +
      'transactions. A booking flow is three HTTP requests to the service, three provider calls (search, ' +
      'price check, booking) and two database statements, each committed on its own (no BEGIN/COMMIT): the booking row with the conditional debit of the ' +
      "channel's balance and its ledger entry in one, then the move to confirmed with its outbox events in one (since issue 18, item 7; " +
      'before, nine statements in two transactions); every debit of the run is on the same channel row. A TPC-B ' +
      'transaction is five statements (three updates, a select, an insert) in one transaction, spread over many rows.',
    '',
    '| Run | Step of the flow | Requests | avg ms | p50 ms | p99 ms | Failed |',
    '|---|---|---:|---:|---:|---:|---|',
    ...runs.flatMap((r) => [
      ...STEPS.map((step) => {
        const s = r.flow.steps[step];
        const failed = failureCount(s.failures);
        return `| ${r.label} | ${STEP_LABELS[step]} | ${fmt(s.latency.count)} | ${ms(s.latency.avg)} | ${ms(s.latency.p50)} | ${ms(s.latency.p99)} | ${failed ? counts(s.failures) : '0'} |`;
      }),
      `| ${r.label} | whole flow (completed ones) | ${fmt(r.flow.flow.count)} | ${ms(r.flow.flow.avg)} | ${ms(r.flow.flow.p50)} | ${ms(r.flow.flow.p99)} | |`,
    ]),
    '',
    ...runs.flatMap((r) => {
      const f = r.flow;
      const conflicts = failureCount(f.bookConflicts);
      return [
        `${r.label}: flows started in the measured window: ${fmt(f.started)}; completed (201) within it: ${fmt(f.completed)}. ` +
          `Not counted as completed: nothing bookable in the search ${f.nothingBookable}; ` +
          `price check sold_out ${f.priceCheck.sold_out}; booking 409 ${conflicts ? counts(f.bookConflicts) : '0'}. ` +
          `Price checks matched ${f.priceCheck.matched}, price_changed ${f.priceCheck.price_changed}. ` +
          `Bookings made: ${counts(f.bookingStatuses) || 'none'}` +
          `${f.amountMismatches ? `; **${f.amountMismatches} with a totalAmount other than the price check's**` : ''}. ` +
          (r.ledger.ok
            ? `Ledger check after the run: ${fmt(r.ledger.bookings)} bookings (warm-up included) in the database, each charged once; ` +
              'balance = opening balance − their total amounts = sum of the ledger entries.'
            : `**Ledger check failed:** ${r.ledger.problems.join('; ')}.`),
      ];
    }),
  ];
  return lines.join('\n');
}

const FLOW_SCENARIO = 'v1 booking flow on PostgreSQL';

async function flowGroup(source: ServiceSource): Promise<GroupResult> {
  const head = runLine('flow', source);
  const pgVersion = await serverVersion(databaseUrl);
  const runs: FlowRun[] = [];
  for (const [label, outOfProcess] of [
    ['provider in process', false],
    ['provider out of process', true],
  ] as const) {
    process.stderr.write(`v1 booking flow on PostgreSQL ${pgVersion}, ${label}: ${flowUsers} virtual users\n`);
    runs.push(await flowRun(label, outOfProcess));
  }

  process.stderr.write(`pgbench TPC-B: scale ${pgbenchScale}, ${flowUsers} clients\n`);
  const pgbenchLoad = loadAverage();
  const pgbench = await runPgbench({
    url: databaseUrl,
    clients: flowUsers,
    threads: Math.min(2, flowUsers),
    seconds: duration,
    warmupSeconds: warmup,
    scale: pgbenchScale,
  });
  process.stderr.write(`  ${fmt(pgbench.tps)} tps  latency average ${ms(pgbench.latencyAverage)} ms  failed ${pgbench.failed}\n`);

  const problems = [...runs.flatMap(flowProblems), ...(pgbench.failed ? [`pgbench had ${pgbench.failed} failed transactions`] : [])];
  const notes = runs.flatMap((r) => {
    const f = r.flow;
    const soldOut = f.nothingBookable + f.priceCheck.sold_out + failureCount(f.bookConflicts);
    return soldOut > f.started * 0.01 ? [`**Note:** ${r.label}: ${soldOut} of ${f.started} flows found nothing bookable or sold out (more than 1 %).`] : [];
  });
  const section = [
    '### v1 booking flow on PostgreSQL, beside pgbench',
    '',
    head,
    '',
    flowSection(runs, pgbench, pgVersion),
    ...(notes.length ? ['', ...notes] : []),
    ...(problems.length ? ['', `**Warning:** ${problems.join('; ')}.`] : []),
    '',
    endLine(),
  ].join('\n');
  const settings = { users: flowUsers, durationSeconds: duration, warmupSeconds: warmup, pgbenchScale };
  const objects: GroupObject[] = [
    ...runs.map((r) => {
      const c = perFlowCpu(r);
      return {
        scenario: FLOW_SCENARIO,
        target: r.label,
        unit: 'flow' as const,
        perSecond: r.flow.flowsPerSecond,
        latencyMs: { p50: r.flow.flow.p50, p99: r.flow.flow.p99 },
        cpuUsPerUnit: { process: c.service, ...(r.label.includes('out of process') ? { provider: c.provider } : {}), postgresSessions: c.postgresSessions, postgresServer: c.postgresServer },
        ratios: { pgbench: r.flow.flowsPerSecond / pgbench.tps, ...vsBaseline(FLOW_SCENARIO, r.label, r.flow.flowsPerSecond) },
        count: r.flow.completed,
        failures: STEPS.reduce((n, step) => n + failureCount(r.flow.steps[step].failures), 0),
        details: {
          started: r.flow.started,
          ledgerOk: r.ledger.ok,
          steps: Object.fromEntries(STEPS.map((step) => [step, { p50: r.flow.steps[step].latency.p50, p99: r.flow.steps[step].latency.p99 }])),
          postgresBackends: r.cpu.postgres.backends,
          ...(r.cpu.postgres.note ? { postgresNote: r.cpu.postgres.note } : {}),
        },
        service: service(source),
        loadAverage: r.load,
        settings,
      };
    }),
    {
      scenario: FLOW_SCENARIO,
      target: 'pgbench TPC-B',
      unit: 'transaction',
      perSecond: pgbench.tps,
      latencyMs: { p50: pgbench.latency.p50, p99: pgbench.latency.p99 },
      cpuUsPerUnit: { process: null },
      ratios: {},
      count: pgbench.processed,
      failures: pgbench.failed,
      details: { scale: pgbench.scale, clients: pgbench.clients, threads: pgbench.threads },
      loadAverage: { start: pgbenchLoad, end: loadAverage() },
      settings,
    },
  ];
  return { section, problems, objects };
}

// ---------------------------------------------------------------------------------------------
// webhooks and subscriptions

/** Webhook events end to end: on PostgreSQL with Redis (production), then on the embedded default. */
async function webhooksGroup(source: ServiceSource): Promise<GroupResult> {
  const head = runLine('webhooks', source);
  const results: { r: WebhookBenchResult; load: { start: number[]; end: number[] } }[] = [];
  const common = { users: flowUsers, warmupSeconds: warmup, seconds: webhookSeconds, properties: SIMULATOR_SIZE, backlog: webhookBacklog, timeoutMs: 120_000 };
  const schema = scratchSchema('bench');
  try {
    process.stderr.write(`webhooks: PostgreSQL + Redis, production\n`);
    const start = loadAverage();
    const r = await runWebhookBench({
      ...common,
      label: 'PostgreSQL + Redis, production',
      serviceEnv: {
        DATABASE_URL: databaseUrl,
        DATABASE_SCHEMA: schema,
        REDIS_URL: redisUrl,
        CHANNEL_ENV: 'production',
        BOOKING_SYNC_INTERVAL_MS: '0',
        SIMULATOR_SIZE: String(SIMULATOR_SIZE),
      },
      balance: FLOW_BALANCE,
    });
    results.push({ r, load: { start, end: loadAverage() } });
  } finally {
    await dropSchema(databaseUrl, schema);
  }
  process.stderr.write(`webhooks: embedded PGlite, sandbox\n`);
  const start = loadAverage();
  const r = await runWebhookBench({ ...common, label: 'embedded PGlite, sandbox', serviceEnv: {} });
  results.push({ r, load: { start, end: loadAverage() } });
  for (const { r } of results) {
    process.stderr.write(
      `  ${r.label}: bookings → webhooks ${fmt(r.flow.deliveredPerSecond, 1)} events/s, p50 ${ms(r.flow.latency.p50)} ms, CPU ${micros(r.flow.cpuUsPerEvent)} µs/event; ` +
        `drain ${fmt(r.drain.perSecond, 1)} deliveries/s (${fmt(r.drain.verified, 0)} signatures valid), p50 ${ms(r.drain.latency.p50)} ms, CPU ${micros(r.drain.cpuUsPerDelivery)} µs/delivery` +
        `${r.drain.postgres ? `, PostgreSQL ${pgPer(r.drain.postgres, r.drain.delivered)} µs/delivery` : ''}\n`,
    );
  }
  const problems = results.flatMap(({ r }) => r.problems.map((p) => `${r.label}: ${p}`));
  const section = [
    '### Webhook events end to end: bookings → webhooks, and an outbox backlog drain',
    '',
    head,
    '',
    webhookSection(results.map(({ r }) => r)),
    '',
    "Service CPU per event or delivery: the service's `process.cpuUsage()` over the part (bookings → webhooks: from the first booking to the last " +
      "arrival, the bookings' own work included; drain: from before the commit to the last arrival) ÷ deliveries received. PostgreSQL's (PostgreSQL runs): " +
      "from /proc, the backends of the service's sessions / every PostgreSQL process of the machine, over the same window.",
    ...(problems.length ? ['', `**Warning:** ${problems.join('; ')}.`] : []),
    '',
    endLine(),
  ].join('\n');
  const settings = { users: flowUsers, bookingSeconds: webhookSeconds, backlog: webhookBacklog, warmupSeconds: warmup };
  const perPg = (cpu: PostgresCpu | null, n: number) =>
    cpu ? { postgresSessions: cpu.sessions === null ? null : cpu.sessions / Math.max(1, n), postgresServer: cpu.server === null ? null : cpu.server / Math.max(1, n) } : {};
  const objects: GroupObject[] = results.flatMap(({ r, load }) => {
    const flowScenario = 'webhooks: bookings → webhooks';
    const drainScenario = 'webhooks: outbox backlog drain';
    return [
      {
        scenario: flowScenario,
        target: r.label,
        unit: 'event' as const,
        perSecond: r.flow.deliveredPerSecond,
        latencyMs: { p50: r.flow.latency.p50, p99: r.flow.latency.p99, max: r.flow.latency.max },
        cpuUsPerUnit: { process: r.flow.cpuUsPerEvent, ...perPg(r.flow.postgres, r.flow.delivered) },
        ratios: vsBaseline(flowScenario, r.label, r.flow.deliveredPerSecond),
        count: r.flow.delivered,
        failures: r.receiver.badSignatures + r.receiver.badBodies + (r.flow.deliveries - r.flow.delivered),
        details: { bookingsPerSecond: r.flow.flows.flowsPerSecond, events: r.flow.events, verified: r.receiver.verified, badSignatures: r.receiver.badSignatures },
        service: service(source),
        loadAverage: load,
        settings,
      },
      {
        scenario: drainScenario,
        target: r.label,
        unit: 'event' as const,
        perSecond: r.drain.perSecond,
        latencyMs: { p50: r.drain.latency.p50, p99: r.drain.latency.p99, max: r.drain.latency.max },
        cpuUsPerUnit: { process: r.drain.cpuUsPerDelivery, ...perPg(r.drain.postgres, r.drain.delivered) },
        ratios: vsBaseline(drainScenario, r.label, r.drain.perSecond),
        count: r.drain.delivered,
        failures: r.drain.deliveries - r.drain.delivered + r.drain.badSignatures,
        details: {
          cpuCores: r.drain.cpuShare,
          firstDeliveryMs: r.drain.firstMs,
          deliveries: r.drain.deliveries,
          deliveriesPerSecond: r.drain.perSecond,
          drainVerified: r.drain.verified,
          drainBadSignatures: r.drain.badSignatures,
          verified: r.receiver.verified,
          badSignatures: r.receiver.badSignatures,
        },
        service: service(source),
        loadAverage: load,
        settings,
      },
    ];
  });
  return { section, problems, objects };
}

/** graphql-ws subscribers on one instance (PostgreSQL), with the in-process bus, then through Redis. */
async function subscriptionsGroup(source: ServiceSource): Promise<GroupResult> {
  const head = runLine('subscriptions', source);
  const results: { r: SubscriptionBenchResult; load: { start: number[]; end: number[] } }[] = [];
  const runs = [
    { bus: 'in-process', n: subscribers },
    { bus: 'Redis', n: subscribers },
    ...(subscribersLarge ? [{ bus: 'in-process', n: subscribersLarge }] : []),
  ] as const;
  for (const { bus, n } of runs) {
    const schema = scratchSchema('bench');
    const start = loadAverage();
    const applicationName = `bench_subscriptions_${process.pid}_${Date.now()}`;
    const url = new URL(databaseUrl);
    url.searchParams.set('application_name', applicationName);
    try {
      process.stderr.write(`subscriptions: ${n} subscribers, ${bus} bus\n`);
      const r = await runSubscriptionBench({
        label: `${bus} bus`,
        serviceEnv: {
          DATABASE_URL: url.toString(),
          DATABASE_SCHEMA: schema,
          CHANNEL_ENV: 'production',
          BOOKING_SYNC_INTERVAL_MS: '0',
          SIMULATOR_SIZE: String(SIMULATOR_SIZE),
          ...(bus === 'Redis' ? { REDIS_URL: redisUrl } : {}),
          // One channel holds every subscriber: its limit (10,000 by default) must admit them.
          ...(n > 10_000 ? { SUBSCRIPTIONS_MAX_PER_CHANNEL: String(n) } : {}),
        },
        postgres: { url: databaseUrl, applicationName },
        balance: FLOW_BALANCE,
        subscribers: n,
        bookings: subscriptionBookings,
        properties: SIMULATOR_SIZE,
        timeoutMs: 60_000,
      });
      results.push({ r, load: { start, end: loadAverage() } });
    } finally {
      await dropSchema(databaseUrl, schema);
    }
    const { r } = results[results.length - 1]!;
    process.stderr.write(
      `  ${r.connect.connected} connected in ${fmt(r.connect.seconds, 1)} s; p50 ${ms(r.latency.p50)} ms, p99 ${ms(r.latency.p99)} ms, ` +
        `max ${ms(r.latency.max)} ms; received by ${r.minReceivedBy}; CPU ${fmt(r.cpu.usPerDelivery, 1)} µs/delivery\n`,
    );
  }
  const problems = results.flatMap(({ r }) => r.problems.map((p) => `${r.label}, ${fmt(r.subscribers)} subscribers: ${p}`));
  const objects: GroupObject[] = results.map(({ r, load }) => {
    const n = Math.max(1, r.connect.connected);
    const scenario = `${fmt(r.subscribers)} graphql-ws subscribers`;
    return {
      scenario,
      target: r.label,
      unit: 'delivery' as const,
      perSecond: r.deliveriesPerSecond,
      latencyMs: { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max },
      cpuUsPerUnit: {
        process: r.cpu.usPerDelivery,
        ...(r.cpu.postgres
          ? {
              postgresSessions: r.cpu.postgres.sessions === null ? null : r.cpu.postgres.sessions / Math.max(1, r.cpu.deliveries),
              postgresServer: r.cpu.postgres.server === null ? null : r.cpu.postgres.server / Math.max(1, r.cpu.deliveries),
            }
          : {}),
      },
      ratios: vsBaseline(scenario, r.label, r.deliveriesPerSecond),
      count: r.cpu.deliveries,
      failures: r.problems.length,
      details: {
        subscribers: r.connect.connected,
        events: r.events,
        minReceivedBy: r.minReceivedBy,
        cpuUsPerEvent: r.cpu.usPerEvent,
        eventLoopDelayMaxMs: r.loopDelay.max,
        eventLoopDelayP99Ms: r.loopDelay.p99,
        heapPerSubscriberKB: (r.memory.after.heapUsed - r.memory.before.heapUsed) / n / 1024,
        rssPerSubscriberKB: (r.memory.after.rss - r.memory.before.rss) / n / 1024,
      },
      service: service(source),
      loadAverage: load,
      settings: { subscribers: r.subscribers, bookings: subscriptionBookings },
    };
  });
  return {
    section: [
      `### ${fmt(subscribers)} graphql-ws subscribers on one instance${subscribersLarge ? `, and ${fmt(subscribersLarge)}` : ''}`,
      '',
      head,
      '',
      subscriptionSection(results.map(({ r }) => r)),
      ...(problems.length ? ['', `**Warning:** ${problems.join('; ')}.`] : []),
      '',
      endLine(),
    ].join('\n'),
    problems,
    objects,
  };
}

// ---------------------------------------------------------------------------------------------
// Main

function selectedGroups(): Group[] {
  const names = process.argv.slice(2).filter((a) => a !== '--');
  if (!names.length) return [...GROUPS];
  const unknown = names.filter((n) => !(GROUPS as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}; choose among ${GROUPS.join(', ')}`);
  return GROUPS.filter((g) => names.includes(g));
}

async function main(): Promise<boolean> {
  const groups = selectedGroups();
  const source = resolveServiceSource();
  process.stderr.write(
    `bench: run \`${RUN}\`; service from ${source.via} ${source.dir}${source.commit ? ` (${source.commit.slice(0, 12)}${source.dirty ? ', uncommitted changes' : ''})` : ''}\n`,
  );
  const runners: Record<Group, () => Promise<GroupResult>> = {
    http: () => httpGroup({ connections, duration, warmup, simulatorSize: SIMULATOR_SIZE, source, only: httpOnly }),
    flow: () => flowGroup(source),
    webhooks: () => webhooksGroup(source),
    subscriptions: () => subscriptionsGroup(source),
    fault: () =>
      faultGroup({
        source,
        databaseUrl,
        users: faultUsers,
        loadSeconds: faultLoadSeconds,
        bookDelayMs: faultBookDelayMs,
        timeoutSeconds: faultTimeoutSeconds,
        simulatorSize: SIMULATOR_SIZE,
      }),
    content: () => contentGroup({ source, size: contentSize }),
  };
  let ok = true;
  for (const group of groups) {
    const { section, problems, objects } = await runners[group]();
    if (problems.length) ok = false;
    process.stdout.write(`\n${section}\n`);
    writeReadme(group, section);
    writeResults(group, complete(group, objects), group === 'http' && httpOnly.length < HTTP_SCENARIOS.length);
    process.stderr.write(`\nwrote the ${group} figures into bench/README.md and bench/results.json\n`);
  }
  return ok;
}

let failed = false;
const started = Date.now();
try {
  failed = !(await main());
} catch (error) {
  failed = true;
  console.error('bench failed:', error);
} finally {
  await stopAllChildren();
  await dropScratchSchemas(databaseUrl);
}
process.stderr.write(`bench: ${fmt((Date.now() - started) / 1000)} s in all\n`);
process.exitCode = failed ? 1 : 0;
