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
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { checkLedger, dropSchema, dropScratchSchemas, runFlows, runPgbench, scratchSchema, serverVersion, STEPS, type FlowResult, type LedgerCheck, type PgbenchResult } from './flow.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const rootDir = dirname(benchDir);
const readmePath = join(benchDir, 'README.md');
const START = '<!-- results:start -->';
const END = '<!-- results:end -->';

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
/** The simulator's catalog size (its default); the flows book properties 1..this. */
const SIMULATOR_SIZE = 500;
/** Opening balance of the flow scenario's channel, KRW: far more than any run can spend. */
const FLOW_BALANCE = 10n ** 13n;

// ---------------------------------------------------------------------------------------------
// Child processes

const children = new Set<ChildProcess>();

/** Starts `node --import tsx <script>` and resolves with the JSON of its first stdout line. */
async function startChild<T>(script: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; info: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(benchDir, script)], {
    cwd: rootDir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const info = await new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start within 120 s`)), 120_000);
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(line) as T);
      } catch {
        reject(new Error(`${script} printed something other than JSON: ${line}`));
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited before it was ready (code ${code}, signal ${signal})`));
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
  child.stdout!.resume();
  return { child, info };
}

/** SIGTERM, then SIGKILL if the child is still there after 15 s. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

process.once('exit', () => {
  for (const child of children) child.kill('SIGTERM');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void Promise.all([...children].map(stopChild))
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
        query: 'query($id:Int!){ property(id:$id){ id name city starRating roomTypes { id name maxOccupancy } } }',
        variables: { id: 1 },
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

const README_TEMPLATE = `# Benchmarks

\`npm run bench\` measures the channel service's HTTP throughput and latency in four scenarios.
Three single requests, driven by [autocannon](https://github.com/mcollina/autocannon) on the
embedded database (PGlite):

1. **REST property** — \`GET /channel/v1/properties/1\`; after the first call the content comes
   from the in-memory content cache, so this is the cost of routing, API-key authentication
   (a database lookup at most every \`AUTH_CACHE_TTL_MS\`), validation and JSON serialisation.
2. **GraphQL property** — \`POST /graphql\` asking for one property with its room types
   (GraphQL Yoga parse/validate/execute on top of the same authentication and cache).
3. **Availability search** — \`GET /channel/v1/search/availability\` for two adults, two nights
   about 30 days ahead, 20 results per page sorted by price: a provider search on every request.

And one whole partner journey on PostgreSQL:

4. **v1 booking flow** — availability of one property, price check, booking, looped by virtual
   users against the service in production mode (every booking is paid from the channel's
   balance through the ledger), measured in completed flows per second beside \`pgbench\`'s TPC-B
   on the same database with as many clients for as long.

Each of the first three scenarios is measured against the service and then against a bare
\`node:http\` server that answers every request with the same status, content-type and body bytes
as the service's first answer. The plain twin is the ceiling of Node's HTTP stack on this machine
for that payload, so "vs plain" is the share of it the service reaches.

How it runs (\`bench/run.ts\`):

- the service runs in its own process (\`bench/serve-service.ts\`) with \`CHANNEL_ENV=sandbox\`,
  embedded PGlite in a temporary directory and the bundled inventory simulator in the same
  process (\`UPSTREAM_URL\` unset), logging off; a channel is created and its API key sent as
  \`X-Api-Key\`;
- each plain twin runs in its own process (\`bench/serve-plain.ts\`);
- autocannon runs in the orchestrating process, so it never shares an event loop with the server
  it measures (on a 2-core machine, load generator and server each get about one core);
- before each measured run, an unrecorded warm-up of \`BENCH_WARMUP\` seconds;
- every run must end with zero non-2xx answers and zero errors; if not, the command fails after
  writing the figures, which then show the counts.

How the booking flow runs (\`bench/flow.ts\`):

- a second service process, on PostgreSQL (\`BENCH_DATABASE_URL\`, by default
  \`postgresql://postgres@127.0.0.1:5432/test\`) in a fresh schema \`bench_<random>\` that is dropped
  at the end, with \`CHANNEL_ENV=production\`, \`BOOKING_SYNC_INTERVAL_MS=0\` and the simulator in
  process (500 properties); its channel opens with a balance of 10¹³ KRW, far more than a run
  spends;
- \`BENCH_FLOW_USERS\` virtual users (default 20) in the orchestrating process, over an undici
  pool of as many connections, each looping for \`BENCH_DURATION\` seconds (after \`BENCH_WARMUP\`
  unrecorded) through:
  1. \`GET /channel/v1/search/availability/{id}?checkin=…&checkout=…&adults=2\`, taking the first
     room type whose first rate has a \`price_check_token\` and \`available_rooms\` ≥ 1;
  2. \`GET /channel/v1/search/price-check?token=…\`, which must answer \`matched\` or
     \`price_changed\` with a \`book_token\`;
  3. \`POST /channel/v1/bookings\` with \`{ book_token, booker_name }\`, which must answer 201;
- flow number *n* books property 1 + *n* mod 500 for one night, the night ⌊*n* / 500⌋ after a
  check-in 14 days ahead (cycling over 480 nights), so a room type's stock on a night (the
  simulator has 0 to 20 rooms) is asked for again only after 240,000 flows and never runs out;
- a flow is *completed* when its booking answers 201 within the measured window: flows per
  second = completed flows ÷ \`BENCH_DURATION\`. Flow latency runs from sending the availability
  request to receiving the booking; each step's latency is that of its request (every answer
  counted);
- not completed, and counted apart: searches in which no rate was bookable (the simulator's
  calendar has about one sold-out night in eight per room type), \`sold_out\` price checks and
  \`409 SOLD_OUT\` / \`PRICE_CHANGED\` bookings; a note is written when these exceed 1 % of the
  flows started;
- failed, and making the command fail: any other answer of any step (by status and error code)
  or a transport error, a booking whose \`totalAmount\` is not the price check's billable total,
  and a ledger check that does not hold after the run: the bookings in the schema are the ones
  the client was given (count and sum of amounts, none left \`processing\`), each charged once,
  and balance = opening balance − their amounts = sum of the ledger entries;
- then \`pgbench\` (\`BENCH_PGBENCH\`, by default from \`PATH\`) in a scratch schema of the same
  database, dropped at the end (\`PGOPTIONS=-c search_path=…\`): \`pgbench -i -s 10\`
  (\`BENCH_PGBENCH_SCALE\`), an unrecorded warm-up, then \`pgbench -c <users> -j 2 -T <duration>
  -M prepared\` with a per-transaction log; tps is pgbench's figure without the initial
  connection time, the average latency its own, p50/p99 come from the log.

Run it (the fourth scenario needs a PostgreSQL server and \`pgbench\`):

\`\`\`sh
npm run bench                      # 50 connections, 10 s per run, 20 flow users
BENCH_DURATION=3 npm run bench     # quicker
BENCH_CONNECTIONS=100 BENCH_WARMUP=0 npm run bench
BENCH_FLOW_USERS=50 BENCH_DATABASE_URL=postgresql://postgres@db:5432/bench npm run bench
\`\`\`

Reading the figures:

- autocannon reports latency percentiles in whole milliseconds, so 0 means under 1 ms; the
  booking-flow figures are measured with \`performance.now()\` and given to 0.1 ms;
- the API key is looked up in the database (PGlite, embedded and single-threaded, here) once per
  \`AUTH_CACHE_TTL_MS\` (5 s) and trusted in between; before that cache, the lookup on every
  request held the REST property read to 757 req/s (p50 61 ms) and GraphQL to 667 req/s;
- search figures before the simulator was made 2–3× faster (\`948420c\`) and the credential cache:
  73 req/s, p50 620 ms, p99 4,503 ms;
- in the search scenario the bundled simulator answers the provider call in the service's own
  process and on its own event loop, so its work (pricing every property of the catalog) is
  counted in the service's figures; with a provider elsewhere (\`UPSTREAM_URL\`) it would not be.
  The same holds for the three provider calls of each booking flow;
- the booking flow against pgbench: pgbench is the database alone, with its client in C; the
  flow adds the service, the provider, three HTTP round trips and Prisma. Every booking of the
  run debits the same channel row, whose lock is held from the debit to the commit (three round
  trips from the service), so bookings of one channel are made one at a time however many users
  there are, and the wait shows in the book step. In side runs of 2026-11-21 on this machine,
  paired under the same (busy, shared) conditions, the flow in \`CHANNEL_ENV=sandbox\` (no debit)
  made 30–45 % more flows per second than in production, with a book step p50 about half as long;
- the machine is shared with whatever else runs on it (and on 2 cores, load generator, service
  and PostgreSQL compete for them), so compare figures of one run rather than across runs.

The figures below are rewritten by each run (text outside the markers is kept).
Latencies are in milliseconds; req/s is the average over the run.

${START}
${END}
`;

function writeReadme(section: string): void {
  let text: string;
  try {
    text = readFileSync(readmePath, 'utf8');
  } catch {
    text = README_TEMPLATE;
  }
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) text = `${text.trimEnd()}\n\n${START}\n${END}\n`;
  const s = text.indexOf(START) + START.length;
  const e = text.indexOf(END);
  writeFileSync(readmePath, `${text.slice(0, s)}\n${section}\n${text.slice(e)}`);
}

// ---------------------------------------------------------------------------------------------
// Main

const workDir = mkdtempSync(join(tmpdir(), 'channel-bench-bodies-'));
const rows: Row[] = [];
const sizes: string[] = [];
let failed = false;
try {
  process.stderr.write(`bench: ${connections} connections, ${duration} s per run, ${warmup} s warm-up\n`);
  const service = await startChild<{ port: number; apiKey: string }>('serve-service.ts');
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
  await stopChild(service.child);

  // The v1 booking flow, on PostgreSQL in a schema of its own.
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

  const bad = rows.filter((r) => r.non2xx > 0 || r.errors > 0 || r.timeouts > 0);
  const flowProblems = [
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
  failed = bad.length > 0 || flowProblems.length > 0;
  const section = [
    `Run on ${new Date().toISOString().slice(0, 10)} — CPU: ${cpuModel()}, ${cpus().length} cores, Node ${process.version}.`,
    `Settings: ${connections} connections, ${duration} s per run (after ${warmup} s warm-up), pipelining 1.`,
    '',
    table(rows),
    '',
    `Response sizes: ${sizes.join('; ')}.`,
    ...(bad.length
      ? ['', `**Warning:** ${bad.map((r) => `${r.scenario} / ${r.target}`).join(', ')} had non-2xx answers or errors.`]
      : []),
    '',
    '### v1 booking flow on PostgreSQL, beside pgbench',
    '',
    flowSection(flow, pgbench, ledger, pgVersion),
    ...(soldOutNote.length ? ['', ...soldOutNote] : []),
    ...(flowProblems.length ? ['', `**Warning:** ${flowProblems.join('; ')}.`] : []),
  ].join('\n');
  process.stdout.write(`\n${section}\n`);
  writeReadme(section);
  process.stderr.write(`\nwrote ${readmePath}\n`);
} catch (error) {
  failed = true;
  console.error('bench failed:', error);
} finally {
  await Promise.all([...children].map(stopChild));
  rmSync(workDir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
