/**
 * `npm run bench`: measures three scenarios of the channel service with autocannon, each beside a
 * bare `node:http` server returning the same bytes, and writes the figures into bench/README.md.
 *
 * The service and the plain servers run in child processes; autocannon runs here, so the load
 * generator never shares an event loop with the server it measures.
 *
 * Environment: BENCH_DURATION (seconds, default 10), BENCH_CONNECTIONS (default 50),
 * BENCH_WARMUP (seconds of unrecorded load before each measured run, default 2; 0 disables).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

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
    void Promise.all([...children].map(stopChild)).finally(() => process.exit(130));
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

const README_TEMPLATE = `# Benchmarks

\`npm run bench\` measures the channel service's HTTP throughput and latency with
[autocannon](https://github.com/mcollina/autocannon), in three scenarios:

1. **REST property** — \`GET /channel/v1/properties/1\`; after the first call the content comes
   from the in-memory content cache, so this is the cost of routing, API-key authentication
   (a database lookup), validation and JSON serialisation.
2. **GraphQL property** — \`POST /graphql\` asking for one property with its room types
   (GraphQL Yoga parse/validate/execute on top of the same authentication and cache).
3. **Availability search** — \`GET /channel/v1/search/availability\` for two adults, two nights
   about 30 days ahead, 20 results per page sorted by price: a provider search on every request.

Each scenario is measured against the service and then against a bare \`node:http\` server that
answers every request with the same status, content-type and body bytes as the service's first
answer. The plain twin is the ceiling of Node's HTTP stack on this machine for that payload, so
"vs plain" is the share of it the service reaches.

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

Run it:

\`\`\`sh
npm run bench                      # 50 connections, 10 s per run
BENCH_DURATION=3 npm run bench     # quicker
BENCH_CONNECTIONS=100 BENCH_WARMUP=0 npm run bench
\`\`\`

Reading the figures:

- autocannon reports latency percentiles in whole milliseconds, so 0 means under 1 ms;
- every service request authenticates its API key with a database lookup (PGlite, embedded and
  single-threaded, here), so no scenario is free of database work;
- in the search scenario the bundled simulator answers the provider call in the service's own
  process and on its own event loop, so its work (pricing every property of the catalog) is
  counted in the service's figures; with a provider elsewhere (\`UPSTREAM_URL\`) it would not be.

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

  const bad = rows.filter((r) => r.non2xx > 0 || r.errors > 0 || r.timeouts > 0);
  failed = bad.length > 0;
  const section = [
    `Run on ${new Date().toISOString().slice(0, 10)} — CPU: ${cpuModel()}, ${cpus().length} cores, Node ${process.version}.`,
    `Settings: ${connections} connections, ${duration} s per run (after ${warmup} s warm-up), pipelining 1.`,
    '',
    table(rows),
    '',
    `Response sizes: ${sizes.join('; ')}.`,
    ...(failed
      ? ['', `**Warning:** ${bad.map((r) => `${r.scenario} / ${r.target}`).join(', ')} had non-2xx answers or errors.`]
      : []),
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
