import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { RequestContext } from '../../src/context.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { authenticate } from '../../src/services/access/index.js';
import { createChannel, type IssuedCredentials } from '../../src/services/channels/index.js';
import { createWebhook, type WebhookInput } from '../../src/services/webhooks/index.js';
import { day, v1 } from '../helpers/flow.js';
import { sleep, startReceiver, type Receiver } from '../helpers/receiver.js';
import { cleanupEnv, testEnv, type TestService } from '../helpers/service.js';

/**
 * A restart loses no webhook event: the service runs as a child process (`tsx src/main.ts`),
 * is killed with SIGKILL between the booking's commit and the delivery, and started again on the
 * same database (the embedded PGlite data directory, or the same PostgreSQL schema). Only one
 * process has the database open at a time: the test opens it itself only while no child runs.
 *
 * 1. Killed before fan-out: the first child has no dispatcher (EVENTS_POLL_INTERVAL_MS=0), so the
 *    events sit in the outbox when it dies; the restarted child delivers them.
 * 2. Killed mid-attempt: the receiver takes the request and never answers; the child is killed
 *    while the attempt is in flight; once the lease (2 × WEBHOOK_TIMEOUT_MS + 1 s) has run out,
 *    and not before, the restarted child sends the same webhook-id and bytes again and logs the
 *    lost attempt as interrupted.
 */

// Node itself with tsx's loader, not the `tsx` command: that one runs the script in a child
// process of its own, and a SIGKILL to it would leave the service running as an orphan.
const NODE_ARGS = ['--import', 'tsx', 'src/main.ts'];
// The deadline of the child killed mid-attempt: its lease is 2 × this + 1 s = 6 s, longer than a
// restart, so the test shows the restarted service waits for it rather than retrying at once.
const TIMEOUT_MS = 2_500;
const LEASE_MS = TIMEOUT_MS * 2 + 1_000;

interface Child {
  proc: ChildProcessWithoutNullStreams;
  baseUrl: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it printed (JSON log lines and stderr). */
  output: string[];
  startMs: number;
}

const children = new Set<Child>();

async function startChild(overrides: Record<string, string> = {}): Promise<Child> {
  const started = performance.now();
  const proc = spawn(process.execPath, NODE_ARGS, {
    env: { ...process.env, ...env, LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', ...overrides },
  });
  const output: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  proc.stderr.on('data', (d) => output.push(String(d)));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child did not start in 90 s:\n${output.join('\n')}`)), 90_000);
    void exited.then((r) => {
      clearTimeout(timer);
      reject(new Error(`child exited (${JSON.stringify(r)}) before listening:\n${output.join('\n')}`));
    });
    createInterface({ input: proc.stdout }).on('line', (line) => {
      output.push(line);
      if (!line.startsWith('{')) return;
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === 'listening') {
          clearTimeout(timer);
          resolve(`http://127.0.0.1:${entry.port}`);
        }
      } catch {
        // not a log line
      }
    });
  });
  const child: Child = { proc, baseUrl, exited, output, startMs: Math.round(performance.now() - started) };
  children.add(child);
  void exited.then(() => children.delete(child));
  return child;
}

async function stop(child: Child, signal: 'SIGKILL' | 'SIGTERM') {
  child.proc.kill(signal);
  const result = await child.exited;
  // The service process itself is gone (no wrapper left it running).
  expect(() => process.kill(child.proc.pid!, 0)).toThrow();
  return result;
}

/** Log entries of a child at level error or worse. */
function errorsOf(child: Child): string[] {
  return child.output.filter((line) => {
    if (!line.startsWith('{')) return false;
    try {
      return (JSON.parse(line) as { level?: number }).level! >= 50;
    } catch {
      return false;
    }
  });
}

/** The v1 flow over HTTP against a child. */
function remote(child: Child, who: IssuedCredentials) {
  const t = {
    request: (path: string, init: RequestInit & { ip?: string } = {}) => {
      const { ip: _ip, ...rest } = init;
      return fetch(`${child.baseUrl}${path}`, rest);
    },
  } as unknown as TestService;
  return v1(t, who);
}

async function bookVia(child: Child, who: IssuedCredentials, checkin: number): Promise<Record<string, any>> {
  const api = remote(child, who);
  const offer = await api.offer({ checkin: day(checkin), checkout: day(checkin + 1) });
  const res = await api.book({ book_token: offer.bookToken, booker_name: 'Crash Test', guests_adult: 2 });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.data;
}

/** Opens the database in this process (no child may be running), runs `fn`, closes it. */
async function withDatabase<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  expect(children.size, 'no child has the database open').toBe(0);
  const db = await openDatabase(loadConfig(env));
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

let env: Record<string, string>;
let receiver: Receiver;
let before: { who: IssuedCredentials; webhookId: string; path: string };
let inFlight: { who: IssuedCredentials; webhookId: string; path: string };
/** Whether the in-flight receiver path answers yet. */
let answering = false;

beforeAll(async () => {
  // The default 10 s deadline, except in the child killed mid-attempt: a short deadline would let
  // a busy machine turn a prompt answer into a timeout and a second attempt.
  env = testEnv({ EVENTS_POLL_INTERVAL_MS: '50' });
  receiver = await startReceiver((r) => (r.path === inFlight?.path && !answering ? 'hang' : 200));
  // Two channels, each with a webhook: one per scenario, so neither sees the other's events.
  [before, inFlight] = await withDatabase(async (db) => {
    await migrate(db);
    const config = loadConfig(env);
    const make = async (name: string, path: string, input: Partial<WebhookInput>) => {
      const who = await createChannel(db.prisma, { name });
      const principal = await authenticate(db.prisma, { apiKey: who.api_key });
      // createWebhook reads only the configuration, the database, the clock and the principal.
      const ctx = { deps: { config, db, clock: () => new Date() }, principal } as unknown as RequestContext;
      const { webhook } = await createWebhook(ctx, { url: receiver.url(path), ...input });
      return { who, webhookId: webhook.id, path };
    };
    return [
      await make('Crash Before Fan-out', '/before-fan-out', {}),
      await make('Crash In Flight', '/in-flight', { events: ['reservation.confirmed'] }),
    ];
  });
}, 120_000);

afterAll(async () => {
  for (const child of [...children]) await stop(child, 'SIGKILL');
  await receiver?.close();
  if (env) await cleanupEnv(env);
});

describe(`a restart loses nothing (${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'})`, () => {
  it('killed after the booking commits, before fan-out: the restarted service delivers the events', async () => {
    // No dispatcher in this instance: the events stay in the outbox.
    const first = await startChild({ EVENTS_POLL_INTERVAL_MS: '0' });
    const booking = await bookVia(first, before.who, 40);
    await sleep(300);
    expect(receiver.on(before.path)).toEqual([]);
    const killedAt = new Date();
    expect(await stop(first, 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    const second = await startChild();
    // The database survived the kill: the booking is there.
    const read = await remote(second, before.who).get(booking.id);
    expect(read.status).toBe(200);
    expect((await read.json()).data).toMatchObject({ id: booking.id, status: 'confirmed' });
    await receiver.waitFor(() => receiver.on(before.path).length >= 2, 30_000, 'both events after the restart');
    await sleep(300);
    const got = receiver.on(before.path);
    expect(got.map((r) => r.json.type).sort()).toEqual(['reservation.confirmed', 'reservation.created']);
    expect(got.every((r) => r.json.data.id === booking.id)).toBe(true);
    expect(new Set(got.map((r) => r.webhookId)).size).toBe(2);

    expect(await stop(second, 'SIGTERM')).toEqual({ code: 0, signal: null });
    expect(errorsOf(second)).toEqual([]);
    await withDatabase(async (db) => {
      const events = await db.prisma.outboxEvent.findMany({ where: { bookingId: booking.id } });
      expect(events).toHaveLength(2);
      expect(events.every((e) => e.publishedAt !== null && e.publishedAt > killedAt)).toBe(true);
      const deliveries = await db.prisma.webhookDelivery.findMany({
        where: { endpointId: before.webhookId },
        include: { attemptLog: true },
      });
      expect(deliveries.map((d) => [d.status, d.attempts, d.attemptLog.length]).sort()).toEqual([
        ['delivered', 1, 1],
        ['delivered', 1, 1],
      ]);
      // Fanned out by the restarted service, after the kill.
      expect(deliveries.every((d) => d.createdAt > killedAt)).toBe(true);
      expect(new Set(deliveries.map((d) => d.id))).toEqual(new Set(got.map((r) => r.webhookId)));
    });
    console.info(`webhook-crash: child starts ${first.startMs} ms and ${second.startMs} ms`);
  }, 240_000);

  it('killed while an attempt is in flight: after the lease the same webhook-id is delivered, the lost attempt logged interrupted', async () => {
    // Its lease (2 × 2.5 s + 1 s) is written into the delivery row; the restarted service honours
    // it whatever its own deadline.
    const first = await startChild({ WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
    const booking = await bookVia(first, inFlight.who, 44);
    // The receiver holds the request without answering: the attempt is in flight.
    await receiver.waitFor(() => receiver.on(inFlight.path).length >= 1, 30_000, 'the first attempt');
    expect(await stop(first, 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    const killedAt = performance.now();
    const [held] = receiver.on(inFlight.path);
    expect(held!.json).toMatchObject({ type: 'reservation.confirmed', data: { id: booking.id } });
    answering = true;

    const second = await startChild();
    await receiver.waitFor(() => receiver.on(inFlight.path).length >= 2, 30_000, 'the retry after the restart');
    const retriedAfterMs = Math.round(receiver.on(inFlight.path)[1]!.at - killedAt);
    const sinceFirstMs = Math.round(receiver.on(inFlight.path)[1]!.at - receiver.on(inFlight.path)[0]!.at);
    await sleep(300);
    const got = receiver.on(inFlight.path);
    expect(got).toHaveLength(2);
    expect(got[1]!.webhookId).toBe(held!.webhookId);
    expect(got[1]!.raw.equals(held!.raw)).toBe(true);
    // Not before the lease of the killed attempt ran out (it was taken just before the first request).
    expect(sinceFirstMs).toBeGreaterThanOrEqual(LEASE_MS - 100);

    expect(await stop(second, 'SIGTERM')).toEqual({ code: 0, signal: null });
    expect(errorsOf(second)).toEqual([]);
    await withDatabase(async (db) => {
      const delivery = await db.prisma.webhookDelivery.findUniqueOrThrow({
        where: { id: held!.webhookId },
        include: { attemptLog: { orderBy: [{ attempt: 'asc' }, { startedAt: 'asc' }] } },
      });
      expect(delivery).toMatchObject({ endpointId: inFlight.webhookId, status: 'delivered', attempts: 2, leaseId: null });
      expect(delivery.attemptLog.map((a) => [a.attempt, a.statusCode])).toEqual([
        [1, null],
        [2, 200],
      ]);
      expect(delivery.attemptLog[0]!.error).toMatch(/^interrupted/);
      expect(await db.prisma.webhookDelivery.count({ where: { endpointId: inFlight.webhookId } })).toBe(1);
    });
    console.info(`webhook-crash: retried ${retriedAfterMs} ms after the kill, ${sinceFirstMs} ms after the first attempt (lease ${LEASE_MS} ms); child starts ${first.startMs} ms and ${second.startMs} ms`);
  }, 240_000);
});
