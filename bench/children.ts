/**
 * Child processes of `npm run bench`: each bench server or client runs as
 * `node [flags] --import tsx bench/<script>`, prints one JSON line on stdout when it is ready, and
 * may answer requests over the IPC channel ({ id, ...request } → { id, ok, value | error }).
 * Every child started here is stopped when the bench ends, however it ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const benchDir = dirname(fileURLToPath(import.meta.url));
export const rootDir = dirname(benchDir);

const children = new Set<ChildProcess>();
/** Children started in a process group of their own (stopped by signalling the group). */
const groups = new WeakSet<ChildProcess>();

/** Where the service's processes run: BENCH_SERVICE_DIR (set by bench/service-dir.ts), else this checkout. */
export function serviceDir(): string {
  return process.env.BENCH_SERVICE_DIR || rootDir;
}

/**
 * The NODE_ENV the measured checkout's `npm start` gives the service (`NODE_ENV=… node …` in its
 * package.json's start script), or undefined when it sets none: the service runs as it is started
 * in production.
 */
export function serviceNodeEnv(): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(serviceDir(), 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    return /(?:^|\s)NODE_ENV=(\S+)/.exec(pkg.scripts?.start ?? '')?.[1];
  } catch {
    return undefined;
  }
}

/** The environment of a child: this process's, `extra`, and NODE_ENV as the child should have it. */
function childEnv(script: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  if (script === 'serve-service.ts') {
    // As `npm start` runs it (e.g. NODE_ENV=production), or without NODE_ENV when it sets none.
    const nodeEnv = serviceNodeEnv();
    if (nodeEnv) env.NODE_ENV = nodeEnv;
    else delete env.NODE_ENV;
  } else if (script === 'serve-yoga.ts') {
    delete env.NODE_ENV; // stock Yoga: its defaults, whatever this shell says
  }
  return env;
}

export interface ChildOptions {
  /** Extra environment entries (the rest is this process's environment). */
  env?: Record<string, string>;
  /** Flags for node before `--import tsx` (e.g. --expose-gc). */
  nodeFlags?: string[];
  /** Open file descriptors the child needs: its soft RLIMIT_NOFILE is raised to this (up to the hard limit) when lower. */
  openFiles?: number;
}

export interface Child<T> {
  child: ChildProcess;
  info: T;
}

/** Soft and hard RLIMIT_NOFILE of this process (Linux), or null elsewhere. */
export function openFileLimits(): { soft: number; hard: number } | null {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const m = line && /Max open files\s+(\S+)\s+(\S+)/.exec(line);
    if (!m) return null;
    const n = (s: string) => (s === 'unlimited' ? Number.POSITIVE_INFINITY : Number(s));
    return { soft: n(m[1]!), hard: n(m[2]!) };
  } catch {
    return null;
  }
}

/**
 * The command that starts `script`: node directly, or through `sh -c 'ulimit -n N; exec node …'`
 * when the child needs more open files than this process's soft limit allows (Node cannot raise
 * its own). Fails when the hard limit is below what is needed.
 */
function command(script: string, options: ChildOptions): { file: string; args: string[] } {
  // BENCH_SERVICE_NODE_FLAGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") go to the service's node.
  const extra = script === 'serve-service.ts' ? (process.env.BENCH_SERVICE_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean) : [];
  const nodeArgs = [...(options.nodeFlags ?? []), ...extra, '--import', 'tsx', join(benchDir, script)];
  const need = options.openFiles;
  const limits = need ? openFileLimits() : null;
  if (!need || !limits || limits.soft >= need) return { file: process.execPath, args: nodeArgs };
  if (limits.hard < need) {
    throw new Error(
      `${script} needs ${need} open files, but the hard limit (ulimit -Hn) is ${limits.hard}: raise it (as root: ulimit -Hn ${need}) and run again`,
    );
  }
  return { file: '/bin/sh', args: ['-c', `ulimit -n ${need} && exec "$0" "$@"`, process.execPath, ...nodeArgs] };
}

/** Starts a bench child and resolves with the JSON of its first stdout line. */
export async function startChild<T>(script: string, options: ChildOptions = {}): Promise<Child<T>> {
  const { file, args } = command(script, options);
  const child = spawn(file, args, {
    // The service runs in the checkout measured, with its node_modules (bench/service-dir.ts).
    cwd: script === 'serve-service.ts' ? serviceDir() : rootDir,
    env: childEnv(script, options.env),
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
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

export interface SimulatorChild {
  child: ChildProcess;
  /** pid of `npm run simulator` (the root of its process tree: npm, sh, tsx, node). */
  pid: number;
  url: string;
  port: number;
}

/**
 * The provider simulator in a process of its own, started as its README says: `npm run simulator`
 * in this checkout, on a free loopback port (SIMULATOR_PORT=0), `size` properties, seed 42. Resolves
 * once it logs that it listens.
 */
export async function startSimulator(size: number): Promise<SimulatorChild> {
  const child = spawn('npm', ['run', '--silent', 'simulator'], {
    cwd: rootDir,
    env: { ...process.env, SIMULATOR_PORT: '0', SIMULATOR_HOST: '127.0.0.1', SIMULATOR_SIZE: String(size), SIMULATOR_SEED: '42', SIMULATOR_VOLATILITY: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  children.add(child);
  groups.add(child);
  child.once('exit', () => children.delete(child));
  const info = await new Promise<{ url: string; port: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('npm run simulator did not start within 120 s')), 120_000);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      let entry: { msg?: string; url?: string; port?: number };
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (entry.msg === 'simulator listening' && entry.url && entry.port) {
        clearTimeout(timer);
        resolve({ url: entry.url, port: entry.port });
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`npm run simulator exited before it listened (code ${code}, signal ${signal})`));
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
  child.stdout!.resume();
  return { child, pid: child.pid!, ...info };
}

/** The simulator's request counters (GET /_control/stats): protocol requests by route. */
export async function simulatorStats(url: string): Promise<Record<string, number>> {
  const res = await fetch(`${url}/_control/stats`);
  if (!res.ok) throw new Error(`GET /_control/stats answered ${res.status}`);
  return ((await res.json()) as { by_route: Record<string, number> }).by_route;
}

/** SIGTERM, then SIGKILL if the child is still there after 15 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (name: NodeJS.Signals) => {
    if (groups.has(child) && child.pid) {
      try {
        process.kill(-child.pid, name);
        return;
      } catch {
        // the group is gone already
      }
    }
    child.kill(name);
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

export function stopAllChildren(): Promise<void> {
  return Promise.all([...children].map(stopChild)).then(() => undefined);
}

process.once('exit', () => {
  for (const child of children) {
    if (groups.has(child) && child.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
        continue;
      } catch {
        // gone
      }
    }
    child.kill('SIGTERM');
  }
});

let nextRequest = 0;

/** Sends `message` to a child over IPC and resolves with its answer's value (rejects with its error). */
export function ask<T>(child: ChildProcess, message: Record<string, unknown>, timeoutMs = 120_000): Promise<T> {
  const id = ++nextRequest;
  return new Promise<T>((resolve, reject) => {
    const onMessage = (reply: { id?: number; ok?: boolean; value?: T; error?: string }) => {
      if (reply?.id !== id) return;
      finish();
      if (reply.ok) resolve(reply.value as T);
      else reject(new Error(`${String(message.cmd)}: ${reply.error}`));
    };
    const onExit = () => {
      finish();
      reject(new Error(`the child exited while answering ${String(message.cmd)}`));
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`no answer to ${String(message.cmd)} within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send({ ...message, id });
  });
}

/** The child side of `ask`: answers each IPC request with handler's value or error. */
export function answerRequests(handler: (message: Record<string, unknown> & { cmd: string }) => Promise<unknown>): void {
  if (!process.send) return;
  process.on('message', (message: Record<string, unknown> & { id: number; cmd: string }) => {
    void handler(message).then(
      (value) => process.send!({ id: message.id, ok: true, value }),
      (error: unknown) => process.send!({ id: message.id, ok: false, error: error instanceof Error ? error.stack ?? error.message : String(error) }),
    );
  });
  // The channel keeps the child alive; its loss (the orchestrator gone) stops it.
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}

/** Wall-clock time in milliseconds with sub-millisecond resolution (comparable across processes of one machine). */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** A child's answer to `cpu`: its user and system CPU time so far (process.cpuUsage(), µs) and the wall clock (ms). */
export function cpuReading(): NodeJS.CpuUsage & { at: number } {
  return { ...process.cpuUsage(), at: wallNow() };
}

/**
 * A service's answer to `gc` { action: 'stop' } (serve-service.ts): the garbage collections since
 * `start` (v8.GCProfiler), young (scavenges) and full, their count and time in ms, and the bytes
 * the young ones moved into the old generation.
 */
export interface GcSummary {
  scavenges: number;
  scavengeMs: number;
  full: number;
  fullMs: number;
  promoted: number;
}

/** A GC summary per request of its window: collection time (µs) and bytes promoted. */
export function gcPerRequest(gc: GcSummary, requests: number): { usPerRequest: number; promotedPerRequest: number } {
  return { usPerRequest: ((gc.scavengeMs + gc.fullMs) * 1000) / requests, promotedPerRequest: gc.promoted / requests };
}

/** The child side of a server the bench starts: SIGTERM or SIGINT closes it, its open connections too, then exits. */
export function stopOnSignals(server: Server): void {
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/** Listens on a free port of 127.0.0.1 and prints `{"port":…}` as one JSON line on stdout, which startChild reads. */
export function listenAndAnnounce(server: Server): void {
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`${JSON.stringify({ port })}\n`);
  });
}

/** The child side of a twin: stops on signals, answers `cpu` over IPC, listens and prints its port. */
export function serveTwin(server: Server): void {
  stopOnSignals(server);
  answerRequests(async (message) => {
    if (message.cmd === 'cpu') return cpuReading();
    throw new Error(`unknown request ${message.cmd}`);
  });
  listenAndAnnounce(server);
}

/**
 * With BENCH_PROFILE_DIR set, a CPU profile of the service (bench/serve-service.ts) around `fn`,
 * written to BENCH_PROFILE_DIR/<name>.cpuprofile (open it in Chrome DevTools); otherwise just fn().
 */
export async function profiled<T>(service: ChildProcess, name: string, fn: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return fn();
  await ask(service, { cmd: 'profile', action: 'start' });
  try {
    return await fn();
  } finally {
    const path = join(dir, `${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.cpuprofile`);
    process.stderr.write(`  CPU profile: ${String(await ask(service, { cmd: 'profile', action: 'stop', path }))}\n`);
  }
}
