/**
 * The `http` group of `npm run bench`: three single-request scenarios driven by autocannon, each
 * beside its twins in the same run, on the embedded database (PGlite):
 *
 * 1. REST property: `GET /channel/v1/properties/1` (cached content);
 * 2. GraphQL property + room types: `POST /graphql`;
 * 3. REST availability search: the fixed mix of bench/search-mix.ts, with the provider simulator
 *    in the service's process (the default) and in a process of its own (`npm run simulator`,
 *    UPSTREAM_URL), with the cache-hit ratio measured at the provider.
 *
 * Twins, each a process of its own: the plain twin (bench/serve-plain.ts, node:http) and the Hono
 * twin (bench/serve-hono.ts), both answering the service's own answers (bench/answers.ts); for
 * GraphQL also stock graphql-yoga + Pothos (bench/serve-yoga.ts). Every twin's answers are checked
 * against the service's before it is measured.
 *
 * CPU: the service's and each twin's process.cpuUsage() (IPC) around the measured window, and the
 * out-of-process simulator's from /proc (bench/cpu.ts), divided by the requests completed.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { capture, differences, keepAliveMs, makeTemplate, type AnswerTemplate, type AnswersFile, type BenchRequest, type RawAnswer } from './answers.js';
import { ask, gcPerRequest, simulatorStats, startChild, startSimulator, stopChild, type GcSummary } from './children.js';
import { treeCpu } from './cpu.js';
import { baselineOf, endLine, fmt, loadAverage, micros, ratio, runLine, type GroupObject } from './report.js';
import { MIX_SEED, mixText, searchMix, type SearchMix } from './search-mix.js';
import type { ServiceSource } from './service-dir.js';

export interface HttpOptions {
  connections: number;
  duration: number;
  warmup: number;
  /** Properties of the simulator (in and out of process). */
  simulatorSize: number;
  source: ServiceSource;
  /** The scenarios to run (BENCH_HTTP_SCENARIOS); all three by default. */
  only: readonly HttpScenario[];
}

export const HTTP_SCENARIOS = ['rest', 'graphql', 'search'] as const;
export type HttpScenario = (typeof HTTP_SCENARIOS)[number];

type Kind = 'service' | 'service-out' | 'plain' | 'hono' | 'yoga';

const TARGET_NAMES: Record<Kind, string> = {
  service: 'service',
  'service-out': 'service, provider out of process',
  plain: 'plain twin (node:http)',
  hono: 'Hono twin',
  yoga: 'Yoga + Pothos twin',
};
const TWIN_KEYS: Partial<Record<Kind, string>> = { plain: 'plain', hono: 'hono', yoga: 'yoga' };

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** One path, or the sequence of a mix (cycled, all connections taking the next in turn). */
  paths: string[];
}

interface Row {
  scenario: string;
  kind: Kind;
  target: string;
  rps: number;
  latency: { p50: number; p90: number; p99: number; max: number };
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Answers by status code, when any was not 2xx. */
  statuses?: Record<string, number>;
  cpu: { process: number | null; provider?: number | null };
  /**
   * The service's garbage collections over the measured window (v8.GCProfiler, serve-service's
   * `gc` command): their time and the bytes young collections moved into the old generation, per request.
   */
  gc?: { usPerRequest: number; promotedPerRequest: number; scavenges: number; full: number };
  load: { start: number[]; end: number[] };
  hit?: { searches: number; providerRequests: number; ratio: number };
}

interface ServiceInfo {
  port: number;
  apiKey: string;
  simulatorUrl: string | null;
}

const GRAPHQL_QUERY =
  'query($id:ID!){ property(id:$id){ propertyId name city starRating roomTypes { roomtypeId name maxOccupancy } } }';

function scenarios(apiKey: string, mix: SearchMix): { rest: Scenario; graphql: Scenario; search: Scenario } {
  const auth = { 'x-api-key': apiKey };
  return {
    rest: { name: 'REST property (cached content)', method: 'GET', headers: auth, paths: ['/channel/v1/properties/1'] },
    graphql: {
      name: 'GraphQL property + room types',
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ query: GRAPHQL_QUERY, variables: { id: '1' } }),
      paths: ['/graphql'],
    },
    search: { name: 'REST availability search (query mix, 20 per page)', method: 'GET', headers: auth, paths: mix.paths },
  };
}

function requestOf(scenario: Scenario, path: string): BenchRequest {
  return { method: scenario.method, path, headers: scenario.headers, ...(scenario.body === undefined ? {} : { body: scenario.body }) };
}

/** Runs `fn` over `items`, `parallel` at a time. */
async function each<T>(items: T[], parallel: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

/**
 * The service's answers to every distinct request of `scenario`, each asked twice (per-request
 * values are where the two differ), as the twins' answers file; `first` keeps each first answer.
 */
async function captureAnswers(port: number, scenario: Scenario, problems: string[]): Promise<{ file: AnswersFile; first: Map<string, RawAnswer> }> {
  const distinct = [...new Set(scenario.paths)];
  const templates = new Map<string, AnswerTemplate>();
  const first = new Map<string, RawAnswer>();
  let keepAlive: number | null = null;
  await each(distinct, 8, async (path) => {
    const req = requestOf(scenario, path);
    const a = await capture(port, req);
    const b = await capture(port, req);
    if (a.status < 200 || a.status >= 300) {
      throw new Error(`${scenario.name}: the service answered ${a.status} to ${path}: ${a.body.toString('utf8').slice(0, 400)}`);
    }
    keepAlive ??= keepAliveMs(a);
    first.set(path, a);
    templates.set(path, makeTemplate(req, a, b, problems));
  });
  return { file: { keepAliveTimeoutMs: keepAlive, answers: distinct.map((p) => templates.get(p)!) }, first };
}

/** How the answers of the server on `port` differ from the service's (every distinct request); '' when they do not. */
async function checkAnswers(port: number, scenario: Scenario, file: AnswersFile, options: { headers: boolean; limit?: number }): Promise<string> {
  const found = new Map<string, number>();
  const templates = file.answers.slice(0, options.limit ?? file.answers.length);
  await each(templates, 8, async (t) => {
    const path = t.key.slice(t.key.indexOf(' ') + 1);
    for (const d of differences(t, await capture(port, requestOf(scenario, path)), options.headers)) found.set(d, (found.get(d) ?? 0) + 1);
  });
  return [...found].map(([d, n]) => (templates.length > 1 ? `${d} (${n} of ${templates.length} requests)` : d)).join('; ');
}

/** A shared position in a scenario's sequence, so the warm-up and the measured run continue it. */
interface Sequence {
  next: number;
}

/** A run of autocannon: a promise of its result that is also its event emitter (autocannon's `track` object). */
type Run = Promise<autocannon.Result> & autocannon.Instance;

function load(port: number, scenario: Scenario, seconds: number, connections: number, seq: Sequence): Run {
  const options: autocannon.Options = {
    url: `http://127.0.0.1:${port}${scenario.paths.length === 1 ? scenario.paths[0] : ''}`,
    method: scenario.method,
    headers: scenario.headers,
    connections,
    duration: seconds,
  };
  if (scenario.body !== undefined) options.body = scenario.body;
  if (scenario.paths.length > 1) {
    const paths = scenario.paths;
    options.requests = [{ setupRequest: (req) => ({ ...req, path: paths[seq.next++ % paths.length]! }) }];
  }
  return autocannon(options) as Run;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Probes {
  /** CPU µs used so far by the target's process. */
  process: () => Promise<number | null>;
  /** CPU µs used so far by the out-of-process provider. */
  provider?: () => number | null;
  /** The simulator whose counters give the hit ratio (search). */
  simulatorUrl?: string | null;
  /** The service's process (serve-service answers `gc`); the twins have none. */
  gc?: ChildProcess;
}

function ipcCpu(child: ChildProcess): () => Promise<number> {
  return async () => {
    const c = await ask<{ user: number; system: number }>(child, { cmd: 'cpu' });
    return c.user + c.system;
  };
}

function availabilityRequests(stats: Record<string, number>): number {
  return Object.entries(stats)
    .filter(([route]) => route.startsWith('POST /availability'))
    .reduce((n, [, v]) => n + v, 0);
}

async function measure(o: HttpOptions, port: number, scenario: Scenario, kind: Kind, probes: Probes): Promise<Row> {
  const seq: Sequence = { next: 0 };
  if (o.warmup > 0) await load(port, scenario, o.warmup, o.connections, seq);
  const loadStart = loadAverage();
  const provider0 = probes.provider?.() ?? null;
  if (probes.gc) await ask(probes.gc, { cmd: 'gc', action: 'start' });
  const cpu0 = await probes.process();
  const started = performance.now();
  const run = load(port, scenario, o.duration, o.connections, seq);
  // The hit ratio over the middle of the window (10 % to 90 %): there the requests in flight are
  // about as many at both ends, so answers counted and provider requests counted line up.
  let responses = 0;
  run.on('response', () => responses++);
  const sample = async (url: string) => {
    const before = responses;
    const requests = availabilityRequests(await simulatorStats(url));
    return { requests, responses: (before + responses) / 2 };
  };
  let hitWindow: { a: { requests: number; responses: number }; b: { requests: number; responses: number } } | undefined;
  if (probes.simulatorUrl) {
    const url = probes.simulatorUrl;
    await sleep(started + o.duration * 100 - performance.now());
    const a = await sample(url);
    await sleep(started + o.duration * 900 - performance.now());
    hitWindow = { a, b: await sample(url) };
  }
  const result = await run;
  const cpu1 = await probes.process();
  const gc = probes.gc ? await ask<GcSummary>(probes.gc, { cmd: 'gc', action: 'stop' }) : undefined;
  const provider1 = probes.provider?.() ?? null;
  const total = result.requests.total;
  const perRequest = (a: number | null, b: number | null) => (a !== null && b !== null && total > 0 ? (b - a) / total : null);
  const row: Row = {
    scenario: scenario.name,
    kind,
    target: TARGET_NAMES[kind],
    rps: result.requests.average,
    latency: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    cpu: { process: perRequest(cpu0, cpu1), ...(probes.provider ? { provider: perRequest(provider0, provider1) } : {}) },
    load: { start: loadStart, end: loadAverage() },
    ...(gc && total > 0
      ? { gc: { ...gcPerRequest(gc, total), scavenges: gc.scavenges, full: gc.full } }
      : {}),
  };
  if (result.non2xx > 0) {
    row.statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, v]) => [code, v.count ?? 0]));
  }
  if (hitWindow) {
    const searches = Math.round(hitWindow.b.responses - hitWindow.a.responses);
    const providerRequests = hitWindow.b.requests - hitWindow.a.requests;
    row.hit = { searches, providerRequests, ratio: searches > 0 ? Math.max(0, 1 - providerRequests / searches) : 0 };
  }
  process.stderr.write(
    `  ${row.target.padEnd(34)} ${fmt(row.rps).padStart(8)} req/s  p50 ${row.latency.p50} ms  p99 ${row.latency.p99} ms` +
      `  CPU ${micros(row.cpu.process)} µs/req${row.cpu.provider !== undefined ? ` (provider ${micros(row.cpu.provider)})` : ''}` +
      `${row.gc ? `  GC ${fmt(row.gc.usPerRequest, 1)} µs/req, ${fmt(row.gc.promotedPerRequest)} B/req promoted` : ''}` +
      `${row.hit ? `  hit ratio ${fmt(row.hit.ratio * 100, 1)} %` : ''}  non-2xx ${row.non2xx}${row.statuses ? ` ${JSON.stringify(row.statuses)}` : ''}  errors ${row.errors}\n`,
  );
  return row;
}

/** Starts a twin on `file`, checks its answers against the service's, measures it; stops it. */
async function measureTwin(
  o: HttpOptions,
  kind: 'plain' | 'hono',
  scenario: Scenario,
  file: string,
  answers: AnswersFile,
  checks: string[],
): Promise<Row> {
  const twin = await startChild<{ port: number }>(kind === 'plain' ? 'serve-plain.ts' : 'serve-hono.ts', { env: { TWIN_ANSWERS_FILE: file } });
  try {
    const diff = await checkAnswers(twin.info.port, scenario, answers, { headers: true });
    checks.push(`${scenario.name}, ${TARGET_NAMES[kind]}: ${diff ? `**differs from the service**: ${diff}` : 'same status, headers and body as the service'}`);
    return await measure(o, twin.info.port, scenario, kind, { process: ipcCpu(twin.child) });
  } finally {
    await stopChild(twin.child);
  }
}

/** The origin of the links the services hand out (PUBLIC_BASE_URL). */
const BENCH_PUBLIC_BASE_URL = 'https://channel.example';

function startService(env: Record<string, string>) {
  return startChild<ServiceInfo>('serve-service.ts', { env: { BENCH_SERVICE_ENV: JSON.stringify(env) } });
}

/**
 * The stock Yoga + Pothos twin on the service's GraphQL answer `a` (its template `t`): its answer
 * bytes must be the service's; its headers are Yoga's own (reported).
 */
async function measureYoga(o: HttpOptions, scenario: Scenario, a: RawAnswer, t: AnswerTemplate, workDir: string, checks: string[]): Promise<Row> {
  const file = join(workDir, 'yoga.json');
  writeFileSync(file, JSON.stringify({ id: '1', answer: JSON.parse(a.body.toString('utf8')) }));
  const yoga = await startChild<{ port: number }>('serve-yoga.ts', { env: { TWIN_GRAPHQL_FILE: file } });
  try {
    const got = await capture(yoga.info.port, requestOf(scenario, '/graphql'));
    const diff = differences(t, got, true).filter((d) => d !== 'another body');
    const isMissing = (d: string) => d.startsWith('no ') && d.endsWith(' header');
    const missing = diff.filter(isMissing).map((d) => d.slice(3, -7));
    const headerDiff = [...(missing.length ? [`without the service's ${missing.join(', ')}`] : []), ...diff.filter((d) => !isMissing(d))];
    checks.push(
      `${scenario.name}, ${TARGET_NAMES.yoga}: ` +
        (got.status === a.status && got.body.equals(a.body)
          ? `answer bytes equal to the service's (${a.body.length} bytes, status ${got.status})`
          : `**answer differs from the service's** (status ${got.status}, ${got.body.length} bytes: ${got.body.toString('utf8').slice(0, 200)})`) +
        `; headers: ${headerDiff.length ? `Yoga's own (${headerDiff.join('; ')})` : 'the same'}`,
    );
    return await measure(o, yoga.info.port, scenario, 'yoga', { process: ipcCpu(yoga.child) });
  } finally {
    await stopChild(yoga.child);
  }
}

/**
 * The search mix: a fresh service with the provider in process, then one with the provider out of
 * process (`npm run simulator`, UPSTREAM_URL), then the twins on the answers captured before.
 */
async function measureSearch(o: HttpOptions, search: Scenario, file: string, answers: AnswersFile, checks: string[]): Promise<Row[]> {
  const rows: Row[] = [];
  // Image links carry the service's public origin: fixed, as a deployment sets it, so services on
  // different ports give the same answers (else each link would name its own port).
  const serviceEnv = { SIMULATOR_SIZE: String(o.simulatorSize), PUBLIC_BASE_URL: BENCH_PUBLIC_BASE_URL };
  process.stderr.write(`${search.name}: provider in process\n`);
  const inProcess = await startService(serviceEnv);
  try {
    const own = { ...search, headers: { ...search.headers, 'x-api-key': inProcess.info.apiKey } };
    rows.push(await measure(o, inProcess.info.port, own, 'service', { process: ipcCpu(inProcess.child), simulatorUrl: inProcess.info.simulatorUrl, gc: inProcess.child }));
  } finally {
    await stopChild(inProcess.child);
  }
  process.stderr.write(`${search.name}: provider out of process (npm run simulator)\n`);
  const simulator = await startSimulator(o.simulatorSize);
  try {
    const outOfProcess = await startService({ ...serviceEnv, UPSTREAM_URL: simulator.url });
    try {
      // Each service process has a channel of its own: its API key.
      const own = { ...search, headers: { ...search.headers, 'x-api-key': outOfProcess.info.apiKey } };
      const diff = await checkAnswers(outOfProcess.info.port, own, answers, { headers: false, limit: 20 });
      checks.push(
        `${search.name}, ${TARGET_NAMES['service-out']}: ${diff ? `**answers differ from the in-process service's**: ${diff}` : 'the same statuses and bodies as with the provider in process (first 20 distinct searches)'}`,
      );
      rows.push(
        await measure(o, outOfProcess.info.port, own, 'service-out', {
          process: ipcCpu(outOfProcess.child),
          gc: outOfProcess.child,
          provider: () => treeCpu(simulator.pid),
          simulatorUrl: simulator.url,
        }),
      );
    } finally {
      await stopChild(outOfProcess.child);
    }
  } finally {
    await stopChild(simulator.child);
  }
  rows.push(await measureTwin(o, 'plain', search, file, answers, checks));
  rows.push(await measureTwin(o, 'hono', search, file, answers, checks));
  return rows;
}

export async function httpGroup(o: HttpOptions): Promise<{ section: string; problems: string[]; objects: GroupObject[] }> {
  const head = runLine('http', o.source);
  const workDir = mkdtempSync(join(tmpdir(), 'channel-bench-answers-'));
  const rows: Row[] = [];
  const sizes: string[] = [];
  const checks: string[] = [];
  const captureProblems: string[] = [];
  const mix = searchMix();
  // Image links carry the service's public origin: fixed, as a deployment sets it, so services on
  // different ports give the same answers (else each link would name its own port).
  const serviceEnv = { SIMULATOR_SIZE: String(o.simulatorSize), PUBLIC_BASE_URL: BENCH_PUBLIC_BASE_URL };
  let search!: Scenario;
  let searchFile = '';
  let searchAnswers!: AnswersFile;
  try {
    process.stderr.write(`bench: ${o.connections} connections, ${o.duration} s per run, ${o.warmup} s warm-up\n`);
    // Service A (provider in process): the REST and GraphQL scenarios, and the search mix's answers.
    const service = await startService(serviceEnv);
    try {
      const s = scenarios(service.info.apiKey, mix);
      search = s.search;
      for (const scenario of [s.rest, s.graphql].filter((x) => o.only.includes(x === s.rest ? 'rest' : 'graphql'))) {
        process.stderr.write(`${scenario.name}: ${scenario.method} ${scenario.paths[0]}\n`);
        const { file: answers, first } = await captureAnswers(service.info.port, scenario, captureProblems);
        const a = first.get(scenario.paths[0]!)!;
        sizes.push(`${scenario.name}: ${a.body.length} bytes, ${a.headers.length} headers`);
        const file = join(workDir, `answers-${rows.length}.json`);
        writeFileSync(file, JSON.stringify(answers));
        rows.push(await measure(o, service.info.port, scenario, 'service', { process: ipcCpu(service.child), gc: service.child }));
        rows.push(await measureTwin(o, 'plain', scenario, file, answers, checks));
        rows.push(await measureTwin(o, 'hono', scenario, file, answers, checks));
        if (scenario === s.graphql) rows.push(await measureYoga(o, scenario, a, answers.answers[0]!, workDir, checks));
      }
      if (o.only.includes('search')) {
        process.stderr.write(`${search.name}: capturing the service's answers to the ${mix.distinct.length} distinct searches\n`);
        const captured = await captureAnswers(service.info.port, search, captureProblems);
        searchAnswers = captured.file;
        const bytes = [...captured.first.values()].map((r) => r.body.length);
        sizes.push(`${search.name}: ${Math.min(...bytes)}–${Math.max(...bytes)} bytes`);
        searchFile = join(workDir, 'answers-search.json');
        writeFileSync(searchFile, JSON.stringify(searchAnswers));
      }
    } finally {
      await stopChild(service.child);
    }
    if (o.only.includes('search')) rows.push(...(await measureSearch(o, search, searchFile, searchAnswers, checks)));
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }

  const bad = rows.filter((r) => r.non2xx > 0 || r.errors > 0 || r.timeouts > 0);
  const badText = (r: Row) => `${r.scenario} / ${r.target}: non-2xx answers or errors${r.statuses ? ` (by status: ${JSON.stringify(r.statuses)})` : ''}`;
  const differing = checks.filter((c) => c.includes('**'));
  const problems = [
    ...bad.map(badText),
    ...differing.map((c) => c.replaceAll('**', '')),
    ...captureProblems.map((p) => `the service's two answers to one request differ beyond per-request values: ${p}`),
  ];
  const ratios = ratiosOf(rows);
  const section = [
    head,
    `Settings: ${o.connections} connections, ${o.duration} s per run (after ${o.warmup} s warm-up), pipelining 1; the simulator with ${o.simulatorSize} properties.`,
    '',
    table(rows, ratios),
    '',
    `CPU µs/req: the process's user + system CPU time (\`process.cpuUsage()\`, read over IPC) over the measured window ÷ requests completed; ` +
      'with the provider in process its work is in the service\'s figure; "provider" is the `npm run simulator` process tree\'s (from /proc).',
    '',
    ...gcLines(rows),
    ...(o.only.includes('search') ? [`Search query mix: ${mixText(mix)}`, ''] : []),
    ...rows
      .filter((r) => r.hit)
      .map(
        (r) =>
          `Search cache-hit ratio, ${r.target === 'service' ? 'provider in process' : 'provider out of process'}: ${fmt(r.hit!.ratio * 100, 1)} % ` +
          `(from 10 % to 90 % of the measured window, ${fmt(r.hit!.searches)} searches answered and ${fmt(r.hit!.providerRequests)} availability requests ` +
          "received by the provider, from the simulator's own counters: ratio = 1 − requests ÷ searches).",
      ),
    '',
    `Twins checked before they were measured: ${checks.join('. ')}.`,
    '',
    `Response sizes: ${sizes.join('; ')}.`,
    ...(problems.length ? ['', `**Warning:** ${problems.join('; ')}.`] : []),
    '',
    endLine(),
  ].join('\n');

  const objects = rows.map((r) => ({
    scenario: r.scenario,
    target: r.target,
    unit: 'request' as const,
    perSecond: r.rps,
    latencyMs: r.latency,
    cpuUsPerUnit: r.cpu,
    ratios: ratios.get(r) ?? {},
    count: r.total,
    failures: r.non2xx + r.errors + r.timeouts,
    details: {
      non2xx: r.non2xx,
      ...(r.statuses ? { statuses: r.statuses } : {}),
      errors: r.errors,
      timeouts: r.timeouts,
      ...(r.gc ? { gc: r.gc } : {}),
      ...(r.hit ? { hitRatio: r.hit.ratio, searchesAnswered: r.hit.searches, providerAvailabilityRequests: r.hit.providerRequests } : {}),
      ...(r.scenario === search.name ? { mix: { seed: MIX_SEED, length: mix.paths.length, distinctRequests: mix.distinct.length, distinctProviderQueries: mix.providerQueries } } : {}),
    },
    loadAverage: r.load,
    ...(r.kind === 'service' || r.kind === 'service-out' ? { service: { commit: o.source.commit, dirty: o.source.dirty, via: o.source.via, nodeEnv: o.source.nodeEnv } } : {}),
    settings: { connections: o.connections, durationSeconds: o.duration, warmupSeconds: o.warmup },
  }));
  return { section, problems, objects };
}

/**
 * The service's garbage collection per scenario: a cached read should leave about nothing in the
 * old generation (bench/README.md, "Issue 20: where the cost came from"); kilobytes there per
 * request mean its objects outlive it.
 */
function gcLines(rows: Row[]): string[] {
  const measured = rows.filter((r) => r.gc);
  if (!measured.length) return [];
  const parts = measured.map(
    (r) =>
      `${r.scenario}, ${r.target}: ${fmt(r.gc!.usPerRequest, 1)} µs/req, ${fmt(r.gc!.promotedPerRequest)} B/req promoted ` +
      `(${fmt(r.gc!.scavenges)} young, ${fmt(r.gc!.full)} full collections)`,
  );
  return [`Garbage collection of the service over the measured window (v8.GCProfiler): ${parts.join('; ')}.`, ''];
}

/** Per row, its rate ÷ each twin's of the same scenario (service rows), and the Hono and Yoga twins ÷ the plain twin; and ÷ the baseline run's. */
function ratiosOf(rows: Row[]): Map<Row, Record<string, number>> {
  const out = new Map<Row, Record<string, number>>();
  for (const r of rows) {
    const ratios: Record<string, number> = {};
    const twins = rows.filter((t) => t.scenario === r.scenario && TWIN_KEYS[t.kind] && t !== r);
    for (const t of twins) {
      if (r.kind === 'service' || r.kind === 'service-out' || t.kind === 'plain') ratios[TWIN_KEYS[t.kind]!] = r.rps / t.rps;
    }
    if (r.kind === 'plain') delete ratios.plain;
    const base = baselineOf(r.scenario, r.target);
    if (base) ratios.baseline = r.rps / base;
    out.set(r, ratios);
  }
  return out;
}

function table(rows: Row[], ratios: Map<Row, Record<string, number>>): string {
  const lines = [
    '| Scenario | Target | Req/s (avg) | vs plain | vs Hono | vs Yoga | vs baseline | p50 ms | p99 ms | CPU µs/req | provider CPU µs/req | Non-2xx | Errors |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const x = ratios.get(r) ?? {};
    const errors = r.timeouts ? `${r.errors} (${r.timeouts} timeouts)` : String(r.errors);
    lines.push(
      `| ${r.scenario} | ${r.target} | ${fmt(r.rps)} | ${ratio(x.plain)} | ${ratio(x.hono)} | ${ratio(x.yoga)} | ${ratio(x.baseline)} | ` +
        `${r.latency.p50} | ${r.latency.p99} | ${micros(r.cpu.process)} | ${r.cpu.provider === undefined ? '' : micros(r.cpu.provider)} | ${r.non2xx} | ${errors} |`,
    );
  }
  return lines.join('\n');
}
