/**
 * Which checkout's service `npm run bench` measures. The bench's own code (load generators, twins,
 * reports) is always this checkout's; the service processes (bench/serve-service.ts imports the
 * service's src/app.ts, src/config.ts and src/services/channels from there, and runs with it as its
 * working directory, so with its own node_modules) come from:
 *
 * - BENCH_SERVICE_DIR: a checkout of the service, with its dependencies installed (`npm ci`);
 * - BENCH_SERVICE_REF: a commit (or anything `git rev-parse` takes) of this repository, exported
 *   with `git archive` into $TMPDIR/channel-bench-service-<commit> and installed with `npm ci`
 *   the first time (a minute or two), reused afterwards;
 * - neither: this checkout.
 *
 * The provider simulator started with `npm run simulator` (the out-of-process runs) is always this
 * checkout's, so the provider is the same whichever service is measured.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { rootDir, serviceNodeEnv } from './children.js';

export interface ServiceSource {
  dir: string;
  /** The commit measured, when known; `dirty` when the checkout has uncommitted changes. */
  commit: string | null;
  dirty: boolean;
  /** How it was chosen, for the reports. */
  via: 'this checkout' | 'BENCH_SERVICE_DIR' | 'BENCH_SERVICE_REF';
  /** NODE_ENV the service runs with: what its checkout's `npm start` sets, else none. */
  nodeEnv: string | null;
}

function git(dir: string, args: string[]): string | null {
  const r = spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function describe(dir: string, via: ServiceSource['via']): Omit<ServiceSource, 'nodeEnv'> {
  const commit = git(dir, ['rev-parse', 'HEAD']);
  const status = commit ? git(dir, ['status', '--porcelain', '--untracked-files=no']) : null;
  return { dir, commit, dirty: Boolean(status), via };
}

/** Exports `ref` into a directory of its own and installs it, once; returns the directory. */
function prepare(ref: string): { dir: string; commit: string } {
  const commit = git(rootDir, ['rev-parse', '--verify', `${ref}^{commit}`]);
  if (!commit) throw new Error(`BENCH_SERVICE_REF: "${ref}" is not a commit of ${rootDir}`);
  const dir = join(tmpdir(), `channel-bench-service-${commit.slice(0, 12)}`);
  const ready = join(dir, '.bench-ready');
  if (existsSync(ready)) return { dir, commit };
  process.stderr.write(`bench: exporting ${commit.slice(0, 12)} into ${dir} and installing it (npm ci)…\n`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git -C "${rootDir}" archive "${commit}" | tar -x -C "${dir}"`], { stdio: ['ignore', 'inherit', 'inherit'] });
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', process.stderr, 'inherit'] });
  writeFileSync(ready, `${commit}\n`);
  return { dir, commit };
}

/**
 * Resolves the service to measure from the environment, and sets BENCH_SERVICE_DIR (absolute) so
 * that every child process started afterwards runs that service.
 */
export function resolveServiceSource(): ServiceSource {
  const ref = process.env.BENCH_SERVICE_REF;
  const dirEnv = process.env.BENCH_SERVICE_DIR;
  if (ref && dirEnv) throw new Error('set BENCH_SERVICE_DIR or BENCH_SERVICE_REF, not both');
  let source: Omit<ServiceSource, 'nodeEnv'>;
  if (ref) {
    const { dir, commit } = prepare(ref);
    source = { dir, commit, dirty: false, via: 'BENCH_SERVICE_REF' };
  } else if (dirEnv) {
    const dir = resolve(dirEnv);
    if (!existsSync(join(dir, 'src', 'app.ts'))) throw new Error(`BENCH_SERVICE_DIR: ${dir} has no src/app.ts`);
    if (!existsSync(join(dir, 'node_modules'))) throw new Error(`BENCH_SERVICE_DIR: ${dir} has no node_modules (run npm ci there)`);
    source = describe(dir, 'BENCH_SERVICE_DIR');
  } else {
    source = describe(rootDir, 'this checkout');
  }
  process.env.BENCH_SERVICE_DIR = source.dir;
  return { ...source, nodeEnv: serviceNodeEnv() ?? null };
}
