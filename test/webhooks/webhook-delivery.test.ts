import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestContext, type RequestContext } from '../../src/context.js';
import { authenticate } from '../../src/services/access/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import {
  createWebhook,
  DELIVERY_RETENTION_MS,
  fanOut,
  getWebhook,
  maxTotalAttempts,
  PER_ENDPOINT_IN_FLIGHT,
  purgeDeliveries,
  updateWebhook,
  type WebhookInput,
} from '../../src/services/webhooks/index.js';
import { day, v1 } from '../helpers/flow.js';
import { eventually, sleep, startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Webhook delivery as a partner sees it, with a real HTTP receiver on 127.0.0.1: the signed body
 * (Standard Webhooks), retries with the same webhook-id and bytes, timeouts, the endpoint disabled
 * after a whole failed schedule and resumed by the partner, event filters, the connection-time
 * address check of production, and exactly one delivery per event and endpoint under concurrent
 * bookings. Embedded PGlite by default; PostgreSQL + Redis with DATABASE_URL / REDIS_URL.
 *
 * Four services: `live` runs the background dispatcher (woken by LISTEN/NOTIFY, polling every
 * 20 ms) with a fast retry schedule; `short` is the same with a short WEBHOOK_TIMEOUT_MS; `manual`
 * has no background dispatcher (the tests drain it); `prod` is production configuration with http
 * allowed but private addresses refused (said explicitly: the test helper allows them by default). All but `short` keep the default 10 s deadline: with the
 * embedded database, queries run on this process's event loop, and a burst of bookings on a busy
 * machine can stall it for seconds, so an answer sent in time would be read after a short deadline
 * (a timeout, and a legitimate second delivery of the same webhook-id).
 */

const LIVE_SCHEDULE_MS = 50;
const SHORT_TIMEOUT_MS = 500;

let live: TestService;
let short: TestService;
let manual: TestService;
let prod: TestService;
let receiver: Receiver;

beforeAll(async () => {
  [live, short, manual, prod] = await Promise.all([
    startTestService({ EVENTS_POLL_INTERVAL_MS: '20', WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms,50ms' }),
    startTestService({
      EVENTS_POLL_INTERVAL_MS: '20',
      WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms,50ms',
      WEBHOOK_TIMEOUT_MS: String(SHORT_TIMEOUT_MS),
    }),
    startTestService({ EVENTS_POLL_INTERVAL_MS: '0', WEBHOOK_RETRY_SCHEDULE: '50ms,50ms' }),
    startTestService({
      CHANNEL_ENV: 'production',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'false',
      EVENTS_POLL_INTERVAL_MS: '0',
    }),
  ]);
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await Promise.all([live?.close(), short?.close(), manual?.close(), prod?.close()]);
});

// ---------------------------------------------------------------------------------------------
// Helpers

async function ctxOf(t: TestService, who: IssuedCredentials): Promise<RequestContext> {
  const principal = await authenticate(t.service.deps.db.prisma, { apiKey: who.api_key });
  if (!principal) throw new Error('test credential refused');
  return createRequestContext(t.service.deps, { requestId: 'test', logger: t.service.deps.logger, principal, authError: null, signal: undefined });
}

/** A channel with a webhook to `path` on the receiver. */
async function channelWithHook(t: TestService, path: string, input: Partial<WebhookInput> = {}, channel: { balance?: bigint } = {}) {
  const who = await t.channel(channel);
  const ctx = await ctxOf(t, who);
  const { webhook, secret } = await createWebhook(ctx, { url: receiver.url(path), ...input });
  return { who, ctx, webhook, secret };
}

/** A unique receiver path per test. */
const pathOf = (name: string) => `/${name}-${randomBytes(4).toString('hex')}`;

// Every booking of this file gets its own stay, so no rate sells out under the file's bookings.
let stays = 0;
function nextStay() {
  const n = stays++;
  return { checkin: day(30 + n * 3), checkout: day(31 + n * 3) };
}

/** Books a fresh offer: 201, the booking record. */
async function book(t: TestService, who: IssuedCredentials): Promise<Record<string, any>> {
  const api = v1(t, who);
  const offer = await api.offer(nextStay());
  const res = await api.book({ book_token: offer.bookToken, booker_name: 'A B', guests_adult: 2 });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.data;
}

async function cancel(t: TestService, who: IssuedCredentials, id: string): Promise<Record<string, any>> {
  const res = await v1(t, who).cancel(id);
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.data;
}

function deliveriesOf(t: TestService, endpointId: string) {
  return t.service.deps.db.prisma.webhookDelivery.findMany({
    where: { endpointId },
    orderBy: [{ createdAt: 'asc' }, { type: 'asc' }],
    include: { attemptLog: { orderBy: [{ attempt: 'asc' }, { startedAt: 'asc' }] } },
  });
}

async function deliveryOf(t: TestService, endpointId: string, type: string) {
  const list = (await deliveriesOf(t, endpointId)).filter((d) => d.type === type);
  expect(list, `one ${type} delivery`).toHaveLength(1);
  return list[0]!;
}

/** Drains the manual service until `done` holds (retries fall due by time, so it sleeps between drains). */
async function settle(t: TestService, done: () => Promise<boolean>, timeoutMs = 10_000, what = 'deliveries to settle') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await t.service.dispatcher.drain();
    if (await done()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

// ---------------------------------------------------------------------------------------------

describe('what the partner receives', () => {
  it('a body {type, timestamp, data} whose data is the booking as GET returns it, signed per Standard Webhooks', async () => {
    const path = pathOf('signed');
    const { who, webhook, secret } = await channelWithHook(manual, path);
    const booking = await book(manual, who);
    // The booking as the partner reads it right after the change (nothing changes it afterwards).
    const read = await v1(manual, who).get(booking.id);
    const readText = await read.text();
    const readData = JSON.parse(readText).data;
    expect(readData.status).toBe('confirmed');

    await manual.service.dispatcher.drain();
    // Attempts run concurrently, so the two may arrive in either order; take them in event order.
    const order = ['reservation.created', 'reservation.confirmed'];
    const got = [...receiver.on(path)].sort((x, y) => order.indexOf(x.json.type) - order.indexOf(y.json.type));
    expect(got.map((r) => r.json.type)).toEqual(order);

    const events = await manual.service.deps.db.prisma.outboxEvent.findMany({
      where: { bookingId: booking.id },
      orderBy: { occurredAt: 'asc' },
    });
    const deliveries = (await deliveriesOf(manual, webhook.id)).sort(
      (x, y) => events.findIndex((e) => e.id === x.eventId) - events.findIndex((e) => e.id === y.eventId),
    );
    expect(deliveries.map((d) => [d.type, d.status, d.attempts])).toEqual([
      ['reservation.created', 'delivered', 1],
      ['reservation.confirmed', 'delivered', 1],
    ]);

    for (const [i, r] of got.entries()) {
      const event = events[i]!;
      expect(r.json.type).toBe(event.type);
      // Exactly three members, in this order.
      expect(Object.keys(r.json)).toEqual(['type', 'timestamp', 'data']);
      expect(r.json.timestamp).toBe(event.occurredAt.toISOString());
      expect(r.json.data).toEqual(readData);
      // Same members in the same order as the REST record: the body is that record's JSON.
      expect(Object.keys(r.json.data)).toEqual(Object.keys(readData));
      expect(r.body).toBe(`{"type":"${event.type}","timestamp":"${event.occurredAt.toISOString()}","data":${JSON.stringify(readData)}}`);

      // Headers: the delivery's id, the sending time, a v1 signature.
      const delivery = deliveries.find((d) => d.eventId === event.id)!;
      expect(r.webhookId).toBe(delivery.id);
      expect(r.body).toBe(delivery.body);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-timestamp']).toMatch(/^\d+$/);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);

      // The partner's check, with the standardwebhooks library.
      const headers = {
        'webhook-id': r.headers['webhook-id']!,
        'webhook-timestamp': r.headers['webhook-timestamp']!,
        'webhook-signature': r.headers['webhook-signature']!,
      };
      expect(new Webhook(secret).verify(r.raw, headers)).toEqual(r.json);
      expect(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(r.raw, headers)).toThrow(/signature/i);
      const tampered = r.body.replace('"confirmed"', '"cancelled"');
      expect(tampered).not.toBe(r.body);
      expect(() => new Webhook(secret).verify(tampered, headers)).toThrow(/signature/i);
      expect(() => new Webhook(secret).verify(r.raw, { ...headers, 'webhook-id': randomUUID() })).toThrow(/signature/i);
    }
  });
});

describe('retries', () => {
  it('500, 500, 500, then 200: delivered on the 4th attempt with the same webhook-id and bytes, gaps per the schedule', async () => {
    const path = pathOf('flaky');
    const { who, webhook, secret } = await channelWithHook(live, path, { events: ['reservation.confirmed'] });
    receiver.respond = (r, nth) => (r.path === path && nth < 3 ? 500 : 200);

    await book(live, who);
    await receiver.waitFor(() => receiver.on(path).length >= 4, 10_000, 'four attempts');
    const delivery = await eventually(async () => {
      const d = (await deliveriesOf(live, webhook.id)).find((x) => x.type === 'reservation.confirmed');
      return d?.status === 'delivered' ? d : null;
    }, 5_000, 'the delivery recorded delivered');
    await sleep(200);

    const got = receiver.on(path);
    expect(got).toHaveLength(4);
    expect(new Set(got.map((r) => r.webhookId))).toEqual(new Set([delivery.id]));
    for (const r of got) {
      expect(r.raw.equals(got[0]!.raw)).toBe(true);
      expect(() => new Webhook(secret).verify(r.raw, r.headers)).not.toThrow();
    }
    const gaps = got.slice(1).map((r, i) => r.at - got[i]!.at);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(LIVE_SCHEDULE_MS * 0.9);

    expect(delivery).toMatchObject({ status: 'delivered', attempts: 4, scheduleStep: 3, leaseId: null });
    expect(delivery.deliveredAt).not.toBeNull();
    expect(delivery.attemptLog.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 200],
    ]);
    expect(delivery.attemptLog.slice(0, 3).every((a) => a.error === 'HTTP 500' && a.responseBody === 'status 500')).toBe(true);
    expect(delivery.attemptLog[3]).toMatchObject({ error: null, responseBody: 'ok' });
    // Each retry started at least a schedule step (less the 10 % jitter) after the previous attempt ended.
    for (let i = 1; i < 4; i++) {
      const prev = delivery.attemptLog[i - 1]!;
      const gap = delivery.attemptLog[i]!.startedAt.getTime() - (prev.startedAt.getTime() + prev.durationMs);
      expect(gap).toBeGreaterThanOrEqual(LIVE_SCHEDULE_MS * 0.9 - 2);
    }
    const endpoint = await live.service.deps.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: webhook.id } });
    expect(endpoint.lastSuccessAt).not.toBeNull();
    expect(endpoint.disabledAt).toBeNull();
  });

  /**
   * The first attempt meets `answer` and must end as a timeout; every later one gets 200. On a
   * stalled event loop (embedded database, busy machine) a later attempt may time out as well,
   * so any attempts between the first and the last must be timeouts too, never anything else.
   */
  async function timesOutThenDelivered(answer: 'hang' | 'trickle') {
    const path = pathOf(answer);
    const { who, webhook } = await channelWithHook(short, path, { events: ['reservation.confirmed'] });
    receiver.respond = (r, nth) => (r.path === path && nth === 0 ? answer : 200);

    await book(short, who);
    const delivery = await eventually(async () => {
      const d = (await deliveriesOf(short, webhook.id)).find((x) => x.type === 'reservation.confirmed');
      return d?.status === 'delivered' ? d : null;
    }, 15_000, 'the delivery recorded delivered');

    const got = receiver.on(path);
    expect(got.length).toBeGreaterThanOrEqual(2);
    expect(new Set(got.map((r) => r.webhookId))).toEqual(new Set([delivery.id]));
    expect(delivery.attempts).toBe(got.length);
    const log = delivery.attemptLog;
    expect(log.map((a) => a.attempt)).toEqual(got.map((_, i) => i + 1));
    for (const timedOut of log.slice(0, -1)) {
      expect(timedOut).toMatchObject({ statusCode: null, responseBody: null });
      expect(timedOut.error).toMatch(/timeout/i);
      expect(timedOut.durationMs).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS - 20);
    }
    expect(log[0]!.durationMs).toBeLessThan(SHORT_TIMEOUT_MS + 2_000);
    expect(log.at(-1)).toMatchObject({ statusCode: 200, error: null });
  }

  it('a receiver that does not answer within WEBHOOK_TIMEOUT_MS: a timeout attempt (no status code), then retried', async () => {
    await timesOutThenDelivered('hang');
  });

  it('a receiver that sends 200 headers but never finishes the body: also a timeout, then retried', async () => {
    await timesOutThenDelivered('trickle');
  });
});

describe('whatever bytes the receiver answers with', () => {
  // PostgreSQL text refuses a NUL byte: an answer holding one must still be recorded (it once
  // was not, and the delivery was sent again every lease, forever).
  it('a 200 whose body holds a NUL byte is recorded as delivered', async () => {
    const path = pathOf('nul-body');
    const { who, webhook } = await channelWithHook(manual, path, { events: ['reservation.confirmed'] });
    receiver.respond = (r) => (r.path === path ? { status: 200, body: Buffer.from([0x6f, 0x6b, 0x00]) } : 200);
    try {
      await book(manual, who);
      await manual.service.dispatcher.drain();
      expect(receiver.on(path)).toHaveLength(1);
      const delivery = await deliveryOf(manual, webhook.id, 'reservation.confirmed');
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(delivery.attemptLog.map((a) => a.statusCode)).toEqual([200]);
      expect(delivery.attemptLog[0]!.responseBody).toBe('ok\uFFFD');
    } finally {
      // The stuck delivery must not be sent again into later tests of this service.
      await manual.service.deps.db.prisma.webhookEndpoint.delete({ where: { id: webhook.id } });
    }
  });
});

describe('interrupted attempts', () => {
  /** A delivery to `webhook` as a crashed instance leaves it: leased, the lease run out. */
  async function leftByCrash(webhook: { id: string; channelId: string }, data: { attempts: number; scheduleStep: number; attemptsAtReplay?: number }) {
    const id = randomUUID();
    await manual.service.deps.db.prisma.webhookDelivery.create({
      data: {
        id,
        endpointId: webhook.id,
        channelId: webhook.channelId,
        type: 'reservation.confirmed',
        body: '{"type":"reservation.confirmed","timestamp":"2026-01-01T00:00:00.000Z","data":{}}',
        status: 'pending',
        ...data,
        nextAttemptAt: new Date(Date.now() - 1_000),
        leaseId: randomUUID(),
        createdAt: new Date(),
      },
    });
    return id;
  }

  const withLog = (id: string) =>
    manual.service.deps.db.prisma.webhookDelivery.findUniqueOrThrow({ where: { id }, include: { attemptLog: { orderBy: { attempt: 'asc' } } } });

  it('are logged and retried without using up a step of the schedule', async () => {
    const path = pathOf('interrupted');
    const { webhook } = await channelWithHook(manual, path, { events: ['reservation.confirmed'] });
    // The first request fails; the retry succeeds.
    receiver.respond = (r, nth) => (r.path === path && nth === 0 ? 500 : 200);
    // Schedule 50ms,50ms: one retry step left after the interrupted attempt.
    const id = await leftByCrash(webhook, { attempts: 2, scheduleStep: 1 });

    // Attempt 3 fails with a step left, so it is scheduled again (an interruption that used up a
    // step would have failed it there), and attempt 4 succeeds.
    await settle(manual, async () => (await withLog(id)).status !== 'pending');

    const row = await withLog(id);
    expect(row).toMatchObject({ status: 'delivered', attempts: 4, scheduleStep: 2, leaseId: null });
    expect(row.attemptLog.map((a) => [a.attempt, a.statusCode, a.error?.split(':')[0] ?? null])).toEqual([
      [2, null, 'interrupted'],
      [3, 500, 'HTTP 500'],
      [4, 200, null],
    ]);
    expect(receiver.on(path)).toHaveLength(2);
    await manual.service.deps.db.prisma.webhookEndpoint.delete({ where: { id: webhook.id } });
  });

  it('a delivery with 2 × (schedule + 1) attempts since its last replay fails at the claim, unsent; the endpoint stays enabled', async () => {
    const path = pathOf('poison');
    const { webhook } = await channelWithHook(manual, path, { events: ['reservation.confirmed'] });
    const cap = maxTotalAttempts(manual.config.webhooks.retrySchedule);
    expect(cap).toBe(6);
    const prisma = manual.service.deps.db.prisma;

    // Interrupted on its cap-th attempt: failed at the claim, never sent again.
    const poison = await leftByCrash(webhook, { attempts: cap, scheduleStep: 0 });
    // The same count, but three of them before a replay: the cap counts from the replay, so it is
    // attempted (and delivered).
    const replayed = await leftByCrash(webhook, { attempts: cap, scheduleStep: 0, attemptsAtReplay: 3 });
    // Not interrupted, one attempt below the cap with steps left: its failure ends it all the same.
    const last = randomUUID();
    await prisma.webhookDelivery.create({
      data: {
        id: last,
        endpointId: webhook.id,
        channelId: webhook.channelId,
        type: 'reservation.confirmed',
        body: '{"type":"reservation.confirmed","timestamp":"2026-01-01T00:00:00.000Z","data":{}}',
        status: 'pending',
        attempts: cap - 1,
        scheduleStep: 0,
        nextAttemptAt: new Date(Date.now() - 1_000),
        createdAt: new Date(),
      },
    });
    receiver.respond = (r) => (r.path === path && r.webhookId !== replayed ? 500 : 200);
    await manual.service.dispatcher.drain();

    const failed = await withLog(poison);
    expect(failed).toMatchObject({ status: 'failed', attempts: cap, scheduleStep: 0, leaseId: null });
    expect(failed.attemptLog.map((a) => [a.attempt, a.statusCode, a.error?.split(':')[0]])).toEqual([[cap, null, 'interrupted']]);
    expect(receiver.byId(poison)).toEqual([]);

    expect(await withLog(replayed)).toMatchObject({ status: 'delivered', attempts: cap + 1, scheduleStep: 0, leaseId: null });
    expect((await withLog(replayed)).attemptLog.map((a) => [a.attempt, a.statusCode])).toEqual([
      [cap, null],
      [cap + 1, 200],
    ]);
    expect(receiver.byId(replayed)).toHaveLength(1);

    const capped = await withLog(last);
    expect(capped).toMatchObject({ status: 'failed', attempts: cap, scheduleStep: 0, leaseId: null });
    expect(capped.attemptLog.map((a) => [a.attempt, a.statusCode])).toEqual([[cap, 500]]);
    expect(receiver.byId(last)).toHaveLength(1);

    // Neither ran out its schedule: the endpoint is not disabled.
    expect(await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: webhook.id } })).toMatchObject({ disabledAt: null });
    await prisma.webhookEndpoint.delete({ where: { id: webhook.id } });
  });
});

describe('an endpoint that fails for a whole schedule', () => {
  it('the delivery fails, the endpoint is disabled, later events are held, and enabling it delivers them', async () => {
    const path = pathOf('down');
    const { who, ctx, webhook } = await channelWithHook(manual, path, { events: ['reservation.confirmed', 'reservation.cancelled'] });
    let down = false;
    receiver.respond = (r) => (r.path === path && down ? 503 : 200);
    const prisma = manual.service.deps.db.prisma;

    // A success first: an old success does not keep the endpoint enabled.
    const early = await book(manual, who);
    await manual.service.dispatcher.drain();
    expect(receiver.on(path).map((r) => r.json.data.id)).toEqual([early.id]);

    down = true;
    // A delivery waiting an hour for its retry when the endpoint is disabled.
    const waiting = randomUUID();
    await prisma.webhookDelivery.create({
      data: {
        id: waiting,
        endpointId: webhook.id,
        channelId: webhook.channelId,
        type: 'reservation.modified',
        body: '{"type":"reservation.modified","timestamp":"2026-01-01T00:00:00.000Z","data":{}}',
        status: 'pending',
        attempts: 1,
        scheduleStep: 1,
        nextAttemptAt: new Date(Date.now() + 3_600_000),
        createdAt: new Date(),
      },
    });
    const booking = await book(manual, who);
    let failed: Awaited<ReturnType<typeof deliveriesOf>>[number] | undefined;
    await settle(manual, async () => {
      failed = (await deliveriesOf(manual, webhook.id)).find((d) => d.type === 'reservation.confirmed' && d.status !== 'delivered');
      return failed?.status === 'failed';
    });
    // Two retries after the first attempt, then the schedule is over.
    expect(failed).toMatchObject({ status: 'failed', attempts: 3, leaseId: null, deliveredAt: null });
    expect(failed!.attemptLog.map((a) => a.statusCode)).toEqual([503, 503, 503]);
    expect(receiver.byId(failed!.id)).toHaveLength(3);

    const disabled = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: webhook.id } });
    expect(disabled.disabledAt).not.toBeNull();
    expect(disabled.disabledReason).toContain(failed!.id);
    expect((await getWebhook(ctx, webhook.id)).status).toBe('disabled');
    // Disabling held what was waiting.
    expect(await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: waiting } })).toMatchObject({ status: 'held', attempts: 1 });

    // Held: the next event makes a delivery that is not attempted while the endpoint is disabled.
    await cancel(manual, who, booking.id);
    await settle(manual, async () => (await deliveriesOf(manual, webhook.id)).some((d) => d.type === 'reservation.cancelled'));
    await sleep(150);
    await manual.service.dispatcher.drain();
    const held = await deliveryOf(manual, webhook.id, 'reservation.cancelled');
    expect(held).toMatchObject({ status: 'held', attempts: 0 });
    expect(held.attemptLog).toEqual([]);
    expect(receiver.byId(held.id)).toEqual([]);

    // The partner fixes the receiver and enables the webhook: the held delivery goes out.
    down = false;
    const enabled = await updateWebhook(ctx, webhook.id, { enabled: true });
    expect(enabled).toMatchObject({ status: 'active', disabledAt: null, disabledReason: null });
    await settle(manual, async () => (await deliveryOf(manual, webhook.id, 'reservation.cancelled')).status === 'delivered');
    const sent = await deliveryOf(manual, webhook.id, 'reservation.cancelled');
    expect(sent).toMatchObject({ status: 'delivered', attempts: 1 });
    // So did the one held while waiting for its retry: due at once on enabling, not an hour later.
    await settle(manual, async () => (await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: waiting } })).status === 'delivered');
    expect(receiver.byId(waiting)).toHaveLength(1);
    expect(receiver.byId(held.id).map((r) => [r.json.type, r.json.data.id, r.json.data.status])).toEqual([
      ['reservation.cancelled', booking.id, 'cancelled'],
    ]);
    // The failed delivery stays failed (a replay would resend it); it was not retried on enabling.
    expect((await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: failed!.id } })).status).toBe('failed');
    expect(receiver.byId(failed!.id)).toHaveLength(3);
  });

  it('an endpoint that succeeded after the failed delivery was made stays enabled', async () => {
    const path = pathOf('partly');
    const { who, webhook } = await channelWithHook(manual, path, { events: ['reservation.cancelled'] });
    // The receiver refuses confirmations and takes cancellations.
    receiver.respond = (r) => (r.path === path && r.json.type === 'reservation.confirmed' ? 500 : 200);
    const prisma = manual.service.deps.db.prisma;

    // A confirmation refused once, its retry held back until the cancellation has been delivered.
    // Written as the dispatcher leaves it: with a 50 ms schedule, a drain on a busy machine can
    // run every retry before the test could hold it back.
    const booking = await book(manual, who);
    const confirmed = await prisma.webhookDelivery.create({
      data: {
        id: randomUUID(),
        endpointId: webhook.id,
        channelId: webhook.channelId,
        type: 'reservation.confirmed',
        body: JSON.stringify({ type: 'reservation.confirmed', timestamp: new Date().toISOString(), data: { booking_id: booking.id } }),
        status: 'pending',
        attempts: 1,
        scheduleStep: 1,
        nextAttemptAt: new Date(Date.now() + 3_600_000),
        createdAt: new Date(),
      },
    });

    await cancel(manual, who, booking.id);
    await manual.service.dispatcher.drain();
    expect(await deliveryOf(manual, webhook.id, 'reservation.cancelled')).toMatchObject({ status: 'delivered' });
    const succeeded = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: webhook.id } });
    expect(succeeded.lastSuccessAt!.getTime()).toBeGreaterThan(confirmed.createdAt.getTime());

    await prisma.webhookDelivery.update({ where: { id: confirmed.id }, data: { nextAttemptAt: new Date() } });
    await settle(manual, async () => (await deliveryOf(manual, webhook.id, 'reservation.confirmed')).status === 'failed');
    expect((await deliveryOf(manual, webhook.id, 'reservation.confirmed')).attempts).toBe(3);
    const endpoint = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: webhook.id } });
    expect(endpoint).toMatchObject({ disabledAt: null, disabledReason: null });
  });
});

describe('who receives what', () => {
  it('an event filter, a webhook made after an event, and another channel', async () => {
    const cancelOnlyPath = pathOf('cancel-only');
    const allPath = pathOf('all');
    const latePath = pathOf('late');
    const otherPath = pathOf('other-channel');
    const a = await channelWithHook(manual, cancelOnlyPath, { events: ['reservation.cancelled'] });
    const all = await createWebhook(a.ctx, { url: receiver.url(allPath) });
    const b = await channelWithHook(manual, otherPath);
    receiver.respond = () => 200;

    const booking = await book(manual, a.who);
    await manual.service.dispatcher.drain();
    // Made after reservation.created and .confirmed happened (and were published).
    const late = await createWebhook(a.ctx, { url: receiver.url(latePath) });
    const cancelled = await cancel(manual, a.who, booking.id);
    // Another channel's booking must not reach channel A's webhooks either.
    const otherBooking = await book(manual, b.who);
    await manual.service.dispatcher.drain();

    // Attempts run concurrently, so events of one round may arrive in any order: compare sorted.
    const seen = (path: string) => receiver.on(path).map((r) => [r.json.type, r.json.data.id]).sort();
    expect(seen(cancelOnlyPath)).toEqual([['reservation.cancelled', booking.id]]);
    expect(seen(allPath)).toEqual([
      ['reservation.cancelled', booking.id],
      ['reservation.confirmed', booking.id],
      ['reservation.created', booking.id],
    ]);
    expect(seen(latePath)).toEqual([['reservation.cancelled', booking.id]]);
    expect(seen(otherPath)).toEqual([
      ['reservation.confirmed', otherBooking.id],
      ['reservation.created', otherBooking.id],
    ]);
    for (const path of [cancelOnlyPath, allPath, latePath]) {
      expect(receiver.on(path).every((r) => r.json.data.userId === a.who.user_id)).toBe(true);
    }
    // The cancellation carries the booking as GET reads it after the cancel, refund and fee included.
    const afterCancel = (await (await v1(manual, a.who).get(booking.id)).json()).data;
    expect(afterCancel).toMatchObject({ status: 'cancelled', refundAmount: String(cancelled.refund_amount), cancellationFee: String(cancelled.cancellation_fee) });
    for (const path of [cancelOnlyPath, allPath, latePath]) {
      expect(receiver.on(path).find((r) => r.json.type === 'reservation.cancelled')!.json.data).toEqual(afterCancel);
    }
    expect(receiver.on(otherPath).every((r) => r.json.data.userId === b.who.user_id)).toBe(true);

    // The database agrees: no delivery rows for what was not sent.
    const prisma = manual.service.deps.db.prisma;
    const count = (endpointId: string) => prisma.webhookDelivery.count({ where: { endpointId } });
    expect(await count(a.webhook.id)).toBe(1);
    expect(await count(all.webhook.id)).toBe(3);
    expect(await count(late.webhook.id)).toBe(1);
    expect(await count(b.webhook.id)).toBe(2);
  });
});

describe('production: the address is checked again when connecting', () => {
  it('a saved URL whose name now resolves to loopback is refused at connection time; nothing reaches the receiver', async () => {
    const t = prod;
    const who = await t.channel({ balance: 100_000_000n });
    const ctx = await ctxOf(t, who);
    const prisma = t.service.deps.db.prisma;
    receiver.respond = () => 200;

    // Saving such a URL is refused outright.
    await expect(createWebhook(ctx, { url: `http://localhost:${receiver.port}/x` })).rejects.toMatchObject({ status: 400 });
    await expect(createWebhook(ctx, { url: receiver.url('/x') })).rejects.toMatchObject({ status: 400 });

    // As if the name had resolved to a public address when saved and to loopback now.
    const byName = `/by-name-${randomBytes(4).toString('hex')}`;
    const byAddress = `/by-address-${randomBytes(4).toString('hex')}`;
    const byMapped = `/by-mapped-${randomBytes(4).toString('hex')}`;
    const now = new Date();
    const endpoint = (url: string) => ({
      id: randomUUID(),
      channelId: who.user_id,
      url,
      events: ['reservation.confirmed'],
      secret: `whsec_${randomBytes(32).toString('base64')}`,
      createdAt: now,
      updatedAt: now,
    });
    const rows = [
      endpoint(`http://localhost:${receiver.port}${byName}`),
      endpoint(`http://127.0.0.1:${receiver.port}${byAddress}`),
      endpoint(`http://[::ffff:127.0.0.1]:${receiver.port}${byMapped}`),
    ];
    await prisma.webhookEndpoint.createMany({ data: rows });

    await book(t, who);
    await t.service.dispatcher.drain();

    for (const path of [byName, byAddress, byMapped]) expect(receiver.on(path)).toEqual([]);
    for (const row of rows) {
      const [delivery] = await deliveriesOf(t, row.id);
      expect(delivery, row.url).toMatchObject({ status: 'pending', attempts: 1 });
      expect(delivery!.attemptLog).toHaveLength(1);
      const [attempt] = delivery!.attemptLog;
      expect(attempt!.statusCode, row.url).toBeNull();
      expect(attempt!.error, row.url).toMatch(/non-public|not a public/);
      // Retried later on the normal schedule (the default's first step is 5 s).
      expect(delivery!.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() + 3_000);
    }
    expect((await deliveriesOf(t, rows[0]!.id))[0]!.attemptLog[0]!.error).toContain('localhost');
  });
});

describe('a webhook changed while its events fan out', () => {
  /**
   * Runs a fan-out of the manual service in which `meanwhile` starts on another connection right
   * after the fan-out's statement that reads the endpoints (FOR KEY SHARE) and writes the
   * deliveries, while the fan-out takes its time to commit. Resolves with the fan-out's events and
   * what `meanwhile` gave.
   */
  async function fanOutAmid<T>(meanwhile: () => Promise<T>) {
    const { deps } = manual.service;
    const real = deps.db.prisma;
    let started: Promise<T> | undefined;
    const prisma = new Proxy(real, {
      get(target, key) {
        if (key !== '$transaction') {
          const value = Reflect.get(target, key);
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return (fn: (tx: unknown) => Promise<unknown>, options: unknown) =>
          target.$transaction(async (tx) => {
            let writes = 0;
            const spied = new Proxy(tx, {
              get(t, k) {
                const value = Reflect.get(t, k);
                if (k !== '$executeRaw') return typeof value === 'function' ? value.bind(t) : value;
                return async (...args: unknown[]) => {
                  const rows = await (value as (...a: unknown[]) => Promise<unknown>).apply(t, args);
                  if (++writes === 1) {
                    started = meanwhile();
                    await sleep(300);
                  }
                  return rows;
                };
              },
            });
            return fn(spied);
          }, options as Parameters<typeof target.$transaction>[1]);
      },
    });
    const published = await fanOut({ ...deps, db: { ...deps.db, prisma } }, 500);
    expect(started, 'the fan-out read the endpoints').toBeDefined();
    return { published, result: await started! };
  }

  // The embedded database runs one transaction at a time: nothing can land in between there.
  it.runIf(process.env.DATABASE_URL)('deleted: the batch is published; the delete waits for it and takes the new deliveries along', async () => {
    const { who, webhook } = await channelWithHook(manual, pathOf('deleted-mid-fan-out'), { events: ['reservation.confirmed'] });
    // Another channel's webhook, whose delivery must not be lost with the batch.
    const kept = await channelWithHook(manual, pathOf('kept-mid-fan-out'), { events: ['reservation.confirmed'] });
    const prisma = manual.service.deps.db.prisma;
    // The manual service publishes only when drained: the events wait in the outbox.
    const booking = await book(manual, who);
    const other = await book(manual, kept.who);

    // then(): a Prisma query starts only when it is awaited or then'd.
    const { published } = await fanOutAmid(() => prisma.webhookEndpoint.delete({ where: { id: webhook.id } }).then(() => 'deleted'));

    expect(published.map((e) => e.booking.id)).toEqual(expect.arrayContaining([booking.id, other.id]));
    expect(await prisma.webhookEndpoint.findUnique({ where: { id: webhook.id } })).toBeNull();
    expect(await prisma.webhookDelivery.count({ where: { endpointId: webhook.id } })).toBe(0);
    expect((await deliveriesOf(manual, kept.webhook.id)).map((d) => [d.type, d.status])).toEqual([['reservation.confirmed', 'pending']]);
    await manual.service.dispatcher.drain();
    expect((await deliveryOf(manual, kept.webhook.id, 'reservation.confirmed')).status).toBe('delivered');
  });

  it.runIf(process.env.DATABASE_URL)('enabled: the delivery the fan-out holds is released by the enabling, not stranded', async () => {
    const path = pathOf('enabled-mid-fan-out');
    const { who, ctx, webhook } = await channelWithHook(manual, path, { events: ['reservation.confirmed'] });
    receiver.respond = () => 200;
    await updateWebhook(ctx, webhook.id, { enabled: false });
    await book(manual, who);

    // The fan-out found the webhook disabled and writes the delivery held; the enabling waits for it.
    const { result } = await fanOutAmid(() => updateWebhook(ctx, webhook.id, { enabled: true }));
    expect(result.status).toBe('active');
    const delivery = await deliveryOf(manual, webhook.id, 'reservation.confirmed');
    expect(delivery.status).toBe('pending');
    await manual.service.dispatcher.drain();
    expect(receiver.byId(delivery.id)).toHaveLength(1);
  });
});

describe('fairness between endpoints', () => {
  it(`a receiver that hangs with many due deliveries holds at most ${PER_ENDPOINT_IN_FLIGHT} attempts; another channel's delivery goes out at once`, async () => {
    // A receiver of its own, counting the requests it holds open.
    let open = 0;
    let maxOpen = 0;
    let holding = true;
    const held = new Map<ServerResponse, () => void>();
    const answered = new Set<string>();
    const slow = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        open++;
        maxOpen = Math.max(maxOpen, open);
        res.on('close', () => {
          open--;
          held.delete(res);
        });
        const answer = () => {
          answered.add(String(req.headers['webhook-id']));
          res.writeHead(200).end('ok');
        };
        if (holding) held.set(res, answer);
        else answer();
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const prisma = live.service.deps.db.prisma;
    try {
      const hog = await createWebhook(await ctxOf(live, await live.channel()), {
        url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow`,
        events: ['reservation.confirmed'],
      });
      // More due deliveries than WEBHOOK_CONCURRENCY (50) has slots.
      const backlog = 60;
      expect(backlog).toBeGreaterThan(live.config.webhooks.concurrency);
      const now = Date.now();
      await prisma.webhookDelivery.createMany({
        data: Array.from({ length: backlog }, (_, i) => ({
          id: randomUUID(),
          endpointId: hog.webhook.id,
          channelId: hog.webhook.channelId,
          type: 'reservation.confirmed',
          body: `{"type":"reservation.confirmed","timestamp":"2026-01-01T00:00:00.000Z","data":{"n":${i}}}`,
          status: 'pending',
          nextAttemptAt: new Date(now - backlog + i),
          createdAt: new Date(now - backlog + i),
        })),
      });
      live.service.dispatcher.wake();
      await eventually(() => open >= PER_ENDPOINT_IN_FLIGHT, 10_000, `${PER_ENDPOINT_IN_FLIGHT} attempts held open`);

      // Another partner books meanwhile: its delivery does not wait for the hanging receiver's
      // attempts to time out (10 s).
      const path = pathOf('beside-a-hog');
      const other = await channelWithHook(live, path, { events: ['reservation.confirmed'] });
      receiver.respond = () => 200;
      const started = performance.now();
      await book(live, other.who);
      await receiver.waitFor(() => receiver.on(path).length === 1, 5_000, "the other channel's delivery");
      const waited = performance.now() - started;
      expect(waited).toBeLessThan(3_000);
      // Still no more than the cap at the hanging receiver.
      await sleep(100);
      expect(open).toBe(PER_ENDPOINT_IN_FLIGHT);
      expect(maxOpen).toBe(PER_ENDPOINT_IN_FLIGHT);

      // It answers again: the backlog drains, never more than the cap at a time.
      holding = false;
      for (const answer of [...held.values()]) answer();
      await eventually(
        async () => (await prisma.webhookDelivery.count({ where: { endpointId: hog.webhook.id, status: 'delivered' } })) === backlog,
        15_000,
        'the backlog delivered',
      );
      expect(answered.size).toBe(backlog);
      expect(maxOpen).toBe(PER_ENDPOINT_IN_FLIGHT);
      console.info(`webhook-delivery: another channel's delivery arrived ${Math.round(waited)} ms after its booking beside a hanging receiver`);
    } finally {
      for (const res of held.keys()) res.destroy();
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });
});

describe('retention', () => {
  it(`purgeDeliveries deletes delivered and failed deliveries, with their attempts, ${DELIVERY_RETENTION_MS / 86_400_000} days after their last attempt`, async () => {
    const { webhook } = await channelWithHook(manual, pathOf('retention'), { events: ['reservation.confirmed'] });
    const prisma = manual.service.deps.db.prisma;
    const now = new Date();
    const ago = (ms: number) => new Date(now.getTime() - ms);
    const old = ago(DELIVERY_RETENTION_MS + 60_000);
    const recent = ago(DELIVERY_RETENTION_MS - 60_000);
    const rows = {
      oldDelivered: { status: 'delivered', nextAttemptAt: old, deliveredAt: old },
      oldFailed: { status: 'failed', nextAttemptAt: old },
      oldFailedToo: { status: 'failed', nextAttemptAt: old },
      recentDelivered: { status: 'delivered', nextAttemptAt: recent, deliveredAt: recent },
      // Made long ago, but its last attempt (a replay) is recent.
      replayed: { status: 'delivered', nextAttemptAt: recent, deliveredAt: recent },
      // Never purged while not finished, however old.
      oldPending: { status: 'pending', nextAttemptAt: ago(DELIVERY_RETENTION_MS * 2) },
      oldHeld: { status: 'held', nextAttemptAt: ago(DELIVERY_RETENTION_MS * 2) },
    };
    const ids: Record<string, string> = {};
    for (const [name, data] of Object.entries(rows)) {
      ids[name] = randomUUID();
      await prisma.webhookDelivery.create({
        data: {
          id: ids[name]!,
          endpointId: webhook.id,
          channelId: webhook.channelId,
          type: 'reservation.confirmed',
          body: '{}',
          attempts: 1,
          createdAt: ago(DELIVERY_RETENTION_MS * 2),
          ...data,
          attemptLog: { create: { id: randomUUID(), attempt: 1, startedAt: data.nextAttemptAt, durationMs: 5, statusCode: 200 } },
        },
      });
    }
    // Batches of one: the loop goes on until a batch comes back short.
    expect(await purgeDeliveries(manual.service.deps, now, 1)).toBe(3);
    const left = await prisma.webhookDelivery.findMany({ where: { endpointId: webhook.id }, select: { id: true } });
    expect(left.map((d) => d.id).sort()).toEqual(
      ['recentDelivered', 'replayed', 'oldPending', 'oldHeld'].map((name) => ids[name]!).sort(),
    );
    // Their attempts went with them; the others keep theirs.
    expect(await prisma.webhookAttempt.count({ where: { deliveryId: { in: Object.values(ids) } } })).toBe(4);
    expect(await purgeDeliveries(manual.service.deps, now)).toBe(0);
    await prisma.webhookEndpoint.delete({ where: { id: webhook.id } });
  });
});

describe('exactly once per event and endpoint', () => {
  it('20 concurrent bookings: one delivery per event per endpoint, each received once', async () => {
    const pathA = pathOf('once-a');
    const pathB = pathOf('once-b');
    const { who, ctx, webhook } = await channelWithHook(live, pathA);
    const second = await createWebhook(ctx, { url: receiver.url(pathB) });
    receiver.respond = () => 200;
    const api = v1(live, who);

    const offers = [];
    for (let i = 0; i < 20; i++) offers.push(await api.offer(nextStay()));
    const started = performance.now();
    const results = await Promise.all(
      offers.map((o, i) => api.book({ book_token: o.bookToken, booker_name: `Guest ${i}`, guests_adult: 2 })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const bookingIds = new Set(await Promise.all(results.map(async (r) => (await r.json()).data.id as string)));

    const prisma = live.service.deps.db.prisma;
    const events = await prisma.outboxEvent.findMany({ where: { channelId: who.user_id } });
    expect(events).toHaveLength(40);
    await receiver.waitFor(() => receiver.on(pathA).length >= 40 && receiver.on(pathB).length >= 40, 20_000, '80 deliveries');
    const elapsed = performance.now() - started;
    await eventually(
      async () => (await prisma.webhookDelivery.count({ where: { channelId: who.user_id, status: 'delivered' } })) === 80,
      5_000,
      'all 80 recorded delivered',
    ).catch(async (error) => {
      // Say what the stragglers went through.
      const rows = await prisma.webhookDelivery.findMany({ where: { channelId: who.user_id, status: { not: 'delivered' } }, include: { attemptLog: true } });
      const summary = rows.map((d) => `${d.id} ${d.status} ×${d.attempts}: ${d.attemptLog.map((a) => a.statusCode ?? a.error).join(' | ')}`);
      throw new Error(`${(error as Error).message}\n${summary.join('\n')}`);
    });
    // Give a duplicate the chance to show up.
    await sleep(300);

    for (const [path, endpointId] of [
      [pathA, webhook.id],
      [pathB, second.webhook.id],
    ] as const) {
      const got = receiver.on(path);
      const retried = (await deliveriesOf(live, endpointId)).filter((d) => d.attempts > 1);
      expect(
        got,
        `deliveries sent more than once: ${retried.map((d) => `${d.id} ×${d.attempts} [${d.attemptLog.map((a) => `${a.statusCode ?? a.error} ${a.durationMs} ms`).join('; ')}]`).join(', ')}`,
      ).toHaveLength(40);
      expect(new Set(got.map((r) => r.webhookId)).size).toBe(40);
      const deliveries = await deliveriesOf(live, endpointId);
      expect(deliveries).toHaveLength(40);
      expect(new Set(deliveries.map((d) => d.eventId))).toEqual(new Set(events.map((e) => e.id)));
      expect(new Set(got.map((r) => r.webhookId))).toEqual(new Set(deliveries.map((d) => d.id)));
      expect(deliveries.every((d) => d.status === 'delivered' && d.attempts === 1 && d.attemptLog.length === 1)).toBe(true);
      expect(new Set(got.map((r) => r.json.data.id as string))).toEqual(bookingIds);
      // Each booking: created and confirmed, once each.
      const perBooking = new Map<string, string[]>();
      for (const r of got) perBooking.set(r.json.data.id as string, [...(perBooking.get(r.json.data.id as string) ?? []), r.json.type].sort());
      for (const types of perBooking.values()) expect(types).toEqual(['reservation.confirmed', 'reservation.created']);
    }
    console.info(`webhook-delivery: 20 concurrent bookings → 80 deliveries received ${Math.round(elapsed)} ms after the first POST (${live.service.deps.db.kind})`);
  });
});
