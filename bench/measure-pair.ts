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
 * writes a CPU profile of the measured window. Not part of npm run bench.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { ask, benchDir, serviceDir, serviceNodeEnv, stopChild } from './children.js';

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

async function once(env: string): Promise<{ rps: number; cpuUs: number }> {
  const { child, info } = await startService(env);
  try {
    const request =
      kind === 'rest'
        ? { method: 'GET' as const, path: '/channel/v1/properties/1', headers: { 'x-api-key': info.apiKey } }
        : {
            method: 'POST' as const,
            path: '/graphql',
            headers: { 'x-api-key': info.apiKey, 'content-type': 'application/json' },
            body: JSON.stringify({ query, variables: { id: '1' } }),
          };
    const run = (duration: number) => autocannon({ url: `http://127.0.0.1:${info.port}${request.path}`, connections: 50, duration, method: request.method, headers: request.headers, ...("body" in request ? { body: request.body } : {}) });
    // Which service answered: GET /metrics is 404 before issue 20 and 200 since.
    if (process.env.MEASURE_PROBE) console.log(`  ${env}: GET /metrics ${(await fetch(`http://127.0.0.1:${info.port}/metrics`)).status}`);
    await run(2); // warm up (caches, JIT of V8 and graphql-jit)
    const profile = process.env.MEASURE_PROFILE; // a .cpuprofile path: the measured window only
    if (profile) await ask(child, { cmd: 'profile', action: 'start', path: profile });
    const before = await ask<{ user: number; system: number }>(child, { cmd: 'cpu' });
    const result = await run(Number(seconds));
    const after = await ask<{ user: number; system: number }>(child, { cmd: 'cpu' });
    if (profile) await ask(child, { cmd: 'profile', action: 'stop', path: profile });
    const cpu = after.user + after.system - before.user - before.system;
    if (result.non2xx) console.log(`  ${result.non2xx} of ${result.requests.total} answers not 2xx: ${JSON.stringify(result.statusCodeStats)}`);
    return { rps: result.requests.average, cpuUs: cpu / result.requests.total };
  } finally {
    await stopChild(child);
  }
}

const results = variants.map(() => [] as { rps: number; cpuUs: number }[]);
for (let r = 0; r < Number(rounds); r++) {
  for (const [i, env] of variants.entries()) {
    const m = await once(env);
    results[i]!.push(m);
    console.log(`round ${r + 1} ${env}: ${m.rps.toFixed(0)} req/s, ${m.cpuUs.toFixed(1)} µs CPU/request`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [i, env] of variants.entries()) {
  const rs = results[i]!;
  console.log(`${kind} ${env}: median ${median(rs.map((m) => m.rps)).toFixed(0)} req/s, ${median(rs.map((m) => m.cpuUs)).toFixed(1)} µs CPU/request (${rs.length} runs)`);
}
process.exit(0);
