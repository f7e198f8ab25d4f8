/**
 * The PostgreSQL part of `npm run bench`: complete v1 booking flows (availability → price check →
 * book) driven by virtual users against the service, and pgbench's TPC-B on the same database.
 * Used by bench/run.ts.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';

// ---------------------------------------------------------------------------------------------
// Statistics

export interface Latency {
  count: number;
  avg: number;
  p50: number;
  p99: number;
}

/** Nearest-rank percentiles (ms) of a list of latencies (ms). */
export function summarize(values: number[]): Latency {
  if (!values.length) return { count: 0, avg: 0, p50: 0, p99: 0 };
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { count: sorted.length, avg: sum / sorted.length, p50: at(0.5), p99: at(0.99) };
}

function bump(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

// ---------------------------------------------------------------------------------------------
// v1 booking flows

export type Step = 'availability' | 'price check' | 'book';
export const STEPS: readonly Step[] = ['availability', 'price check', 'book'];

export interface FlowOptions {
  port: number;
  apiKey: string;
  users: number;
  warmupSeconds: number;
  seconds: number;
  /** Property ids 1..properties are used in turn (SIMULATOR_SIZE). */
  properties: number;
  /** Number of the first flow (slotOf), so that several runs against one service book different slots; default 0. */
  firstFlow?: number;
  /** Called just before the measured phase starts, and once its last flow has ended (CPU readings). */
  beforeMeasured?: () => Promise<void>;
  afterMeasured?: () => Promise<void>;
}

export interface StepResult {
  /** Requests answered (any status), with their latencies. */
  latency: Latency;
  /** Answers that are neither the expected success nor a counted sold-out, by "status CODE", and transport errors. */
  failures: Map<string, number>;
}

export interface FlowResult {
  users: number;
  /** Number of the flow after the last one started (the next run's firstFlow). */
  nextFlow: number;
  seconds: number;
  /** Flows that ended in a 201 booking within the measured window. */
  completed: number;
  flowsPerSecond: number;
  /** Latency of whole completed flows (first request sent to booking received). */
  flow: Latency;
  steps: Record<Step, StepResult>;
  /** Flows started in the measured window. */
  started: number;
  /** Searches in which no rate was bookable (every room type sold out, or no token). */
  nothingBookable: number;
  priceCheck: { matched: number; price_changed: number; sold_out: number };
  /** 409 answers to the booking: SOLD_OUT and PRICE_CHANGED. */
  bookConflicts: Map<string, number>;
  /** Statuses of the bookings made (confirmed, pending). */
  bookingStatuses: Map<string, number>;
  /** Bookings whose totalAmount differed from the price check's billable inclusive total. */
  amountMismatches: number;
  /** Every booking made during warm-up and measurement: count and sum of totalAmount (KRW). */
  booked: { count: number; amount: bigint };
}

interface Phase {
  end: number;
  started: number;
  completed: number;
  flowLatencies: number[];
  stepLatencies: Record<Step, number[]>;
  failures: Record<Step, Map<string, number>>;
  nothingBookable: number;
  priceCheck: { matched: number; price_changed: number; sold_out: number };
  bookConflicts: Map<string, number>;
  bookingStatuses: Map<string, number>;
  amountMismatches: number;
}

function newPhase(end: number): Phase {
  return {
    end,
    started: 0,
    completed: 0,
    flowLatencies: [],
    stepLatencies: { availability: [], 'price check': [], book: [] },
    failures: { availability: new Map(), 'price check': new Map(), book: new Map() },
    nothingBookable: 0,
    priceCheck: { matched: 0, price_changed: 0, sold_out: 0 },
    bookConflicts: new Map(),
    bookingStatuses: new Map(),
    amountMismatches: 0,
  };
}

const DAY_MS = 86_400_000;
/** First check-in, days from today; stays are one night (fewer stays meet a sold-out night). */
const FIRST_CHECKIN_DAYS = 14;
/** Distinct nights before they repeat: the last check-in stays within the 500-day limit. */
const NIGHTS_USED = 480;

/**
 * Flow number n books property 1 + n mod P for night ⌊n / P⌋ (mod 480) after the first check-in,
 * so consecutive flows touch different properties and a (property, night) comes back only every
 * P × 480 flows: the simulator's stock (up to 20 rooms per room type and night) never runs out.
 */
export function slotOf(n: number, properties: number, today: number): { propertyId: number; checkin: string; checkout: string } {
  const night = Math.floor(n / properties) % NIGHTS_USED;
  const start = today + (FIRST_CHECKIN_DAYS + night) * DAY_MS;
  const iso = (t: number) => new Date(t).toISOString().slice(0, 10);
  return { propertyId: 1 + (n % properties), checkin: iso(start), checkout: iso(start + DAY_MS) };
}

interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export async function runFlows(options: FlowOptions): Promise<FlowResult> {
  const pool = new Pool(`http://127.0.0.1:${options.port}`, { connections: options.users, pipelining: 1 });
  const headers = { 'x-api-key': options.apiKey };
  const jsonHeaders = { ...headers, 'content-type': 'application/json' };
  const todayUtc = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  let next = options.firstFlow ?? 0;
  const booked = { count: 0, amount: 0n };

  async function call(phase: Phase, step: Step, method: 'GET' | 'POST', path: string, body?: string): Promise<Answer | null> {
    const t0 = performance.now();
    try {
      const res = await pool.request({ method, path, headers: body === undefined ? headers : jsonHeaders, ...(body === undefined ? {} : { body }) });
      const text = await res.body.text();
      phase.stepLatencies[step].push(performance.now() - t0);
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        // reported below by status
      }
      return { status: res.statusCode, body: parsed };
    } catch (error) {
      bump(phase.failures[step], `error ${(error as { code?: string }).code ?? (error as Error).name}`);
      return null;
    }
  }

  function fail(phase: Phase, step: Step, answer: Answer): void {
    const code = answer.body?.error?.code;
    bump(phase.failures[step], code ? `${answer.status} ${code}` : String(answer.status));
  }

  async function oneFlow(phase: Phase): Promise<void> {
    const { propertyId, checkin, checkout } = slotOf(next++, options.properties, todayUtc);
    phase.started++;
    const t0 = performance.now();

    const search = await call(phase, 'availability', 'GET', `/channel/v1/search/availability/${propertyId}?checkin=${checkin}&checkout=${checkout}&adults=2`);
    if (!search) return;
    if (search.status !== 200 || !Array.isArray(search.body?.data?.room_types)) return fail(phase, 'availability', search);
    let token: string | undefined;
    for (const room of search.body.data.room_types) {
      const rate = room.rates?.find((r: { price_check_token?: string | null; available_rooms?: number }) => r.price_check_token && (r.available_rooms ?? 0) >= 1);
      if (rate) {
        token = rate.price_check_token;
        break;
      }
    }
    if (!token) {
      phase.nothingBookable++;
      return;
    }

    const check = await call(phase, 'price check', 'GET', `/channel/v1/search/price-check?token=${encodeURIComponent(token)}`);
    if (!check) return;
    const checked = check.body?.data;
    if (check.status !== 200 || !checked) return fail(phase, 'price check', check);
    if (checked.status === 'sold_out' || !checked.book_token) {
      phase.priceCheck.sold_out++;
      return;
    }
    if (checked.status === 'matched' || checked.status === 'price_changed') phase.priceCheck[checked.status as 'matched' | 'price_changed']++;

    const book = await call(phase, 'book', 'POST', '/channel/v1/bookings', JSON.stringify({ book_token: checked.book_token, booker_name: 'Bench Booker' }));
    if (!book) return;
    const record = book.body?.data;
    if (book.status === 409 && (book.body?.error?.code === 'SOLD_OUT' || book.body?.error?.code === 'PRICE_CHANGED')) {
      bump(phase.bookConflicts, book.body.error.code);
      return;
    }
    if (book.status !== 201 || !record?.id) return fail(phase, 'book', book);
    const done = performance.now();
    booked.count++;
    booked.amount += BigInt(record.totalAmount);
    bump(phase.bookingStatuses, String(record.status));
    if (record.totalAmount !== String(checked.pricing?.billable_totals?.inclusive_amount)) phase.amountMismatches++;
    phase.flowLatencies.push(done - t0);
    if (done <= phase.end) phase.completed++;
  }

  async function runPhase(seconds: number): Promise<Phase> {
    const phase = newPhase(performance.now() + seconds * 1000);
    await Promise.all(
      Array.from({ length: options.users }, async () => {
        while (performance.now() < phase.end) await oneFlow(phase);
      }),
    );
    return phase;
  }

  try {
    if (options.warmupSeconds > 0) await runPhase(options.warmupSeconds);
    await options.beforeMeasured?.();
    const p = await runPhase(options.seconds);
    await options.afterMeasured?.();
    const steps = Object.fromEntries(
      STEPS.map((step) => [step, { latency: summarize(p.stepLatencies[step]), failures: p.failures[step] }]),
    ) as Record<Step, StepResult>;
    return {
      users: options.users,
      nextFlow: next,
      seconds: options.seconds,
      completed: p.completed,
      flowsPerSecond: p.completed / options.seconds,
      flow: summarize(p.flowLatencies),
      steps,
      started: p.started,
      nothingBookable: p.nothingBookable,
      priceCheck: p.priceCheck,
      bookConflicts: p.bookConflicts,
      bookingStatuses: p.bookingStatuses,
      amountMismatches: p.amountMismatches,
      booked,
    };
  } finally {
    await pool.close();
  }
}

/**
 * One v1 booking (availability → price check → book) for flow number `flow` (slotOf), trying the
 * following slots when a slot has nothing bookable; throws on any other answer. Resolves with the
 * booking and the wall-clock times (ms) at which the booking request was sent and answered.
 */
export async function bookOnce(options: {
  port: number;
  apiKey: string;
  flow: number;
  properties: number;
}): Promise<{ id: string; status: string; sentAt: number; answeredAt: number; nextFlow: number }> {
  const base = `http://127.0.0.1:${options.port}/channel/v1`;
  const headers = { 'x-api-key': options.apiKey };
  const todayUtc = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const get = async (path: string) => {
    const res = await fetch(`${base}${path}`, { headers });
    const body = (await res.json()) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    if (res.status !== 200) throw new Error(`GET ${path.split('?')[0]} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
    return body.data;
  };
  for (let n = options.flow; n < options.flow + 20; n++) {
    const { propertyId, checkin, checkout } = slotOf(n, options.properties, todayUtc);
    const search = await get(`/search/availability/${propertyId}?checkin=${checkin}&checkout=${checkout}&adults=2`);
    let token: string | undefined;
    for (const room of search?.room_types ?? []) {
      const rate = room.rates?.find((r: { price_check_token?: string | null; available_rooms?: number }) => r.price_check_token && (r.available_rooms ?? 0) >= 1);
      if (rate) {
        token = rate.price_check_token;
        break;
      }
    }
    if (!token) continue;
    const checked = await get(`/search/price-check?token=${encodeURIComponent(token)}`);
    if (!checked?.book_token) continue;
    const sentAt = performance.timeOrigin + performance.now();
    const res = await fetch(`${base}/bookings`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ book_token: checked.book_token, booker_name: 'Bench Booker' }),
    });
    const answeredAt = performance.timeOrigin + performance.now();
    const body = (await res.json()) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    if (res.status === 409) continue;
    if (res.status !== 201) throw new Error(`POST /bookings answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
    return { id: body.data.id, status: body.data.status, sentAt, answeredAt, nextFlow: n + 1 };
  }
  throw new Error(`nothing bookable in 20 slots from flow ${options.flow}`);
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL helpers

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Scratch schemas named and not yet dropped, so an interrupted run can drop them (dropScratchSchemas). */
const scratch = new Set<string>();

export function scratchSchema(prefix: string): string {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  scratch.add(schema);
  return schema;
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema) || schema === 'public') throw new Error(`refusing to drop schema "${schema}"`);
  await withClient(url, (c) => c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  scratch.delete(schema);
}

export async function dropScratchSchemas(url: string): Promise<void> {
  await Promise.all([...scratch].map((schema) => dropSchema(url, schema).catch(() => {})));
}

export async function serverVersion(url: string): Promise<string> {
  return withClient(url, async (c) => (await c.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version);
}

export interface LedgerCheck {
  ok: boolean;
  problems: string[];
  bookings: number;
}

/**
 * After the flows, with the service stopped: the bookings in the schema are the ones the client
 * was given (count and amounts), none is left `processing`, and the ledger agrees with the
 * balance and the bookings (opening balance − charges + voids = balance; one charge per booking).
 */
export async function checkLedger(
  url: string,
  schema: string,
  channelId: string,
  opening: bigint,
  booked: { count: number; amount: bigint },
): Promise<LedgerCheck> {
  return withClient(url, async (c) => {
    const one = async (sql: string): Promise<Record<string, string>> =>
      (await c.query<Record<string, string>>(sql.replaceAll('$schema', `"${schema}"`), [channelId])).rows[0]!;
    const b = await one(`SELECT
        count(*) FILTER (WHERE status IN ('confirmed', 'pending'))::text AS made,
        coalesce(sum(total_amount) FILTER (WHERE status IN ('confirmed', 'pending')), 0)::text AS made_amount,
        count(*) FILTER (WHERE status = 'processing')::text AS processing,
        count(*) FILTER (WHERE status NOT IN ('confirmed', 'pending', 'processing'))::text AS other
      FROM $schema.bookings WHERE channel_id = $1`);
    const l = await one(`SELECT
        coalesce(sum(amount), 0)::text AS total,
        count(*) FILTER (WHERE kind = 'booking_charge')::text AS charges,
        coalesce(sum(amount) FILTER (WHERE kind = 'booking_charge'), 0)::text AS charged,
        coalesce(sum(amount) FILTER (WHERE kind = 'booking_void'), 0)::text AS voided,
        (SELECT balance FROM $schema.channels WHERE id = $1)::text AS balance
      FROM $schema.ledger_entries WHERE channel_id = $1`);
    const problems: string[] = [];
    const expect = (what: string, got: string | bigint | number, want: string | bigint | number) => {
      if (String(got) !== String(want)) problems.push(`${what}: ${got}, expected ${want}`);
    };
    expect('bookings made in the database', b.made!, booked.count);
    expect('sum of their total_amount', b.made_amount!, booked.amount);
    expect('bookings left processing', b.processing!, 0);
    expect('sum of ledger entries vs balance', l.total!, l.balance!);
    expect('balance', l.balance!, opening - booked.amount);
    expect('charges net of voids', BigInt(l.charged!) + BigInt(l.voided!), -booked.amount);
    expect('charge entries', l.charges!, Number(b.made) + Number(b.other));
    return { ok: problems.length === 0, problems, bookings: Number(b.made) };
  });
}

// ---------------------------------------------------------------------------------------------
// pgbench

export interface PgbenchOptions {
  url: string;
  clients: number;
  threads: number;
  seconds: number;
  warmupSeconds: number;
  scale: number;
}

export interface PgbenchResult {
  clients: number;
  threads: number;
  scale: number;
  /** tps without the initial connection time. */
  tps: number;
  /** pgbench's own "latency average". */
  latencyAverage: number;
  /** From the per-transaction log. */
  latency: Latency;
  processed: number;
  failed: number;
  command: string;
}

function run(command: string, args: string[], env: Record<string, string>, cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(' ')} failed (code ${code}, signal ${signal}):\n${err.trim()}\n${out.trim()}`));
    });
  });
}

/**
 * TPC-B as pgbench ships it, in a scratch schema of the database (search_path through
 * PGOPTIONS), dropped afterwards: initialise at `scale`, an unrecorded warm-up, then the measured
 * run with a per-transaction log for percentiles.
 */
export async function runPgbench(options: PgbenchOptions): Promise<PgbenchResult> {
  const pgbench = process.env.BENCH_PGBENCH ?? 'pgbench';
  const schema = scratchSchema('bench_pgbench');
  const logDir = mkdtempSync(join(tmpdir(), 'channel-bench-pgbench-'));
  const env = { PGOPTIONS: `-c search_path=${schema}` };
  const load = ['-c', String(options.clients), '-j', String(options.threads), '-M', 'prepared'];
  try {
    await withClient(options.url, (c) => c.query(`CREATE SCHEMA "${schema}"`));
    await run(pgbench, ['-i', '-q', '-s', String(options.scale), options.url], env, logDir);
    if (options.warmupSeconds > 0) await run(pgbench, [...load, '-T', String(options.warmupSeconds), options.url], env, logDir);
    const args = [...load, '-T', String(options.seconds), '--log', '--log-prefix', join(logDir, 'tx'), options.url];
    const out = await run(pgbench, args, env, logDir);
    const number = (pattern: RegExp, what: string): number => {
      const m = pattern.exec(out);
      if (!m) throw new Error(`pgbench output without ${what}:\n${out}`);
      return Number(m[1]);
    };
    const latencies: number[] = [];
    for (const file of readdirSync(logDir).filter((f) => f.startsWith('tx.'))) {
      for (const line of readFileSync(join(logDir, file), 'utf8').split('\n')) {
        // client_id transaction_no time_us script_no time_epoch time_us_part
        const us = Number(line.split(' ')[2]);
        if (line && Number.isFinite(us)) latencies.push(us / 1000);
      }
    }
    return {
      clients: options.clients,
      threads: options.threads,
      scale: options.scale,
      tps: number(/tps = ([\d.]+) \((?:without initial connection time|excluding connections establishing)\)/, 'tps'),
      latencyAverage: number(/latency average = ([\d.]+) ms/, 'latency average'),
      latency: summarize(latencies),
      processed: number(/number of transactions actually processed: (\d+)/, 'transactions processed'),
      failed: /number of failed transactions: (\d+)/.test(out) ? number(/number of failed transactions: (\d+)/, 'failed') : 0,
      command: `pgbench -i -s ${options.scale}; pgbench ${load.join(' ')} -T ${options.seconds}`,
    };
  } finally {
    rmSync(logDir, { recursive: true, force: true });
    await dropSchema(options.url, schema);
  }
}
