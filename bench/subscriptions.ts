/**
 * The subscription scenario of `npm run bench`: `subscribers` graphql-ws connections to one service
 * instance, all subscribed to `bookingEvents` of one channel, then real v1 bookings one at a time,
 * each fanned out to every subscriber. Measured:
 *
 * - per event and subscriber, the latency from the event's occurredAt (set in the booking's
 *   transaction, a few ms before its commit) to the subscriber's receipt; and per event, how many
 *   subscribers got it (it must be every one) and the spread from its first to its last receipt;
 * - the service process's memory (RSS and V8 heap, after full collections) before and after the
 *   subscribers connect, so the cost of one subscriber;
 * - the service's event-loop delay while the bookings are fanned out.
 *
 * The service (bench/serve-service.ts, with --expose-gc) and the subscribers (bench/ws-clients.ts)
 * are separate processes; the bookings are made from the orchestrating process.
 */
import type { ChildProcess } from 'node:child_process';
import { ask, profiled, startChild, stopChild } from './children.js';
import { bookOnce } from './flow.js';
import { postgresCpu, type PostgresCpu } from './cpu.js';
import { cpuUsed, percentiles, type Cpu, type Percentiles } from './webhooks.js';

export interface SubscriptionBenchOptions {
  label: string;
  serviceEnv: Record<string, string>;
  balance?: bigint;
  subscribers: number;
  /** Measured bookings (each confirmed one is 2 events). */
  bookings: number;
  properties: number;
  timeoutMs: number;
  /** PostgreSQL, and the application_name of the service's sessions (in serviceEnv's DATABASE_URL), for its CPU. */
  postgres?: { url: string; applicationName: string };
}

interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  collected?: boolean;
}

export interface SubscriptionBenchResult {
  label: string;
  subscribers: number;
  connect: { connected: number; failed: number; seconds: number; errors: Record<string, number> };
  /** Bookings measured (after the probe booking). */
  bookings: number;
  /** Events measured. */
  events: number;
  /** The fewest subscribers that received one of the measured events. */
  minReceivedBy: number;
  /** occurredAt → receipt, over every (event, subscriber). */
  latency: Percentiles;
  /** Per event: first receipt → last receipt, ms. */
  spread: Percentiles;
  /** Per event: occurredAt → first receipt, ms. */
  first: Percentiles;
  /** POST /bookings answered → last receipt of the booking's last event, ms, per booking. */
  afterAnswer: Percentiles;
  loopDelay: { mean: number; p99: number; max: number };
  /** Service CPU over the measured bookings (their own work included): µs per delivery (one event to one subscriber) and per event. */
  cpu: { usPerDelivery: number; usPerEvent: number; deliveries: number; postgres: PostgresCpu | null };
  /** Per booking: its events' deliveries ÷ (last receipt − first occurredAt), averaged: the fan-out's pace. */
  deliveriesPerSecond: number;
  memory: { before: Memory; after: Memory; afterFanOut: Memory; clients: Memory };
  otherMessages: Record<string, number>;
  problems: string[];
}

interface Counted {
  id: string;
  bookingId: string;
  type: string;
  n: number;
}

interface ReportEvent {
  id: string;
  bookingId: string;
  type: string;
  occurredAt: string;
  receipts: number[];
}

/**
 * Waits until `expected` events of the booking have reached `subscribers`; resolves with the counts
 * at the end. `bookingId` is the REST id POST /bookings answered (bookOnce); the subscribers match
 * it with their event's `booking { bookingId }` (bench/ws-clients.ts), the same REST id, not
 * `booking { id }`, which is the booking's Relay global id since issue 17.
 */
async function fannedOut(clients: ChildProcess, bookingId: string, expected: number, subscribers: number, timeoutMs: number): Promise<Counted[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counts = (await ask<Counted[]>(clients, { cmd: 'counts' })).filter((c) => c.bookingId === bookingId);
    if (counts.length >= expected && counts.every((c) => c.n >= subscribers)) return counts;
    if (Date.now() > deadline) return counts;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function runSubscriptionBench(options: SubscriptionBenchOptions): Promise<SubscriptionBenchResult> {
  const problems: string[] = [];
  const openFiles = options.subscribers + 1024;
  const service = await startChild<{ port: number; apiKey: string }>('serve-service.ts', {
    nodeFlags: ['--expose-gc'],
    openFiles,
    env: {
      BENCH_SERVICE_ENV: JSON.stringify(options.serviceEnv),
      ...(options.balance ? { BENCH_CHANNEL_BALANCE: String(options.balance) } : {}),
    },
  });
  try {
    const { port, apiKey } = service.info;
    const book = { port, apiKey, properties: options.properties };
    // Warm the booking path and the dispatcher before anything is measured.
    let flow = (await bookOnce({ ...book, flow: 0 })).nextFlow;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = await ask<Memory>(service.child, { cmd: 'memory' });

    const clients = await startChild<{ pid: number }>('ws-clients.ts', { openFiles });
    try {
      const connected = await ask<{ connected: number; failed: number; ms: number; errors: Record<string, number> }>(
        clients.child,
        { cmd: 'connect', url: `ws://127.0.0.1:${port}/graphql`, keys: [apiKey], count: options.subscribers, parallel: 100 },
        options.timeoutMs * 2,
      );
      if (connected.failed) problems.push(`${connected.failed} subscribers could not connect: ${JSON.stringify(connected.errors)}`);
      const subscribers = connected.connected;

      // The probe: one booking that every subscriber must receive, proving each subscription is live.
      const probe = await bookOnce({ ...book, flow });
      flow = probe.nextFlow;
      const probeCounts = await fannedOut(clients.child, probe.id, probe.status === 'confirmed' ? 2 : 1, subscribers, options.timeoutMs);
      const probeMin = probeCounts.length ? Math.min(...probeCounts.map((c) => c.n)) : 0;
      if (probeMin < subscribers) problems.push(`the probe booking reached ${probeMin} of ${subscribers} subscribers`);
      const after = await ask<Memory>(service.child, { cmd: 'memory' });

      // The measured bookings, one at a time, each waited for until every subscriber has it.
      await ask(clients.child, { cmd: 'reset' });
      await ask(service.child, { cmd: 'loopDelay', reset: true });
      const answered = new Map<string, number>();
      const pg = options.postgres ? postgresCpu(options.postgres.url, options.postgres.applicationName) : undefined;
      await pg?.start();
      const cpu0 = await ask<Cpu>(service.child, { cmd: 'cpu' });
      await profiled(service.child, `subscriptions ${options.label}`, async () => {
        for (let i = 0; i < options.bookings; i++) {
          const b = await bookOnce({ ...book, flow });
          flow = b.nextFlow;
          answered.set(b.id, b.answeredAt);
          const counts = await fannedOut(clients.child, b.id, b.status === 'confirmed' ? 2 : 1, subscribers, options.timeoutMs);
          if (counts.some((c) => c.n < subscribers) || counts.length < (b.status === 'confirmed' ? 2 : 1)) {
            problems.push(`booking ${b.id}: ${counts.map((c) => `${c.type} reached ${c.n}`).join(', ') || 'no event'} of ${subscribers} subscribers`);
          }
        }
      });
      const cpu1 = await ask<Cpu>(service.child, { cmd: 'cpu' });
      const postgres = (await pg?.stop()) ?? null;
      const loopDelay = await ask<{ mean: number; p99: number; max: number }>(service.child, { cmd: 'loopDelay' });
      const afterFanOut = await ask<Memory>(service.child, { cmd: 'memory' });
      const report = await ask<{ events: ReportEvent[]; otherMessages: Record<string, number>; closes: number }>(clients.child, { cmd: 'report' });
      const clientMemory = await ask<Memory>(clients.child, { cmd: 'memory' });
      if (report.closes) problems.push(`${report.closes} subscriber connections closed during the run`);
      if (Object.keys(report.otherMessages).length) problems.push(`unexpected messages: ${JSON.stringify(report.otherMessages)}`);

      const twice = report.events.filter((e) => e.receipts.length > subscribers);
      if (twice.length) problems.push(`${twice.length} events received more than once by some subscriber`);
      const latencies: number[] = [];
      const spreads: number[] = [];
      const firsts: number[] = [];
      const lastByBooking = new Map<string, number>();
      const byBooking = new Map<string, { from: number; to: number; n: number }>();
      let deliveries = 0;
      for (const event of report.events) {
        const occurred = Date.parse(event.occurredAt);
        deliveries += event.receipts.length;
        let min = Number.POSITIVE_INFINITY;
        let max = 0;
        for (const at of event.receipts) {
          latencies.push(at - occurred);
          if (at < min) min = at;
          if (at > max) max = at;
        }
        spreads.push(max - min);
        firsts.push(min - occurred);
        lastByBooking.set(event.bookingId, Math.max(lastByBooking.get(event.bookingId) ?? 0, max));
        const b = byBooking.get(event.bookingId) ?? { from: occurred, to: max, n: 0 };
        byBooking.set(event.bookingId, { from: Math.min(b.from, occurred), to: Math.max(b.to, max), n: b.n + event.receipts.length });
      }
      const paces = [...byBooking.values()].filter((b) => b.to > b.from).map((b) => (b.n * 1000) / (b.to - b.from));
      const afterAnswer = [...answered].map(([id, at]) => (lastByBooking.get(id) ?? Number.NaN) - at);
      return {
        label: options.label,
        subscribers: options.subscribers,
        connect: { connected: subscribers, failed: connected.failed, seconds: connected.ms / 1000, errors: connected.errors },
        bookings: answered.size,
        events: report.events.length,
        minReceivedBy: report.events.length ? Math.min(...report.events.map((e) => e.receipts.length)) : 0,
        latency: percentiles(latencies),
        spread: percentiles(spreads),
        first: percentiles(firsts),
        afterAnswer: percentiles(afterAnswer),
        loopDelay,
        cpu: { usPerDelivery: cpuUsed(cpu0, cpu1) / Math.max(1, deliveries), usPerEvent: cpuUsed(cpu0, cpu1) / Math.max(1, report.events.length), deliveries, postgres },
        deliveriesPerSecond: paces.length ? paces.reduce((a, b) => a + b, 0) / paces.length : 0,
        memory: { before, after, afterFanOut, clients: clientMemory },
        otherMessages: report.otherMessages,
        problems,
      };
    } finally {
      await stopChild(clients.child);
    }
  } finally {
    await stopChild(service.child);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function num(value: number, digits = 0): string {
  return Number.isFinite(value) ? value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';
}

const MB = 1024 * 1024;

/** Issue 18's figures for 5,000 subscribers (the README block states them). */
const TARGETS = { p99Ms: 100, loopDelayMs: 50, heapKB: 10 };

/** V8 heap used per subscriber: (with them − before) ÷ subscribers connected, KB. */
export function heapPerSubscriberKB(r: SubscriptionBenchResult): number {
  return (r.memory.after.heapUsed - r.memory.before.heapUsed) / Math.max(1, r.connect.connected) / 1024;
}

function pgPerEvent(r: SubscriptionBenchResult): string {
  const pg = r.cpu.postgres;
  if (!pg) return '';
  const per = (v: number | null) => (v === null ? 'n/a' : num(v / Math.max(1, r.events) / 1000, 1));
  return `${per(pg.sessions)} / ${per(pg.server)}`;
}

/** The README block of the subscription scenario. */
export function subscriptionSection(results: SubscriptionBenchResult[]): string {
  const first = results[0];
  if (!first) return '';
  const sizes = [...new Set(results.map((r) => num(r.subscribers)))].join(' and ');
  return [
    `${sizes} graphql-ws connections from one client process (\`bench/ws-clients.ts\`) to one service process on ` +
      'PostgreSQL (production), all subscribed to `bookingEvents { id type occurredAt booking { bookingId status } }` of one channel; ' +
      `a probe booking that every subscriber must receive, then ${num(first.bookings)} measured bookings one at a time ` +
      '(each 2 events: reservation.created and reservation.confirmed, committed together), each waited for until every subscriber had both.',
    '',
    `Targets (issue 18, at ${num(first.subscribers)} subscribers): occurredAt → receipt p99 ≤ ${TARGETS.p99Ms} ms, service event-loop delay ≤ ${TARGETS.loopDelayMs} ms, ` +
      `≤ ${TARGETS.heapKB} KB of heap per subscriber; at every size, every subscriber connected and received every event.`,
    '',
    '| Bus | Subscribers | Connected | Connect s | Events | Received by (fewest) | occurredAt → receipt p50 ms | p99 ms | max ms | first receipt p50 ms | first → last receipt p50 ms | booking answered → last receipt p50 ms | service event-loop delay p99 / max ms | heap per subscriber KB | deliveries/s during fan-out | service CPU µs/delivery | service CPU ms/event | PostgreSQL CPU ms/event (service\'s sessions / all) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.label} | ${num(r.subscribers)} | ${num(r.connect.connected)} | ${num(r.connect.seconds, 1)} | ${num(r.events)} | ${num(r.minReceivedBy)} | ` +
        `${num(r.latency.p50, 1)} | ${num(r.latency.p99, 1)} | ${num(r.latency.max, 1)} | ${num(r.first.p50, 1)} | ${num(r.spread.p50, 1)} | ` +
        `${num(r.afterAnswer.p50, 1)} | ${num(r.loopDelay.p99, 0)} / ${num(r.loopDelay.max, 0)} | ${num(heapPerSubscriberKB(r), 1)} | ${num(r.deliveriesPerSecond)} | ` +
        `${num(r.cpu.usPerDelivery, 1)} | ${num(r.cpu.usPerEvent / 1000, 1)} | ${pgPerEvent(r)} |`,
    ),
    '',
    'Service CPU: `process.cpuUsage()` of the service process over the measured bookings (each booking\'s own requests included) ÷ ' +
      'deliveries (one event to one subscriber), and ÷ events; PostgreSQL\'s over the same window, from /proc (the backends of the service\'s sessions / every PostgreSQL process), ÷ events. ' +
      'Deliveries/s during fan-out: per booking, its events\' deliveries ÷ (last receipt − occurredAt), averaged.',
    '',
    'Memory of the service process, after two full collections (`--expose-gc`): before the subscribers connect, with them all ' +
      'subscribed (after the probe), and after the measured fan-outs; per subscriber = (with − before) ÷ subscribers.',
    '',
    '| Bus | Subscribers | RSS before MB | RSS with subscribers MB | RSS per subscriber KB | heap used before MB | heap used with subscribers MB | heap per subscriber KB | RSS after fan-outs MB | client process RSS MB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map((r) => {
      const m = r.memory;
      const n = Math.max(1, r.connect.connected);
      return (
        `| ${r.label} | ${num(r.subscribers)} | ${num(m.before.rss / MB, 1)} | ${num(m.after.rss / MB, 1)} | ${num((m.after.rss - m.before.rss) / n / 1024, 1)} | ` +
        `${num(m.before.heapUsed / MB, 1)} | ${num(m.after.heapUsed / MB, 1)} | ${num((m.after.heapUsed - m.before.heapUsed) / n / 1024, 1)} | ` +
        `${num(m.afterFanOut.rss / MB, 1)} | ${num(m.clients.rss / MB, 1)} |`
      );
    }),
  ].join('\n');
}
