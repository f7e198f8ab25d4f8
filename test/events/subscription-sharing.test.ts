import type { Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLOT_LEASE_MS, slotKey } from '../../src/events/subscriptionSlots.js';
import { GROUP_BACKLOG } from '../../src/graphql/multiplex.js';
import { MAX_UNSENT_BYTES, SLOW_READER_CLOSE } from '../../src/graphql/sharedSends.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import type { BookingEventMessage } from '../../src/services/webhooks/index.js';
import { countCalls } from '../helpers/counters.js';
import { v1 } from '../helpers/flow.js';
import { graphqlWsClient } from '../helpers/graphql.js';
import { eventually, sleep } from '../helpers/receiver.js';
import { startTestService, uniqueIp, type TestService } from '../helpers/service.js';

/**
 * Multiplexed graphql-ws subscriptions (issue 18, item 5): subscribers with the same channel,
 * scopes, document and variables share one execution per event (counted here by the database
 * statements of an edge the selection reads: one per execution), others form groups of their own;
 * every subscriber still receives every event once and in order, and a revoked credential ends its
 * own subscriptions while the rest of its group goes on.
 */

/** `booking.events` reads the booking's history from the database: one statement per execution. */
const WITH_HISTORY = /* GraphQL */ `
  subscription ($types: [BookingEventType!]) {
    bookingEvents(types: $types) {
      id
      type
      booking { bookingId events { type } }
    }
  }
`;

const PLAIN = /* GraphQL */ `
  subscription {
    bookingEvents { id type booking { bookingId } }
  }
`;

interface Received {
  events: { id: string; type: string; bookingId: string }[];
  errors: { extensions?: { code?: string } }[];
  completed: boolean;
  stop: () => void;
}

function watch(client: Client, query: string, variables: Record<string, unknown> = {}): Received {
  const received: Received = { events: [], errors: [], completed: false, stop: () => {} };
  received.stop = client.subscribe<Record<string, { id: string; type: string; booking: { bookingId: string } }>>(
    { query, variables },
    {
      next: (result) => {
        if (result.errors) received.errors.push(...(result.errors as unknown as Received['errors']));
        for (const event of Object.values(result.data ?? {})) {
          if (event) received.events.push({ id: event.id, type: event.type, bookingId: event.booking.bookingId });
        }
      },
      error: (error) => {
        received.errors.push(...((Array.isArray(error) ? error : [error]) as Received['errors']));
        received.completed = true;
      },
      complete: () => (received.completed = true),
    },
  );
  return received;
}

async function book(t: TestService, who: IssuedCredentials, from: number): Promise<string> {
  const flow = v1(t, who);
  const offer = await flow.offer({ from });
  const res = await flow.book({ book_token: offer.bookToken, booker_name: 'Shared Subscriber', guests_adult: 2 });
  expect(res.status).toBe(201);
  t.service.deps.dispatcher.wake();
  return ((await res.json()) as { data: { id: string } }).data.id;
}

describe('multiplexed graphql-ws subscriptions', () => {
  let t: TestService;
  let port: number;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestService({
      // The dispatcher wakes on each commit (and is woken after each booking); no polling runs
      // inside a counted window. A long credential cache: the only statements counted are the edges'.
      EVENTS_POLL_INTERVAL_MS: '60000',
      AUTH_CACHE_TTL_MS: '60000',
      BOOKING_SYNC_INTERVAL_MS: '0',
    });
    port = await t.service.listen(0);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await t?.close();
  });

  const connections = (who: IssuedCredentials | { connectionParams: Record<string, unknown> }, n: number) =>
    Array.from({ length: n }, () => graphqlWsClient(port, who, clients));
  const places = (who: IssuedCredentials, n: number) =>
    eventually(() => t.service.deps.events.subscribers(who.user_id) === n, 10_000, `${n} subscriptions of the channel`);

  /** The statements made while `event` is published again and `watchers` have each received it. */
  async function statementsFor(event: BookingEventMessage, watchers: Received[]): Promise<number> {
    const before = watchers.map((w) => w.events.length);
    const counting = countCalls(t);
    let counts;
    try {
      t.service.deps.events.publish(event);
      await eventually(() => watchers.every((w, i) => w.events.length === before[i]! + 1), 10_000, 'the event at every subscriber');
      await sleep(100);
    } finally {
      counts = counting.stop();
    }
    return counts.database;
  }

  it('subscribers with the same document and variables share one execution per event; other variables are another group', async () => {
    const who = await t.channel({ name: 'Shared Channel' });
    const bus: BookingEventMessage[] = [];
    const unlisten = t.service.deps.events.listen(who.user_id, (event) => bus.push(event));
    const bookingId = await book(t, who, 1);
    await eventually(() => bus.length >= 2, 10_000, 'the booking events on the bus');
    unlisten();
    const event = bus[0]!;
    expect(event.booking.id).toBe(bookingId);

    // One subscriber: what one execution of the selection costs.
    const [first, second, third] = connections(who, 3);
    const alone = watch(first!, WITH_HISTORY);
    await places(who, 1);
    const one = await statementsFor(event, [alone]);
    expect(one).toBeGreaterThan(0);

    // 30 subscribers of the same document and variables (on three connections): the same cost.
    const group = [alone, ...Array.from({ length: 29 }, (_, i) => watch([first!, second!, third!][i % 3]!, WITH_HISTORY))];
    await places(who, 30);
    expect(await statementsFor(event, group)).toBe(one);

    // 10 more with other variables: a second group, a second execution.
    const [fourth] = connections(who, 1);
    const narrowed = Array.from({ length: 10 }, () => watch(fourth!, WITH_HISTORY, { types: ['RESERVATION_CREATED'] }));
    await places(who, 40);
    expect(await statementsFor(event, [...group, ...narrowed])).toBe(2 * one);

    for (const w of [...group, ...narrowed]) {
      expect(w.errors).toEqual([]);
      // The event, published three times (twice for the narrowed group), each time to everyone there.
      expect(w.events.every((e) => e.id === event.id && e.bookingId === bookingId)).toBe(true);
    }
    expect(group.map((w) => w.events.length)).toEqual([3, ...Array(29).fill(2)]);
    expect(narrowed.map((w) => w.events.length)).toEqual(Array(10).fill(1));
    for (const w of [...group, ...narrowed]) w.stop();
    await places(who, 0);
  });

  it('every subscriber receives every event once, in the order of the bus, from the booking after it subscribed', async () => {
    const who = await t.channel({ name: 'Ordered Channel' });
    const bus: BookingEventMessage[] = [];
    const unlisten = t.service.deps.events.listen(who.user_id, (event) => bus.push(event));
    const conns = connections(who, 4);
    const everything = Array.from({ length: 20 }, (_, i) => watch(conns[i % 4]!, PLAIN));
    const confirmations = Array.from({ length: 5 }, (_, i) => watch(conns[i % 4]!, WITH_HISTORY, { types: ['RESERVATION_CONFIRMED'] }));
    await places(who, 25);

    await book(t, who, 100);
    await eventually(() => everything.every((w) => w.events.length === 2), 10_000, 'the first booking everywhere');
    // One more subscriber now: it receives the bookings from here on.
    const late = watch(conns[0]!, PLAIN);
    await places(who, 26);
    await book(t, who, 110);
    await book(t, who, 120);
    await eventually(() => [...everything, late].every((w) => w.events.length >= (w === late ? 4 : 6)), 15_000, 'three bookings everywhere');
    await sleep(200);
    unlisten();

    expect(bus).toHaveLength(6);
    const order = bus.map((e) => e.id);
    for (const w of everything) expect(w.events.map((e) => e.id)).toEqual(order);
    expect(late.events.map((e) => e.id)).toEqual(order.slice(2));
    const confirmed = bus.filter((e) => e.type === 'reservation.confirmed').map((e) => e.id);
    expect(confirmed).toHaveLength(3);
    for (const w of confirmations) expect(w.events.map((e) => e.id)).toEqual(confirmed);
    for (const w of [...everything, ...confirmations, late]) {
      expect(w.errors).toEqual([]);
      expect(w.completed).toBe(false);
    }
    for (const w of [...everything, ...confirmations, late]) w.stop();
  });

  it('a revoked token ends its own subscription with UNAUTHORIZED; the key subscribers of its group go on', async () => {
    const who = await t.channel({ name: 'Revoking Channel' });
    const minted = await t.request('/channel/v1/oauth/token', {
      method: 'POST',
      ip: uniqueIp(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: who.client_id, client_secret: who.client_secret }).toString(),
    });
    expect(minted.status).toBe(200);
    const { access_token: token, scope } = (await minted.json()) as { access_token: string; scope: string };
    // The token carries every scope of the key, so both subscribe into the same group.
    expect(scope.split(' ').sort()).toEqual([...who.scopes].sort());

    const [keyed] = connections(who, 1);
    const [tokened] = connections({ connectionParams: { Authorization: `Bearer ${token}` } }, 1);
    const keys = [watch(keyed!, PLAIN), watch(keyed!, PLAIN)];
    const bearer = watch(tokened!, PLAIN);
    await places(who, 3);
    const firstBooking = await book(t, who, 200);
    await eventually(() => [...keys, bearer].every((w) => w.events.length === 2), 10_000, 'the first booking everywhere');

    const revoked = await t.request('/channel/v1/oauth/revoke', {
      method: 'POST',
      ip: uniqueIp(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: who.client_id, client_secret: who.client_secret, token }).toString(),
    });
    expect(revoked.status).toBe(200);
    const secondBooking = await book(t, who, 210);
    await eventually(() => bearer.completed, 10_000, 'the token subscription to end');
    expect(bearer.events.map((e) => e.bookingId)).toEqual([firstBooking, firstBooking]);
    expect(bearer.errors.map((e) => e.extensions?.code)).toEqual(['UNAUTHORIZED']);
    // Its place is given back; the key's two stay.
    await places(who, 2);

    const thirdBooking = await book(t, who, 220);
    await eventually(() => keys.every((w) => w.events.length === 6), 10_000, 'every booking on the key subscriptions');
    for (const w of keys) {
      expect(w.events.map((e) => e.bookingId)).toEqual([firstBooking, firstBooking, secondBooking, secondBooking, thirdBooking, thirdBooking]);
      expect(w.errors).toEqual([]);
      expect(w.completed).toBe(false);
    }
    expect(bearer.events).toHaveLength(2);
    for (const w of keys) w.stop();
  });

  it('a reader too slow is closed with 1013 once more than MAX_UNSENT_BYTES wait for it; the rest of its group goes on', async () => {
    const who = await t.channel({ name: 'Slow Channel' });
    const bus: BookingEventMessage[] = [];
    const unlisten = t.service.deps.events.listen(who.user_id, (event) => bus.push(event));
    await book(t, who, 460);
    await eventually(() => bus.length >= 1, 10_000, 'an event to publish again');
    unlisten();
    const [fast] = connections(who, 1);
    const keeping = watch(fast!, PLAIN);
    // A raw graphql-ws client that stops reading once subscribed.
    const slow = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws');
    const closed = new Promise<number>((resolve) => slow.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      slow.on('open', () => slow.send(JSON.stringify({ type: 'connection_init', payload: { 'X-Api-Key': who.api_key } })));
      slow.once('message', () => {
        slow.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: PLAIN } }));
        resolve();
      });
    });
    await places(who, 2);
    (slow as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    let received = 0;
    slow.on('message', () => received++);
    // Far more than the socket buffers and MAX_UNSENT_BYTES hold (an event is about 200 bytes), in
    // batches the group keeps (its backlog is GROUP_BACKLOG): each batch waits until the group has
    // executed all but half a backlog (each event's execution is charged to the channel first, a
    // Redis round trip with REDIS_URL, so the group's pace is not the publisher's).
    const published = 30_000;
    for (let sent = 0; sent < published; sent += 200) {
      for (let i = 0; i < 200; i++) t.service.deps.events.publish(bus[0]!);
      await eventually(() => keeping.events.length >= sent + 200 - GROUP_BACKLOG / 2, 20_000, 'the group within its backlog', 5);
    }
    await eventually(() => keeping.events.length >= published * 0.5, 20_000, 'most events at the subscriber that keeps up');
    expect(published * 200).toBeGreaterThan(10 * MAX_UNSENT_BYTES);
    // Reading again, it finds what was sent before the bound, then the close.
    (slow as unknown as { _socket: { resume(): void } })._socket.resume();
    expect(await closed).toBe(SLOW_READER_CLOSE);
    expect(received).toBeLessThan(keeping.events.length);
    await places(who, 1);
    // The other subscriber of the group still receives: a booking made now reaches it.
    const bookingId = await book(t, who, 470);
    await eventually(() => keeping.events.some((e) => e.bookingId === bookingId), 10_000, 'the booking on the subscription that kept up');
    expect(keeping.errors).toEqual([]);
    expect(keeping.completed).toBe(false);
    keeping.stop();
  }, 120_000);

  it('50 subscriptions of one channel in 50 groups: each receives the event, and Node warns of no listener leak', async () => {
    const who = await t.channel({ name: 'Fifty Channel' });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const conns = connections(who, 3);
      // A document of its own each (an alias), so 50 groups, 50 listeners of the channel's events.
      const fifty = Array.from({ length: 50 }, (_, i) => watch(conns[i % 3]!, `subscription { e${i}: bookingEvents { id type booking { bookingId } } }`));
      await places(who, 50);
      const bookingId = await book(t, who, 300);
      await eventually(() => fifty.every((w) => w.events.length === 2), 15_000, 'the booking at all 50');
      for (const w of fifty) expect(w.events.map((e) => e.bookingId)).toEqual([bookingId, bookingId]);
      await sleep(100);
      expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
      for (const w of fifty) w.stop();
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe.runIf(process.env.REDIS_URL)('a shared subscriber that lost its place (Redis)', () => {
  let t: TestService;
  let port: number;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '50', SUBSCRIPTIONS_MAX_PER_CHANNEL: '2' });
    port = await t.service.listen(0);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await t?.close();
  });

  it('ends alone with SUBSCRIPTION_LIMIT_EXCEEDED at the next renewal; the other subscriber of its group goes on', async () => {
    const who = await t.channel({ name: 'Lost Shared Place' });
    const conn = graphqlWsClient(port, who, clients);
    const pair = [watch(conn, PLAIN), watch(conn, PLAIN)];
    await eventually(() => t.service.deps.events.subscribers(who.user_id) === 2, 10_000, 'both admitted');
    const redis = t.service.deps.redis!;
    const key = slotKey(who.user_id);
    const [one] = await redis.zrange(key, 0, -1);
    // One lease ran out while this instance could not reach Redis, and another took the place.
    const [seconds, micros] = await redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    await redis.zadd(key, now - 1, one!, now + SLOT_LEASE_MS, 'other-1');
    // The next renewal round (every SLOT_LEASE_MS / 3) finds it gone.
    await eventually(() => pair.some((w) => w.completed), SLOT_LEASE_MS, 'one subscription to end');
    const ended = pair.find((w) => w.completed)!;
    const going = pair.find((w) => !w.completed)!;
    expect(ended.errors.map((e) => e.extensions?.code)).toEqual(['SUBSCRIPTION_LIMIT_EXCEEDED']);
    await eventually(() => t.service.deps.events.subscribers(who.user_id) === 1, 10_000, 'its place no longer counted');

    const bookingId = await book(t, who, 400);
    await eventually(() => going.events.length === 2, 10_000, 'the booking on the other subscription');
    expect(going.events.map((e) => e.bookingId)).toEqual([bookingId, bookingId]);
    expect(going.errors).toEqual([]);
    expect(ended.events).toEqual([]);
  }, SLOT_LEASE_MS + 20_000);
});
