/**
 * Where `npm run bench` writes its figures: its block of bench/README.md (between the markers
 * `<!-- results:<group>:start -->` and `…:end -->`, or `results:<group>:<run>` for a named run such
 * as the baseline), and bench/results.json, one object per scenario and target (the format is
 * described in bench/README.md). A group's run replaces that group's block and that group's
 * objects of the same run; everything else is kept.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, type as osType } from 'node:os';
import { join } from 'node:path';
import { benchDir } from './children.js';
import type { ServiceSource } from './service-dir.js';

export const GROUPS = ['http', 'flow', 'webhooks', 'subscriptions', 'fault', 'content'] as const;
export type Group = (typeof GROUPS)[number];

const readmePath = join(benchDir, 'README.md');
const resultsPath = join(benchDir, 'results.json');

/** The run's name: `latest` (default) or another (BENCH_RUN, e.g. `baseline`), which has blocks and objects of its own. */
export const RUN = process.env.BENCH_RUN || 'latest';
if (!/^[a-z0-9][a-z0-9-]*$/.test(RUN)) throw new Error(`BENCH_RUN must be lower-case letters, digits and dashes, got "${RUN}"`);

/** The command as typed (read before bench/service-dir.ts sets BENCH_SERVICE_DIR for the children). */
export const COMMAND = (() => {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  const settings = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_'))
    .map(([k, v]) => `${k}=${v}`)
    .sort();
  return `${settings.length ? `${settings.join(' ')} ` : ''}npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`;
})();

export function fmt(value: number, digits = 0): string {
  return Number.isFinite(value) ? value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';
}

/** A ratio as the issue writes them: 0.12x. */
export function ratio(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '';
  return `${value < 0.1 ? value.toFixed(3) : value.toFixed(2)}x`;
}

/** µs, or n/a. */
export function micros(value: number | null | undefined): string {
  return value === null || value === undefined || !Number.isFinite(value) ? 'n/a' : fmt(value, 0);
}

export function cpuModel(): string {
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

export interface Machine {
  cpu: string;
  cores: number;
  node: string;
  os: string;
}

export function machine(): Machine {
  return { cpu: cpuModel(), cores: cpus().length, node: process.version, os: `${osType()} ${release()}` };
}

export function loadAverage(): number[] {
  return loadavg().map((v) => Math.round(v * 100) / 100);
}

/** The first line of every block: when, where, how, and what. */
export function runLine(group: Group, source: ServiceSource): string {
  const m = machine();
  const nodeEnv = source.nodeEnv;
  const service =
    (source.via === 'this checkout'
      ? `service: this checkout${source.commit ? ` (${source.commit.slice(0, 12)}${source.dirty ? ', with uncommitted changes' : ''})` : ''}`
      : `service: ${source.via} ${source.commit ? source.commit.slice(0, 12) : source.dir}${source.dirty ? ' (with uncommitted changes)' : ''}`) +
    `, ${nodeEnv ? `NODE_ENV=${nodeEnv}` : 'NODE_ENV unset'} as its \`npm start\``;
  return (
    `Run${RUN === 'latest' ? '' : ` \`${RUN}\``} on ${new Date().toISOString().slice(0, 10)} — CPU: ${m.cpu}, ${m.cores} cores, Node ${m.node}; ${service}. ` +
    `Command: \`${COMMAND}\` (scenario \`${group}\`). Load average when the scenario started: ${loadAverage().map((v) => fmt(v, 2)).join(', ')} (the machine is shared).`
  );
}

/** The last line of every block. */
export function endLine(): string {
  return `Load average when the scenario ended: ${loadAverage().map((v) => fmt(v, 2)).join(', ')}.`;
}

const README_FALLBACK = `# Benchmarks

\`npm run bench\` (bench/run.ts) measures the channel service; \`npm run bench -- <scenario…>\` runs
some of its scenarios (${GROUPS.join(', ')}). The figures below are rewritten by each run, each
scenario in its own block.
`;

function blockName(group: Group): string {
  return RUN === 'latest' ? group : `${group}:${RUN}`;
}

/** Replaces the block of `group` (of this run) in bench/README.md (appended at the end when the file has none). */
export function writeReadme(group: Group, section: string): void {
  let text: string;
  try {
    text = readFileSync(readmePath, 'utf8');
  } catch {
    text = README_FALLBACK;
  }
  const START = `<!-- results:${blockName(group)}:start -->`;
  const END = `<!-- results:${blockName(group)}:end -->`;
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) text = `${text.trimEnd()}\n\n${START}\n${END}\n`;
  const s = text.indexOf(START) + START.length;
  const e = text.indexOf(END);
  writeFileSync(readmePath, `${text.slice(0, s)}\n${section}\n${text.slice(e)}`);
}

// ---------------------------------------------------------------------------------------------
// bench/results.json

export interface Latencies {
  p50: number;
  p90?: number;
  p99: number;
  max?: number;
}

/** One scenario and target of one run (see "bench/results.json" in bench/README.md). */
export interface ResultObject {
  group: Group;
  run: string;
  scenario: string;
  target: string;
  /** What is counted: request, flow, transaction, event (delivered), delivery (to one subscriber), restart (fault: rows in flight at the kill), download (content: one file). */
  unit: 'request' | 'flow' | 'transaction' | 'event' | 'delivery' | 'restart' | 'download';
  perSecond: number | null;
  latencyMs: Latencies | null;
  /** CPU µs per unit: the target's own process (the service, a twin), the provider, PostgreSQL. */
  cpuUsPerUnit: {
    process: number | null;
    provider?: number | null;
    postgresSessions?: number | null;
    postgresServer?: number | null;
  };
  /** perSecond ÷ the named twin's (or the baseline run's) perSecond, measured in the same run. */
  ratios: Record<string, number>;
  /** Units completed in the measured window, and failures (non-2xx, errors, timeouts, failed steps). */
  count: number;
  failures: number;
  details?: Record<string, unknown>;
  service?: { commit: string | null; dirty: boolean; via: string; nodeEnv: string | null };
  machine: Machine;
  loadAverage: { start: number[]; end: number[] };
  date: string;
  settings: Record<string, string | number>;
  command: string;
}

function readResults(): ResultObject[] {
  try {
    const parsed = JSON.parse(readFileSync(resultsPath, 'utf8')) as unknown;
    return Array.isArray(parsed) ? (parsed as ResultObject[]) : [];
  } catch {
    return [];
  }
}

/** perSecond of the baseline run's object for this scenario and target, if results.json has one. */
export function baselineOf(scenario: string, target: string): number | undefined {
  if (RUN === 'baseline') return undefined;
  const o = readResults().find((r) => r.run === 'baseline' && r.scenario === scenario && r.target === target);
  return o?.perSecond ?? undefined;
}

/**
 * Replaces the objects of `group` of this run in bench/results.json with `objects`; with
 * `byScenario` (a group run in part), only those of the scenarios `objects` has.
 */
export function writeResults(group: Group, objects: ResultObject[], byScenario = false): void {
  const scenarios = new Set(objects.map((o) => o.scenario));
  const kept = readResults().filter((r) => !(r.group === group && r.run === RUN && (!byScenario || scenarios.has(r.scenario))));
  const all = [...kept, ...objects].sort(
    (a, b) => GROUPS.indexOf(a.group) - GROUPS.indexOf(b.group) || (a.run === b.run ? 0 : a.run === 'baseline' ? -1 : b.run === 'baseline' ? 1 : a.run < b.run ? -1 : 1),
  );
  writeFileSync(resultsPath, `${JSON.stringify(all, null, 2)}\n`);
}

/** An object as a group makes it; bench/run.ts adds the rest. */
export type GroupObject = Omit<ResultObject, 'group' | 'run' | 'machine' | 'date' | 'command'>;

/** Completes a group's objects with what every object of the run shares. */
export function complete(group: Group, objects: GroupObject[]): ResultObject[] {
  const date = new Date().toISOString();
  const m = machine();
  return objects.map((o) => ({ group, run: RUN, ...o, machine: m, date, command: COMMAND }));
}
