/**
 * `npm run bench`: measures three scenarios of the channel service with autocannon, each beside a
 * bare `node:http` server returning the same bytes, and writes the figures into bench/README.md.
 *
 * The service and the plain servers run in child processes; autocannon runs here, so the load
 * generator never shares an event loop with the server it measures.
 *
 * Then, on PostgreSQL: complete v1 booking flows (availability → price check → book) driven by
 * virtual users against the service in production mode (bench/flow.ts), and pgbench's TPC-B on
 * the same database with as many clients for as long.
 *
 * Environment: BENCH_DURATION (seconds, default 10), BENCH_CONNECTIONS (default 50),
 * BENCH_WARMUP (seconds of unrecorded load before each measured run, default 2; 0 disables),
 * BENCH_FLOW_USERS (virtual users of the booking flow and pgbench clients, default 20),
 * BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/test),
 * BENCH_PGBENCH_SCALE (pgbench -i -s, default 10), BENCH_PGBENCH (the pgbench binary, default pgbench).
 *
 * Then webhook events end to end (bench/webhooks.ts) and 5,000 graphql-ws subscribers on one
 * instance (bench/subscriptions.ts); their settings are described in bench/README.md.
 *
 * `npm run bench -- <scenario…>` runs only the named scenarios: http, flow, webhooks,
 * subscriptions (all four when none is named). Each writes its own block of bench/README.md and
 * leaves the others' figures as they were.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { benchDir, startChild as startBenchChild, stopAllChildren, stopChild } from './children.js';
import { checkLedger, dropSchema, dropScratchSchemas, runFlows, runPgbench, scratchSchema, serverVersion, STEPS, type FlowResult, type LedgerCheck, type PgbenchResult } from './flow.js';
import { runSubscriptionBench, subscriptionSection, type SubscriptionBenchResult } from './subscriptions.js';
import { runWebhookBench, webhookSection, type WebhookBenchResult } from './webhooks.js';

const readmePath = join(benchDir, 'README.md');

/** The scenarios `npm run bench -- <name…>` can select, in the order they run. */
const GROUPS = ['http', 'flow', 'webhooks', 'subscriptions'] as const;
type Group = (typeof GROUPS)[number];

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
const subscriptionBookings = positiveInt('BENCH_SUBSCRIPTION_BOOKINGS', 5);
/** The simulator's catalog size (its default); the flows book properties 1..this. */
const SIMULATOR_SIZE = 500;
/** Opening balance of the flow scenario's channel, KRW: far more than any run can spend. */
const FLOW_BALANCE = 10n ** 13n;

// ---------------------------------------------------------------------------------------------
// Child processes (bench/children.ts)

/** Starts a bench child; `env` entries are added to this process's environment. */
async function startChild<T>(script: string, env: Record<string, string> = {}) {
  return startBenchChild<T>(script, { env });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAllChildren()
      .then(() => dropScratchSchemas(databaseUrl))
      .finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------
// Scenarios

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function scenarios(apiKey: string): Scenario[] {
  const day = 24 * 60 * 60 * 1000;
  const checkin = isoDate(new Date(Date.now() + 30 * day));
  const checkout = isoDate(new Date(Date.now() + 32 * day));
  const auth = { 'x-api-key': apiKey };
  return [
    { name: 'REST property (cached content)', method: 'GET', path: '/channel/v1/properties/1', headers: auth },
    {
      name: 'GraphQL property + room types',
      method: 'POST',
      path: '/graphql',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query($id:ID!){ property(id:$id){ propertyId name city starRating roomTypes { roomtypeId name maxOccupancy } } }',
        variables: { id: '1' },
      }),
    },
    {
      name: 'REST availability search (20 per page)',
      method: 'GET',
      path: `/channel/v1/search/availability?checkin=${checkin}&checkout=${checkout}&adults=2&per_page=20&sort_by=price_asc`,
      headers: auth,
    },
  ];
}

interface Captured {
  status: number;
  contentType: string | null;
  body: Buffer;
}

async function capture(port: number, scenario: Scenario): Promise<Captured> {
  const init: RequestInit = { method: scenario.method, headers: scenario.headers };
  if (scenario.body !== undefined) init.body = scenario.body;
  const res = await fetch(`http://127.0.0.1:${port}${scenario.path}`, init);
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status < 200 || res.status >= 300) {
    throw new Error(`${scenario.name}: the service answered ${res.status}: ${body.toString('utf8').slice(0, 500)}`);
  }
  return { status: res.status, contentType: res.headers.get('content-type'), body };
}

interface Row {
  scenario: string;
  target: 'service' | 'plain';
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  total: number;
}

async function load(port: number, scenario: Scenario, seconds: number): Promise<autocannon.Result> {
  const options: autocannon.Options = {
    url: `http://127.0.0.1:${port}${scenario.path}`,
    method: scenario.method,
    headers: scenario.headers,
    connections,
    duration: seconds,
  };
  if (scenario.body !== undefined) options.body = scenario.body;
  return autocannon(options);
}

async function measure(port: number, scenario: Scenario, target: Row['target']): Promise<Row> {
  if (warmup > 0) await load(port, scenario, warmup);
  const result = await load(port, scenario, duration);
  const row: Row = {
    scenario: scenario.name,
    target,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    total: result.requests.total,
  };
  process.stderr.write(
    `  ${target.padEnd(7)} ${fmt(row.rps, 0).padStart(8)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms` +
      `  non-2xx ${row.non2xx}  errors ${row.errors}\n`,
  );
  return row;
}

// ---------------------------------------------------------------------------------------------
// Report

function fmt(value: number, digits: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) return line.slice(line.indexOf(':') + 1).trim();
  } catch {
    // not Linux
  }
  return cpus()[0]?.model ?? 'unknown';
}

function table(rows: Row[]): string {
  const plainRps = new Map(rows.filter((r) => r.target === 'plain').map((r) => [r.scenario, r.rps]));
  const lines = [
    '| Scenario | Target | Req/s (avg) | vs plain | p50 ms | p99 ms | Non-2xx | Errors |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const plain = plainRps.get(r.scenario);
    const ratio = r.target === 'service' && plain ? `${fmt((r.rps / plain) * 100, 1)} %` : '';
    const errors = r.timeouts ? `${r.errors} (${r.timeouts} timeouts)` : String(r.errors);
    lines.push(
      `| ${r.scenario} | ${r.target} | ${fmt(r.rps, 0)} | ${ratio} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${errors} |`,
    );
  }
  return lines.join('\n');
}

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

/** The PostgreSQL section: the flow beside pgbench, the flow's steps, and what was counted. */
function flowSection(f: FlowResult, b: PgbenchResult, ledger: LedgerCheck, pgVersion: string): string {
  const stepFailures = STEPS.reduce((n, step) => n + failureCount(f.steps[step].failures), 0);
  const conflicts = failureCount(f.bookConflicts);
  const perFlow = f.flowsPerSecond > 0 ? b.tps / f.flowsPerSecond : 0;
  const lines = [
    `PostgreSQL ${pgVersion} on 127.0.0.1, database \`${new URL(databaseUrl).pathname.slice(1)}\`; ` +
      `${f.users} virtual users / pgbench clients, ${f.seconds} s each (after ${warmup} s warm-up).`,
    '',
    '| Workload | Clients | Completed | Per second | Latency avg ms | p50 ms | p99 ms | Failed |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    `| v1 booking flow (availability → price check → book), service on PostgreSQL, production | ${f.users} | ` +
      `${fmt(f.completed, 0)} flows | ${fmt(f.flowsPerSecond, 1)} flows/s | ${ms(f.flow.avg)} | ${ms(f.flow.p50)} | ${ms(f.flow.p99)} | ${stepFailures} |`,
    `| pgbench TPC-B (scale ${b.scale}, \`-M prepared -j ${b.threads}\`) | ${b.clients} | ${fmt(b.processed, 0)} tx | ` +
      `${fmt(b.tps, 0)} tps | ${ms(b.latencyAverage)} | ${ms(b.latency.p50)} | ${ms(b.latency.p99)} | ${b.failed} |`,
    '',
    `In the time the service completes one booking flow, PostgreSQL alone completes about ${fmt(perFlow, 0)} TPC-B ` +
      'transactions. A booking flow is three HTTP requests to the service, three provider calls (search, ' +
      'price check, booking) and two database transactions: the booking row with the conditional debit of the ' +
      "channel's balance and its ledger entry (two statements: the insert, then debit and ledger row in one), then the move to confirmed with its outbox event " +
      '(three), each with BEGIN and COMMIT; every debit of the run is on the same channel row. A TPC-B ' +
      'transaction is five statements (three updates, a select, an insert) in one transaction, spread over many rows.',
    '',
    '| Step of the flow | Requests | avg ms | p50 ms | p99 ms | Failed |',
    '|---|---:|---:|---:|---:|---|',
    ...STEPS.map((step) => {
      const r = f.steps[step];
      const failed = failureCount(r.failures);
      return `| ${STEP_LABELS[step]} | ${fmt(r.latency.count, 0)} | ${ms(r.latency.avg)} | ${ms(r.latency.p50)} | ${ms(r.latency.p99)} | ${failed ? counts(r.failures) : '0'} |`;
    }),
    `| whole flow (completed ones) | ${fmt(f.flow.count, 0)} | ${ms(f.flow.avg)} | ${ms(f.flow.p50)} | ${ms(f.flow.p99)} | |`,
    '',
    `Flows started in the measured window: ${fmt(f.started, 0)}; completed (201) within it: ${fmt(f.completed, 0)}. ` +
      `Not counted as completed: nothing bookable in the search ${f.nothingBookable}; ` +
      `price check sold_out ${f.priceCheck.sold_out}; booking 409 ${conflicts ? counts(f.bookConflicts) : '0'}. ` +
      `Price checks matched ${f.priceCheck.matched}, price_changed ${f.priceCheck.price_changed}. ` +
      `Bookings made: ${counts(f.bookingStatuses) || 'none'}` +
      `${f.amountMismatches ? `; **${f.amountMismatches} with a totalAmount other than the price check's**` : ''}.`,
    ledger.ok
      ? `Ledger check after the run: ${fmt(ledger.bookings, 0)} bookings (warm-up included) in the database, each charged once; ` +
        'balance = opening balance − their total amounts = sum of the ledger entries.'
      : `**Ledger check failed:** ${ledger.problems.join('; ')}.`,
  ];
  return lines.join('\n');
}

/** Written when bench/README.md is missing; the description of the scenarios lives in the committed README. */
const README_FALLBACK = `# Benchmarks

\`npm run bench\` (bench/run.ts) measures the channel service; \`npm run bench -- <scenario…>\` runs
some of its scenarios (${GROUPS.join(', ')}). The figures below are rewritten by each run, each
scenario in its own block.
`;

const marker = (group: Group, edge: 'start' | 'end') => `<!-- results:${group}:${edge} -->`;

/** Replaces the block of `group` in bench/README.md (appended at the end when the file has none). */
function writeReadme(group: Group, section: string): void {
  let text: string;
  try {
    text = readFileSync(readmePath, 'utf8');
  } catch {
    text = README_FALLBACK;
  }
  const START = marker(group, 'start');
  const END = marker(group, 'end');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) text = `${text.trimEnd()}\n\n${START}\n${END}\n`;
  const s = text.indexOf(START) + START.length;
  const e = text.indexOf(END);
  writeFileSync(readmePath, `${text.slice(0, s)}\n${section}\n${text.slice(e)}`);
}

/** The first line of every block: when, where, how. */
function runLine(group: Group): string {
  const load = loadavg().map((v) => fmt(v, 2)).join(', ');
  const args = process.argv.slice(2).filter((a) => a !== '--');
  const settings = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_'))
    .map(([k, v]) => `${k}=${v}`)
    .sort();
  const command = `${settings.length ? `${settings.join(' ')} ` : ''}npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`;
  return (
    `Run on ${new Date().toISOString().slice(0, 10)} — CPU: ${cpuModel()}, ${cpus().length} cores, Node ${process.version}. ` +
    `Command: \`${command}\` (scenario \`${group}\`). Load average when the scenario started: ${load} (the machine is shared).`
  );
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

/** The three single-request scenarios, each beside its plain twin, on PGlite. */
async function httpGroup(): Promise<{ section: string; problems: string[] }> {
  const head = runLine('http');
  const workDir = mkdtempSync(join(tmpdir(), 'channel-bench-bodies-'));
  const rows: Row[] = [];
  const sizes: string[] = [];
  try {
    process.stderr.write(`bench: ${connections} connections, ${duration} s per run, ${warmup} s warm-up\n`);
    const service = await startChild<{ port: number; apiKey: string }>('serve-service.ts');
    try {
      for (const [index, scenario] of scenarios(service.info.apiKey).entries()) {
        process.stderr.write(`${scenario.name}: ${scenario.method} ${scenario.path.split('?')[0]}\n`);
        const captured = await capture(service.info.port, scenario);
        sizes.push(`${scenario.name}: ${captured.body.length} bytes, ${captured.contentType ?? 'no content-type'}`);
        const bodyFile = join(workDir, `body-${index}`);
        writeFileSync(bodyFile, captured.body);
        const plain = await startChild<{ port: number }>('serve-plain.ts', {
          PLAIN_BODY_FILE: bodyFile,
          PLAIN_STATUS: String(captured.status),
          PLAIN_CONTENT_TYPE: captured.contentType ?? '',
        });
        try {
          rows.push(await measure(service.info.port, scenario, 'service'));
          rows.push(await measure(plain.info.port, scenario, 'plain'));
        } finally {
          await stopChild(plain.child);
        }
      }
    } finally {
      await stopChild(service.child);
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
  const bad = rows.filter((r) => r.non2xx > 0 || r.errors > 0 || r.timeouts > 0);
  const section = [
    head,
    `Settings: ${connections} connections, ${duration} s per run (after ${warmup} s warm-up), pipelining 1.`,
    '',
    table(rows),
    '',
    `Response sizes: ${sizes.join('; ')}.`,
    ...(bad.length
      ? ['', `**Warning:** ${bad.map((r) => `${r.scenario} / ${r.target}`).join(', ')} had non-2xx answers or errors.`]
      : []),
  ].join('\n');
  return { section, problems: bad.map((r) => `${r.scenario} / ${r.target}: non-2xx answers or errors`) };
}

/** The v1 booking flow on PostgreSQL, then pgbench on the same database. */
async function flowGroup(): Promise<{ section: string; problems: string[] }> {
  const head = runLine('flow');
  const pgVersion = await serverVersion(databaseUrl);
  process.stderr.write(`v1 booking flow on PostgreSQL ${pgVersion}: ${flowUsers} virtual users\n`);
  const schema = scratchSchema('bench');
  let flow: FlowResult;
  let ledger: LedgerCheck;
  try {
    const pgService = await startChild<{ port: number; apiKey: string; channelId: string }>('serve-service.ts', {
      BENCH_SERVICE_ENV: JSON.stringify({
        DATABASE_URL: databaseUrl,
        DATABASE_SCHEMA: schema,
        CHANNEL_ENV: 'production',
        BOOKING_SYNC_INTERVAL_MS: '0',
        SIMULATOR_SIZE: String(SIMULATOR_SIZE),
      }),
      BENCH_CHANNEL_BALANCE: String(FLOW_BALANCE),
    });
    try {
      flow = await runFlows({
        port: pgService.info.port,
        apiKey: pgService.info.apiKey,
        users: flowUsers,
        warmupSeconds: warmup,
        seconds: duration,
        properties: SIMULATOR_SIZE,
      });
    } finally {
      await stopChild(pgService.child);
    }
    ledger = await checkLedger(databaseUrl, schema, pgService.info.channelId, FLOW_BALANCE, flow.booked);
  } finally {
    await dropSchema(databaseUrl, schema);
  }
  const stepFailures = STEPS.map((step) => counts(flow.steps[step].failures)).filter(Boolean);
  process.stderr.write(
    `  ${fmt(flow.flowsPerSecond, 1)} flows/s  p50 ${ms(flow.flow.p50)} ms  p99 ${ms(flow.flow.p99)} ms` +
      `  book p50 ${ms(flow.steps.book.latency.p50)} ms  failures ${stepFailures.join('; ') || 0}\n`,
  );

  process.stderr.write(`pgbench TPC-B: scale ${pgbenchScale}, ${flowUsers} clients\n`);
  const pgbench = await runPgbench({
    url: databaseUrl,
    clients: flowUsers,
    threads: Math.min(2, flowUsers),
    seconds: duration,
    warmupSeconds: warmup,
    scale: pgbenchScale,
  });
  process.stderr.write(`  ${fmt(pgbench.tps, 0)} tps  latency average ${ms(pgbench.latencyAverage)} ms  failed ${pgbench.failed}\n`);

  const problems = [
    ...(stepFailures.length ? [`booking-flow steps failed (${stepFailures.join('; ')})`] : []),
    ...(flow.completed === 0 ? ['no booking flow completed'] : []),
    ...(flow.amountMismatches ? [`${flow.amountMismatches} bookings charged another amount than the price check's`] : []),
    ...(ledger.ok ? [] : ['the ledger check failed']),
    ...(pgbench.failed ? [`pgbench had ${pgbench.failed} failed transactions`] : []),
  ];
  const soldOut = flow.nothingBookable + flow.priceCheck.sold_out + failureCount(flow.bookConflicts);
  const soldOutNote =
    soldOut > flow.started * 0.01
      ? [`**Note:** ${soldOut} of ${flow.started} flows found nothing bookable or sold out (more than 1 %).`]
      : [];
  const section = [
    '### v1 booking flow on PostgreSQL, beside pgbench',
    '',
    head,
    '',
    flowSection(flow, pgbench, ledger, pgVersion),
    ...(soldOutNote.length ? ['', ...soldOutNote] : []),
    ...(problems.length ? ['', `**Warning:** ${problems.join('; ')}.`] : []),
  ].join('\n');
  return { section, problems };
}

/** Webhook events end to end: on PostgreSQL with Redis (production), then on the embedded default. */
async function webhooksGroup(): Promise<{ section: string; problems: string[] }> {
  const head = runLine('webhooks');
  const results: WebhookBenchResult[] = [];
  const common = { users: flowUsers, warmupSeconds: warmup, seconds: webhookSeconds, properties: SIMULATOR_SIZE, backlog: webhookBacklog, timeoutMs: 120_000 };
  const schema = scratchSchema('bench');
  try {
    process.stderr.write(`webhooks: PostgreSQL + Redis, production\n`);
    results.push(
      await runWebhookBench({
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
      }),
    );
  } finally {
    await dropSchema(databaseUrl, schema);
  }
  process.stderr.write(`webhooks: embedded PGlite, sandbox\n`);
  results.push(await runWebhookBench({ ...common, label: 'embedded PGlite, sandbox', serviceEnv: {} }));
  for (const r of results) {
    process.stderr.write(
      `  ${r.label}: bookings → webhooks ${fmt(r.flow.deliveredPerSecond, 1)} events/s, p50 ${ms(r.flow.latency.p50)} ms; ` +
        `drain ${fmt(r.drain.perSecond, 1)} events/s, p50 ${ms(r.drain.latency.p50)} ms\n`,
    );
  }
  const problems = results.flatMap((r) => r.problems.map((p) => `${r.label}: ${p}`));
  const section = [
    '### Webhook events end to end: bookings → webhooks, and an outbox backlog drain',
    '',
    head,
    '',
    webhookSection(results),
    ...(problems.length ? ['', `**Warning:** ${problems.join('; ')}.`] : []),
  ].join('\n');
  return { section, problems };
}

/** graphql-ws subscribers on one instance (PostgreSQL), with the in-process bus, then through Redis. */
async function subscriptionsGroup(): Promise<{ section: string; problems: string[] }> {
  const head = runLine('subscriptions');
  const results: SubscriptionBenchResult[] = [];
  for (const bus of ['in-process', 'Redis'] as const) {
    const schema = scratchSchema('bench');
    try {
      process.stderr.write(`subscriptions: ${subscribers} subscribers, ${bus} bus\n`);
      results.push(
        await runSubscriptionBench({
          label: `${bus} bus`,
          serviceEnv: {
            DATABASE_URL: databaseUrl,
            DATABASE_SCHEMA: schema,
            CHANNEL_ENV: 'production',
            BOOKING_SYNC_INTERVAL_MS: '0',
            SIMULATOR_SIZE: String(SIMULATOR_SIZE),
            ...(bus === 'Redis' ? { REDIS_URL: redisUrl } : {}),
          },
          balance: FLOW_BALANCE,
          subscribers,
          bookings: subscriptionBookings,
          properties: SIMULATOR_SIZE,
          timeoutMs: 60_000,
        }),
      );
    } finally {
      await dropSchema(databaseUrl, schema);
    }
    const r = results[results.length - 1]!;
    process.stderr.write(
      `  ${r.connect.connected} connected in ${fmt(r.connect.seconds, 1)} s; p50 ${ms(r.latency.p50)} ms, p99 ${ms(r.latency.p99)} ms, ` +
        `max ${ms(r.latency.max)} ms; received by ${r.minReceivedBy}\n`,
    );
  }
  const problems = results.flatMap((r) => r.problems.map((p) => `${r.label}: ${p}`));
  return {
    section: [
      `### ${fmt(subscribers, 0)} graphql-ws subscribers on one instance`,
      '',
      head,
      '',
      subscriptionSection(results),
      ...(problems.length ? ['', `**Warning:** ${problems.join('; ')}.`] : []),
    ].join('\n'),
    problems,
  };
}

const RUNNERS: Record<Group, () => Promise<{ section: string; problems: string[] }>> = {
  http: httpGroup,
  flow: flowGroup,
  webhooks: webhooksGroup,
  subscriptions: subscriptionsGroup,
};

let failed = false;
try {
  for (const group of selectedGroups()) {
    const { section, problems } = await RUNNERS[group]();
    if (problems.length) failed = true;
    process.stdout.write(`\n${section}\n`);
    writeReadme(group, section);
    process.stderr.write(`\nwrote the ${group} figures into ${readmePath}\n`);
  }
} catch (error) {
  failed = true;
  console.error('bench failed:', error);
} finally {
  await stopAllChildren();
  await dropScratchSchemas(databaseUrl);
}
process.exitCode = failed ? 1 : 0;
