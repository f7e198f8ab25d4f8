/**
 * A small paired measurement beside `npm run bench` (issue 18 helpers): starts the service as the
 * bench does (bench/serve-service.ts) once per variant, alternately, and reports requests per
 * second and the service's CPU µs per request of one request shape under autocannon.
 *
 *   tsx bench/measure-pair.ts <rest|graphql> <seconds> <rounds> '<json env A>' '<json env B>'
 *
 * Each env is the service's BENCH_SERVICE_ENV (e.g. {"LOG_LEVEL":"info"}); its "@dir", when given,
 * is the service directory that variant runs (BENCH_SERVICE_REF is not read here: to compare two
 * commits, give one variant the directory of an export, e.g. /tmp/channel-bench-service-<commit>
 * that `BENCH_SERVICE_REF=<commit> npm run bench` made). MEASURE_PROFILE=<file>
 * writes a CPU profile of the measured window. Besides requests per second and CPU per request,
 * each round reports the garbage collections of the measured window (serve-service's `gc`): their
 * time per request, and the bytes the young collections moved into the old generation per request
 * (what a request leaves behind: about zero for a cached read, bench/README.md "Issue 20").
 * Not part of npm run bench.
 */
import { execFileSync, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { ask, benchDir, gcPerRequest, serviceDir, serviceNodeEnv, stopChild, type GcSummary } from './children.js';

/**
 * The service as the bench starts it (bench/children.ts startChild), except that its ready line is
 * the first stdout line with a port: at LOG_LEVEL=info the service's own log lines (stdout, as in
 * production) come first. The rest of stdout is drained as the log destination.
 */
async function startService(env: string) {
  // A variant's "@dir" is the service directory it runs (an export with node_modules, such as the
  // bench's BENCH_SERVICE_REF exports under /tmp), so two commits alternate in one run.
  const { '@dir': dir, ...serviceEnv } = JSON.parse(env) as Record<string, string>;
  const cwd = dir ? resolve(dir) : serviceDir();
  const nodeEnv = serviceNodeEnv();
  const child = spawn(process.execPath, ['--import', 'tsx', join(benchDir, 'serve-service.ts')], {
    cwd,
    env: { ...process.env, ...(nodeEnv ? { NODE_ENV: nodeEnv } : {}), BENCH_SERVICE_DIR: cwd, BENCH_SERVICE_ENV: JSON.stringify(serviceEnv) },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  // MEASURE_PIN=1: the service on the second core, this process (autocannon) on the first, so the
  // two do not take turns on one core (less noise between rounds; every thread of each is pinned).
  if (process.env.MEASURE_PIN) {
    execFileSync('taskset', ['-a', '-p', '-c', '1', String(child.pid)], { stdio: 'ignore' });
    execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  }
  const lines = createInterface({ input: child.stdout! });
  const info = await new Promise<{ port: number; apiKey: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`service exited (${code})`)));
    lines.on('line', (line) => {
      try {
        const parsed = JSON.parse(line) as { port?: number; apiKey?: string };
        if (typeof parsed.port === 'number') resolve(parsed as { port: number; apiKey: string });
      } catch {
        // a log line that is not JSON
      }
    });
  });
  return { child, info };
}

const [kind = 'rest', seconds = '5', rounds = '3', ...envs] = process.argv.slice(2);
const variants = envs.length ? envs : ['{}'];
const query = 'query($id:ID!){ property(id:$id){ propertyId name city starRating roomTypes { roomtypeId name maxOccupancy } } }';

interface Measure {
  rps: number;
  cpuUs: number;
  /** Garbage collection time per request (µs), young and full. */
  gcUs: number;
  /** Bytes moved into the old generation by young collections, per request. */
  promoted: number;
  gc: GcSummary;
}

interface Running {
  env: string;
  child: Awaited<ReturnType<typeof startService>>['child'];
  run(duration: number): Promise<autocannon.Result>;
}

/** Starts the service of `env` and warms it up (caches, V8's JIT, graphql-jit). */
async function start(env: string): Promise<Running> {
  const { child, info } = await startService(env);
  const request =
    kind === 'rest'
      ? { method: 'GET' as const, path: '/channel/v1/properties/1', headers: { 'x-api-key': info.apiKey } }
      : {
          method: 'POST' as const,
          path: '/graphql',
          headers: { 'x-api-key': info.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ query, variables: { id: '1' } }),
        };
  const run = (duration: number) =>
    autocannon({ url: `http://127.0.0.1:${info.port}${request.path}`, connections: 50, duration, method: request.method, headers: request.headers, ...('body' in request ? { body: request.body } : {}) });
  // Which service answered: GET /metrics is 404 before issue 20 and 200 since.
  if (process.env.MEASURE_PROBE) console.log(`  ${env}: GET /metrics ${(await fetch(`http://127.0.0.1:${info.port}/metrics`)).status}`);
  await run(2);
  return { env, child, run };
}

/** One measured window of `seconds` on a running service. */
async function measure({ child, run }: Running): Promise<Measure> {
  const profile = process.env.MEASURE_PROFILE; // a .cpuprofile path: the measured window only
  if (profile) await ask(child, { cmd: 'profile', action: 'start', path: profile });
  await ask(child, { cmd: 'gc', action: 'start' });
  const before = await ask<{ user: number; system: number }>(child, { cmd: 'cpu' });
  const result = await run(Number(seconds));
  const after = await ask<{ user: number; system: number }>(child, { cmd: 'cpu' });
  const gc = await ask<GcSummary>(child, { cmd: 'gc', action: 'stop' });
  if (profile) await ask(child, { cmd: 'profile', action: 'stop', path: profile });
  const cpu = after.user + after.system - before.user - before.system;
  if (result.non2xx) console.log(`  ${result.non2xx} of ${result.requests.total} answers not 2xx: ${JSON.stringify(result.statusCodeStats)}`);
  const requests = result.requests.total;
  const { usPerRequest, promotedPerRequest } = gcPerRequest(gc, requests);
  return { rps: result.requests.average, cpuUs: cpu / requests, gcUs: usPerRequest, promoted: promotedPerRequest, gc };
}

function report(round: number, env: string, m: Measure): void {
  console.log(
    `round ${round} ${env}: ${m.rps.toFixed(0)} req/s, ${m.cpuUs.toFixed(1)} µs CPU/request, GC ${m.gcUs.toFixed(1)} µs/request ` +
      `(${m.gc.scavenges} young, ${m.gc.full} full), ${m.promoted.toFixed(0)} B/request promoted`,
  );
}

const results = variants.map(() => [] as Measure[]);
if (process.env.MEASURE_INTERLEAVE) {
  // Every variant runs at once; each round measures each in turn for `seconds` (the order turning
  // by one each round), so a machine whose speed drifts over minutes slows them alike.
  const running: Running[] = [];
  try {
    for (const env of variants) running.push(await start(env));
    for (let r = 0; r < Number(rounds); r++) {
      for (let k = 0; k < running.length; k++) {
        const i = (r + k) % running.length;
        const m = await measure(running[i]!);
        results[i]!.push(m);
        report(r + 1, running[i]!.env, m);
      }
    }
  } finally {
    for (const { child } of running) await stopChild(child);
  }
} else {
  for (let r = 0; r < Number(rounds); r++) {
    for (const [i, env] of variants.entries()) {
      const running = await start(env);
      try {
        const m = await measure(running);
        results[i]!.push(m);
        report(r + 1, env, m);
      } finally {
        await stopChild(running.child);
      }
    }
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [i, env] of variants.entries()) {
  const rs = results[i]!;
  // Each round's CPU per request over the first variant's in the same round: the figure that
  // tells a few percent apart on a noisy machine.
  const ratio = i === 0 ? '' : `, ${median(rs.map((m, r) => m.cpuUs / results[0]![r]!.cpuUs)).toFixed(3)}x the first's CPU/request (median of rounds)`;
  console.log(
    `${kind} ${env}: median ${median(rs.map((m) => m.rps)).toFixed(0)} req/s, ${median(rs.map((m) => m.cpuUs)).toFixed(1)} µs CPU/request, ` +
      `GC ${median(rs.map((m) => m.gcUs)).toFixed(1)} µs/request, ${median(rs.map((m) => m.promoted)).toFixed(0)} B/request promoted (${rs.length} runs)${ratio}`,
  );
}
process.exit(0);
