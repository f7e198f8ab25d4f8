/**
 * CPU time of the processes a bench scenario measures, besides the service's own (which it reads
 * with process.cpuUsage() over IPC, bench/serve-service.ts):
 *
 * - a process tree (the provider simulator started with `npm run simulator`: npm, its shell, tsx
 *   and the simulator's node), from /proc/<pid>/stat: user + system time of each process, plus
 *   what it has collected of its ended children;
 * - PostgreSQL on this machine: the backends of the service's sessions (pg_stat_activity by
 *   application_name, then /proc/<pid>/stat of each), and every process of the server (the
 *   postmaster's ended children included: its cutime/cstime), which counts the WAL writer,
 *   checkpointer and autovacuum, and anyone else's sessions too.
 *
 * Linux only; elsewhere (or when PostgreSQL is not on this machine) the readings are null and the
 * reports say so.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

let ticks: number | undefined;
/** Clock ticks per second of /proc's times (getconf CLK_TCK; 100 on Linux). */
function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

interface Stat {
  pid: number;
  comm: string;
  ppid: number;
  /** utime + stime, µs. */
  own: number;
  /** cutime + cstime (ended children it has waited for), µs. */
  children: number;
}

function readStat(pid: number): Stat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // pid (comm) state ppid … utime(14) stime(15) cutime(16) cstime(17); comm may hold spaces.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const f = text.slice(close + 2).split(' ');
  const us = (i: number) => (Number(f[i - 3]) / clockTicks()) * 1e6;
  return { pid, comm, ppid: Number(f[1]), own: us(14) + us(15), children: us(16) + us(17) };
}

function allStats(): Stat[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: Stat[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(Number(name));
    if (s) out.push(s);
  }
  return out;
}

/** CPU µs used so far by `root` and every process under it (ended ones they collected included); null off Linux. */
export function treeCpu(root: number): number | null {
  const stats = allStats();
  if (!stats.length) return null;
  const byParent = new Map<number, Stat[]>();
  for (const s of stats) byParent.set(s.ppid, [...(byParent.get(s.ppid) ?? []), s]);
  const top = stats.find((s) => s.pid === root);
  if (!top) return null;
  let total = 0;
  const queue = [top];
  while (queue.length) {
    const s = queue.pop()!;
    total += s.own + s.children;
    queue.push(...(byParent.get(s.pid) ?? []));
  }
  return total;
}

/** CPU µs of every `postgres` process of this machine, the postmaster's ended children included; null if none is visible. */
function postgresServerCpu(): number | null {
  const stats = allStats().filter((s) => s.comm === 'postgres' || s.comm.startsWith('postgres:'));
  if (!stats.length) return null;
  const pids = new Set(stats.map((s) => s.pid));
  let total = 0;
  for (const s of stats) {
    total += s.own;
    // The postmaster (a postgres process whose parent is not one) holds its ended backends' time.
    if (!pids.has(s.ppid)) total += s.children;
  }
  return total;
}

export interface PostgresCpu {
  /** The service's sessions' backends, µs over the window; null when they cannot be read. */
  sessions: number | null;
  /** Backends seen (at either end) and those gone before the end (their time after the start is missing). */
  backends: number;
  gone: number;
  /** Every PostgreSQL process of the machine, µs over the window; null when not visible. */
  server: number | null;
  /** Why a figure is null. */
  note?: string;
}

/**
 * Measures PostgreSQL's CPU over a window: `start()` at its beginning, `stop()` at its end. The
 * service's sessions are those whose application_name is `applicationName`.
 */
export function postgresCpu(url: string, applicationName: string): { start(): Promise<void>; stop(): Promise<PostgresCpu> } {
  const client = new pg.Client({ connectionString: url });
  let connected: Promise<void> | undefined;
  let first = new Map<number, number>();
  let serverFirst: number | null = null;
  let local = true;
  const backends = async (): Promise<Map<number, number>> => {
    connected ??= client.connect().then(() => undefined);
    await connected;
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
    const out = new Map<number, number>();
    for (const { pid } of rows) {
      const s = readStat(pid);
      if (s) out.set(pid, s.own);
      else local = false;
    }
    return out;
  };
  return {
    async start() {
      first = await backends();
      serverFirst = postgresServerCpu();
    },
    async stop() {
      const last = await backends();
      const serverLast = postgresServerCpu();
      await client.end();
      let sessions = 0;
      let gone = 0;
      for (const [pid, at] of last) sessions += at - (first.get(pid) ?? 0);
      for (const pid of first.keys()) if (!last.has(pid)) gone++;
      const seen = new Set([...first.keys(), ...last.keys()]).size;
      const server = serverFirst !== null && serverLast !== null ? serverLast - serverFirst : null;
      if (!local || (seen === 0 && server === null)) {
        return { sessions: null, backends: seen, gone, server, note: 'PostgreSQL runs where this machine\'s /proc does not show it' };
      }
      return { sessions: seen ? sessions : null, backends: seen, gone, server, ...(seen ? {} : { note: 'no session of the service was seen' }) };
    },
  };
}
