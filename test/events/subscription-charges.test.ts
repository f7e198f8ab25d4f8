import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { countCalls, type Counts } from '../helpers/counters.js';
import { day, v1 } from '../helpers/flow.js';
import { graphqlWsClient } from '../helpers/graphql.js';
import { eventually, sleep } from '../helpers/receiver.js';
import { apiKey, json, startTestService, TEST_RATE_LIMIT, type TestService } from '../helpers/service.js';
import { sseSubscribe, type SsePayload, type SseSubscription } from '../helpers/sse.js';

/**
 * Live subscriptions are charged for what they execute per event (docs/decisions.md, "Hardening:
 * subscriptions and refused work"): each event's execution costs what the subscription's selection
 * costs as a query (here 2 points: the root field and one Property.availability), charged before it
 * runs, once per SSE subscription and once per shared graphql-ws execution; an event the channel's
 * points do not cover is RATE_LIMIT_EXCEEDED naming the event, nothing of its selection runs, and
 * the subscription goes on. So an event's provider calls are bounded by the channel's limit.
 */

/** A subscription whose every event asks the provider for one property's content and its availability for one stay. */
const withAvailability = (n: number) => /* GraphQL */ `
  subscription Watch${n} {
    bookingEvents {
      id
      type
      booking { bookingId property { name availability(stay: { checkin: "${day(50 + n)}", checkout: "${day(51 + n)}", adults: 2 }) { nights } } }
    }
  }
`;
/** documentCost of withAvailability: 1 for the root field, 1 for the availability of its one property. */
const COST = 2;

const PROVIDER = ['getProperties', 'getProperty', 'availability', 'availabilityBatch'];
const availabilityCalls = (c: Counts) => c.provider.availability! + c.provider.availabilityBatch!;
const contentCalls = (c: Counts) => c.provider.getProperties! + c.provider.getProperty!;

describe('live subscriptions are charged per event', () => {
  let t: TestService;
  let port: number;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestService({
      EVENTS_POLL_INTERVAL_MS: '50',
      // The limit is read at every charge (the tests set it), in one window for the whole file.
      RATE_LIMIT_CACHE_TTL_MS: '0',
      RATE_LIMIT_WINDOW_SECONDS: '3600',
    });
    port = await t.service.listen(0);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await t?.close();
  });

  /** A booking of `who`, its creation events published (so they reach no subscriber made after). */
  async function booked(who: IssuedCredentials, from: number): Promise<string> {
    const flow = v1(t, who);
    const offer = await flow.offer({ from });
    const res = await flow.book({ book_token: offer.bookToken, booker_name: 'Charged Subscriber', guests_adult: 2 });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { data: { id: string } }).data.id;
    await eventually(async () => (await t.service.deps.db.prisma.outboxEvent.count({ where: { publishedAt: null } })) === 0, 10_000, 'the events published');
    return id;
  }

  /** Sets the channel's limit so that, after the next 1-point request, exactly `left` points remain in the window. */
  async function leaveAfterNextRequest(who: IssuedCredentials, left: number): Promise<void> {
    await t.service.deps.db.prisma.channel.update({ where: { id: who.user_id }, data: { rateLimitSandbox: TEST_RATE_LIMIT.sandbox } });
    const probe = await t.request('/channel/v1/channels/me', { headers: apiKey(who) });
    expect(probe.status).toBe(200);
    const spent = TEST_RATE_LIMIT.sandbox - Number(probe.headers.get('x-ratelimit-remaining'));
    await t.service.deps.db.prisma.channel.update({ where: { id: who.user_id }, data: { rateLimitSandbox: spent + 1 + left } });
  }

  /** A one-point PATCH of the booking: it adds one event. */
  async function patch(who: IssuedCredentials, bookingId: string, note: string): Promise<Response> {
    const res = await t.request(`/channel/v1/bookings/${bookingId}`, { method: 'PATCH', ...json({ special_requests: note }, apiKey(who)) });
    expect(res.status).toBe(200);
    return res;
  }

  it('100 SSE subscriptions with different documents, then one 1-point PATCH: the provider calls stay within the points left', async () => {
    const who = await t.channel({ name: 'Hundred Documents' });
    const bookingId = await booked(who, 1);
    const streams: SseSubscription[] = [];
    for (let n = 0; n < 100; n++) streams.push(await sseSubscribe(t, who, withAvailability(n)));
    await eventually(() => t.service.deps.events.subscribers(who.user_id) === 100, 15_000, '100 subscriptions');

    // 49 points left after the PATCH: 24 executions of 2 points fit, the other 76 do not.
    await leaveAfterNextRequest(who, 49);
    const counting = countCalls(t, PROVIDER);
    let counts: Counts;
    try {
      const res = await patch(who, bookingId, 'Late arrival');
      expect(res.headers.get('x-ratelimit-remaining')).toBe('49');
      await eventually(() => streams.every((s) => s.payloads.length === 1), 20_000, 'the event on every stream');
      await sleep(200);
    } finally {
      counts = counting.stop();
    }
    const payloads = streams.map((s) => s.payloads[0]!);
    const delivered = payloads.filter((p) => p.data?.bookingEvents);
    const refused = payloads.filter((p) => p.errors);
    expect(delivered).toHaveLength(24);
    expect(refused).toHaveLength(76);
    // One availability call per execution that ran, not one per subscription.
    expect(availabilityCalls(counts)).toBe(24);
    expect(contentCalls(counts)).toBeLessThanOrEqual(24);

    const event = delivered[0]!.data!.bookingEvents as { id: string; booking: { bookingId: string; property: { availability: { nights: number } } } };
    expect(event.booking).toMatchObject({ bookingId, property: { availability: { nights: 1 } } });
    const { rateLimitSandbox: limit } = await t.service.deps.db.prisma.channel.findUniqueOrThrow({ where: { id: who.user_id } });
    for (const p of refused) expectEventRefused(p, { eventId: event.id, bookingId, limit });
    // Every stream is still open; the channel has the 1 point no execution could use.
    expect(streams.every((s) => !s.ended)).toBe(true);
    const after = await t.request('/channel/v1/channels/me', { headers: apiKey(who) });
    expect(after.headers.get('x-ratelimit-remaining')).toBe('0');

    // With points back, the next event reaches every subscription again.
    await t.service.deps.db.prisma.channel.update({ where: { id: who.user_id }, data: { rateLimitSandbox: TEST_RATE_LIMIT.sandbox } });
    await patch(who, bookingId, 'Early arrival');
    await eventually(() => streams.every((s) => s.payloads.length === 2), 20_000, 'the next event on every stream');
    expect(streams.every((s) => s.payloads[1]!.data?.bookingEvents && !s.payloads[1]!.errors)).toBe(true);
    await Promise.all(streams.map((s) => s.cancel()));
  });

  it('graphql-ws subscribers of one document share one execution and one charge per event; over the limit all get the refusal and stay subscribed', async () => {
    const who = await t.channel({ name: 'Shared Charge' });
    const bookingId = await booked(who, 20);
    const received: { payloads: SsePayload[]; done: boolean }[] = [];
    const [a, b] = [graphqlWsClient(port, who, clients), graphqlWsClient(port, who, clients)];
    for (let i = 0; i < 20; i++) {
      const into = { payloads: [] as SsePayload[], done: false };
      received.push(into);
      (i % 2 ? a! : b!).subscribe({ query: withAvailability(0) }, { next: (p) => void into.payloads.push(p as SsePayload), error: () => (into.done = true), complete: () => (into.done = true) });
    }
    await eventually(() => t.service.deps.events.subscribers(who.user_id) === 20, 15_000, '20 subscriptions');

    // Points for the PATCH and one execution: the 20 subscribers' event costs 2 points in all.
    await leaveAfterNextRequest(who, COST);
    const counting = countCalls(t, PROVIDER);
    let counts: Counts;
    try {
      await patch(who, bookingId, 'One charge');
      await eventually(() => received.every((r) => r.payloads.length === 1), 15_000, 'the event at every subscriber');
      await sleep(200);
    } finally {
      counts = counting.stop();
    }
    expect(received.every((r) => r.payloads[0]!.data?.bookingEvents)).toBe(true);
    expect(availabilityCalls(counts)).toBe(1);
    const spent = await t.request('/channel/v1/channels/me', { headers: apiKey(who) });
    expect(spent.headers.get('x-ratelimit-remaining')).toBe('0');

    // One point left after the next PATCH, less than the execution's 2: every subscriber gets the refusal.
    await leaveAfterNextRequest(who, 1);
    const refusing = countCalls(t, PROVIDER);
    try {
      await patch(who, bookingId, 'Over the limit');
      await eventually(() => received.every((r) => r.payloads.length === 2), 15_000, 'the refusal at every subscriber');
      await sleep(200);
    } finally {
      counts = refusing.stop();
    }
    expect(availabilityCalls(counts) + contentCalls(counts)).toBe(0);
    const { rateLimitSandbox: limit } = await t.service.deps.db.prisma.channel.findUniqueOrThrow({ where: { id: who.user_id } });
    for (const r of received) expectEventRefused(r.payloads[1]!, { bookingId, limit, left: 1 });
    expect(received.every((r) => !r.done)).toBe(true);
  });
});

/** An event refused by the rate limit: no data, one RATE_LIMIT_EXCEEDED naming the event, its cost and the limit. */
function expectEventRefused(payload: SsePayload, expected: { bookingId: string; eventId?: string; limit: number; left?: number }): void {
  expect(payload.data ?? null).toBeNull();
  expect(payload.errors).toHaveLength(1);
  const [error] = payload.errors!;
  expect(error!.path).toEqual(['bookingEvents']);
  expect(error!.extensions?.code).toBe('RATE_LIMIT_EXCEEDED');
  const details = error!.extensions!.details!;
  expect(details).toMatchObject({ cost: COST, booking_id: expected.bookingId, event_id: expected.eventId ?? expect.any(String), retry_after: expect.any(Number) });
  expect(details.limit).toBe(expected.limit);
  if (expected.left !== undefined) expect(error!.message).toContain(`${expected.left} are left`);
  expect(error!.message).toContain(`event ${details.event_id as string} of booking ${expected.bookingId} was not sent`);
}
