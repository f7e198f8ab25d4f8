import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { rotateKey, type IssuedCredentials } from '../../src/services/channels/index.js';
import { v1 } from '../helpers/flow.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * Subscription.bookingEvents over graphql-ws and SSE: a subscriber sees its own channel's events,
 * live, in order, filtered by type, authenticated in connection_init; with Redis, across instances.
 */

const SUBSCRIPTION = /* GraphQL */ `
  subscription ($types: [BookingEventType!]) {
    bookingEvents(types: $types) {
      id
      type
      occurredAt
      booking { bookingId status totalAmount checkin propertyId updatedAt }
    }
  }
`;

interface EventPayload {
  id: string;
  type: string;
  occurredAt: string;
  booking: { bookingId: string; status: string; totalAmount: number; checkin: string; propertyId: number; updatedAt: string };
}

/** A live graphql-ws subscription collecting what arrives, and the errors it ends with. */
interface Watch {
  events: EventPayload[];
  errors: unknown[];
  done: Promise<void>;
  started: Promise<void>;
  stop(): void;
}

const connected = new WeakSet<Client>();

function wsClient(port: number, params: Record<string, unknown>): Client {
  const client = createClient({
    url: `ws://127.0.0.1:${port}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: params,
    retryAttempts: 0,
    lazy: true,
  });
  client.on('connected', () => connected.add(client));
  client.on('closed', () => connected.delete(client));
  return client;
}

function watch(client: Client, variables: Record<string, unknown> = {}): Watch {
  const events: EventPayload[] = [];
  const errors: unknown[] = [];
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  if (connected.has(client)) markStarted();
  client.on('connected', () => markStarted());
  let stop!: () => void;
  const done = new Promise<void>((resolve) => {
    stop = client.subscribe<{ bookingEvents: EventPayload }>(
      { query: SUBSCRIPTION, variables },
      {
        next: (result) => {
          if (result.errors) errors.push(...result.errors);
          if (result.data?.bookingEvents) events.push(result.data.bookingEvents);
        },
        error: (error) => {
          // graphql-ws reports refused operations as a list of GraphQL errors, a closed socket as an event.
          if (Array.isArray(error)) errors.push(...(error as unknown[]));
          else errors.push(error);
          markStarted();
          resolve();
        },
        complete: () => resolve(),
      },
    );
  });
  return { events, errors, done, started, stop };
}

/** The subscription is registered once a first booking of another channel went by unseen; simpler: wait a little after connecting. */
async function settled(w: Watch): Promise<void> {
  await w.started;
  // The server runs onSubscribe after the connection is acknowledged; give it a moment.
  await new Promise((resolve) => setTimeout(resolve, 150));
}

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function bookOne(t: TestService, who: IssuedCredentials, from = 1) {
  const flow = v1(t, who);
  const offer = await flow.offer({ from });
  const res = await flow.book({ book_token: offer.bookToken, booker_name: 'Sub Scriber', guests_adult: 2 });
  expect(res.status).toBe(201);
  return { flow, offer, booking: (await res.json()).data as { id: string; totalAmount: string; status: string } };
}

describe('bookingEvents over graphql-ws', () => {
  let t: TestService;
  let port: number;
  let alice: IssuedCredentials;
  let bob: IssuedCredentials;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '50' });
    port = await t.service.listen(0);
    alice = await t.channel({ name: 'Alice Travel' });
    bob = await t.channel({ name: 'Bob Trips' });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await t?.close();
  });

  const client = (params: Record<string, unknown>) => {
    const c = wsClient(port, params);
    clients.push(c);
    return c;
  };

  it("delivers the channel's events live, in order, with the booking as it was then; another channel sees nothing", async () => {
    const mine = watch(client({ 'X-Api-Key': alice.api_key }));
    const theirs = watch(client({ 'X-Api-Key': bob.api_key }));
    await Promise.all([settled(mine), settled(theirs)]);

    const { flow, booking } = await bookOne(t, alice);
    await until(() => mine.events.length >= 2, 'created and confirmed');
    expect(mine.events.map((e) => e.type)).toEqual(['RESERVATION_CREATED', 'RESERVATION_CONFIRMED']);
    for (const event of mine.events) {
      expect(event.booking.bookingId).toBe(booking.id);
      expect(event.booking.totalAmount).toBe(Number(booking.totalAmount));
    }
    expect(mine.events[1]!.booking.status).toBe('CONFIRMED');
    expect(new Date(mine.events[0]!.occurredAt).getTime()).toBeLessThan(new Date(mine.events[1]!.occurredAt).getTime());

    const cancelled = await flow.cancel(booking.id);
    expect(cancelled.status).toBe(200);
    await until(() => mine.events.length >= 3, 'cancelled');
    expect(mine.events[2]).toMatchObject({ type: 'RESERVATION_CANCELLED', booking: { bookingId: booking.id, status: 'CANCELLED' } });
    expect(new Set(mine.events.map((e) => e.id)).size).toBe(3);
    expect(mine.errors).toEqual([]);

    // Bob's subscription was open the whole time and received none of Alice's events.
    expect(theirs.events).toEqual([]);
    expect(theirs.errors).toEqual([]);
  });

  it('narrows to the requested types', async () => {
    const cancellations = watch(client({ 'X-Api-Key': alice.api_key }), { types: ['RESERVATION_CANCELLED'] });
    const everything = watch(client({ 'X-Api-Key': alice.api_key }));
    await Promise.all([settled(cancellations), settled(everything)]);
    const { flow, booking } = await bookOne(t, alice, 20);
    await until(() => everything.events.length >= 2, 'the booking events');
    expect(cancellations.events).toEqual([]);
    await flow.cancel(booking.id);
    await until(() => cancellations.events.length >= 1, 'the cancellation');
    await until(() => everything.events.length >= 3, 'the cancellation on the unfiltered subscription');
    expect(cancellations.events.map((e) => e.type)).toEqual(['RESERVATION_CANCELLED']);
  });

  it('refuses a connection without a valid credential in connection_init with 4401 and the reason', async () => {
    const attempts: [Record<string, string>, string][] = [
      [{}, 'UNAUTHORIZED: No credential in connection_init: send X-Api-Key or Authorization, flat or under "headers"'],
      [{ 'X-Api-Key': 'ck_not_a_key' }, 'UNAUTHORIZED: The API key is not valid'],
      [{ Authorization: 'Bearer oat_nope' }, 'UNAUTHORIZED: The access token is not valid'],
    ];
    for (const [params, reason] of attempts) {
      const refused = watch(client(params));
      await refused.done;
      expect(refused.events).toEqual([]);
      expect(refused.errors).toHaveLength(1);
      // graphql-ws's client hands over the close event; 4401 is one it does not retry.
      expect(refused.errors[0]).toMatchObject({ code: 4401, reason });
    }
  });

  it('takes the credential under headers too, as GraphiQL-style clients send it', async () => {
    const nested = watch(client({ headers: { 'X-Api-Key': alice.api_key } }));
    await settled(nested);
    const { booking } = await bookOne(t, alice, 60);
    await until(() => nested.events.some((e) => e.booking.bookingId === booking.id), 'an event on the subscription authenticated under headers');
  });

  it('accepts a bearer token, and refuses a credential without reservations:read with INSUFFICIENT_SCOPE', async () => {
    const token = await t.request('/channel/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: alice.client_id,
        client_secret: alice.client_secret,
        scope: 'reservations:read',
      }),
    });
    expect(token.status).toBe(200);
    const { access_token } = (await token.json()) as { access_token: string };
    const bearer = watch(client({ Authorization: `Bearer ${access_token}` }));
    await settled(bearer);
    await bookOne(t, alice, 40);
    await until(() => bearer.events.length >= 2, 'events on the bearer subscription');

    const searcher = await t.channel({ name: 'Only Search', scopes: ['search:availability'] });
    const denied = watch(client({ 'X-Api-Key': searcher.api_key }));
    await denied.done;
    expect(denied.events).toEqual([]);
    expect(denied.errors).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'INSUFFICIENT_SCOPE' }) }),
    ]);
  });

  it('rejects an unknown event type before subscribing', async () => {
    const bad = watch(client({ 'X-Api-Key': alice.api_key }), { types: ['reservation.created'] });
    await bad.done;
    expect(bad.events).toEqual([]);
    expect(bad.errors.length).toBeGreaterThan(0);
  });
});

describe('limits and revocation', () => {
  let t: TestService;
  let port: number;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestService({
      EVENTS_POLL_INTERVAL_MS: '50',
      // No credential cache: a revocation applies to the next event.
      AUTH_CACHE_TTL_MS: '0',
      SUBSCRIPTIONS_MAX_PER_CONNECTION: '2',
      SUBSCRIPTIONS_MAX_PER_CHANNEL: '3',
    });
    port = await t.service.listen(0);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await t?.close();
  });

  const client = (params: Record<string, unknown>) => {
    const c = wsClient(port, params);
    clients.push(c);
    return c;
  };
  const limitCode = (w: Watch) => (w.errors[0] as { extensions?: { code?: string } } | undefined)?.extensions?.code;

  it('a connection runs at most SUBSCRIPTIONS_MAX_PER_CONNECTION operations, a channel holds at most SUBSCRIPTIONS_MAX_PER_CHANNEL', async () => {
    const who = await t.channel({ name: 'Many Subs' });
    const one = client({ 'X-Api-Key': who.api_key });
    const first = watch(one);
    const second = watch(one);
    await Promise.all([settled(first), settled(second)]);
    const third = watch(one);
    await third.done;
    expect(limitCode(third)).toBe('SUBSCRIPTION_LIMIT_EXCEEDED');

    // Stopping one frees its place on the connection.
    first.stop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const again = watch(one);
    await settled(again);
    expect(again.errors).toEqual([]);

    // Two on the first connection, one more on another: the channel's three.
    const other = client({ 'X-Api-Key': who.api_key });
    const fourth = watch(other);
    await settled(fourth);
    expect(fourth.errors).toEqual([]);
    const over = watch(other);
    await over.done;
    expect(limitCode(over)).toBe('SUBSCRIPTION_LIMIT_EXCEEDED');
    expect(t.service.deps.events.subscribers(who.user_id)).toBe(3);

    // Another channel is not affected.
    const elsewhere = await t.channel({ name: 'Few Subs' });
    const fine = watch(client({ 'X-Api-Key': elsewhere.api_key }));
    await settled(fine);
    expect(fine.errors).toEqual([]);
  });

  it('a subscription whose API key is revoked ends with UNAUTHORIZED at the next event, and delivers nothing more', async () => {
    const who = await t.channel({ name: 'Rotating' });
    const subscriber = client({ 'X-Api-Key': who.api_key });
    const w = watch(subscriber);
    // A second subscription keeps the connection open: no-shows do not happen in this test.
    const idle = watch(subscriber, { types: ['RESERVATION_NO_SHOW'] });
    await Promise.all([settled(w), settled(idle)]);
    const { api_key } = await rotateKey(t.service.deps.db.prisma, who.app_id);
    const flow = v1(t, { ...who, api_key });
    const offer = await flow.offer();
    const res = await flow.book({ book_token: offer.bookToken, booker_name: 'Sub Scriber', guests_adult: 2 });
    expect(res.status).toBe(201);
    await w.done;
    expect(w.events).toEqual([]);
    expect(w.errors).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHORIZED' }) }),
    ]);
    // The same open connection cannot start anything new with the revoked key either.
    const later = watch(subscriber);
    await later.done;
    expect(later.events).toEqual([]);
    expect((later.errors[0] as { extensions?: { code?: string } }).extensions?.code).toBe('UNAUTHORIZED');
  });
});

describe('bookingEvents over SSE', () => {
  let t: TestService;
  let alice: IssuedCredentials;

  beforeAll(async () => {
    t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '50' });
    alice = await t.channel({ name: 'Alice SSE' });
  });
  afterAll(async () => t?.close());

  it('streams the events as text/event-stream with the same credentials as REST', async () => {
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { ...apiKey(alice), 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events: EventPayload[] = [];
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const reading = (async () => {
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split('\n').find((line) => line.startsWith('data:'));
          if (frame.startsWith('event: next') && data) {
            events.push((JSON.parse(data.slice(5)) as { data: { bookingEvents: EventPayload } }).data.bookingEvents);
          }
        }
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 150));
    const { booking } = await bookOne(t, alice);
    await until(() => events.length >= 2, 'SSE events');
    expect(events.map((e) => [e.type, e.booking.bookingId])).toEqual([
      ['RESERVATION_CREATED', booking.id],
      ['RESERVATION_CONFIRMED', booking.id],
    ]);
    // The client hangs up: the server's subscription ends with the stream.
    await reader.cancel();
    await reading;
  });

  it('ends an SSE subscription without a credential at once with UNAUTHORIZED and no event', async () => {
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    // The whole stream: an error result, then complete (reading it to the end proves it ended).
    const frames = (await res.text()).split('\n\n').map((f) => f.trim()).filter((f) => f && f !== ':');
    expect(frames).toHaveLength(2);
    expect(frames[0]).toMatch(/^event: next\ndata: /);
    const result = JSON.parse(frames[0]!.split('\ndata: ')[1]!) as { data?: unknown; errors: { extensions: { code: string } }[] };
    expect(result.data ?? null).toBeNull();
    expect(result.errors.map((e) => e.extensions.code)).toEqual(['UNAUTHORIZED']);
    expect(frames[1]).toMatch(/^event: complete/);
  });
});

// Instances share events only through PostgreSQL and Redis; the embedded database belongs to one
// process, so this runs in CI's PostgreSQL + Redis pass.
describe.runIf(process.env.DATABASE_URL && process.env.REDIS_URL)('bookingEvents across two instances', () => {
  let a: TestService;
  let b: TestService;
  let alice: IssuedCredentials;
  let bob: IssuedCredentials;
  const clients: Client[] = [];

  beforeAll(async () => {
    // A runs no dispatcher, so its subscribers can only hear of events through Redis.
    a = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0' });
    // The same schema: a second instance of the same deployment.
    b = await startTestService({ EVENTS_POLL_INTERVAL_MS: '50', DATABASE_SCHEMA: a.config.databaseSchema });
    alice = await a.channel({ name: 'Alice Multi' });
    bob = await a.channel({ name: 'Bob Multi' });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await b?.service.close();
    await a?.close();
  });

  it('a subscriber on instance A sees a booking made on instance B, each event once; another channel sees nothing', async () => {
    const portA = await a.service.listen(0);
    const onA = wsClient(portA, { 'X-Api-Key': alice.api_key });
    const bobOnA = wsClient(portA, { 'X-Api-Key': bob.api_key });
    clients.push(onA, bobOnA);
    const mine = watch(onA);
    const theirs = watch(bobOnA);
    await Promise.all([settled(mine), settled(theirs)]);

    const { booking } = await bookOne(b, alice);
    await until(() => mine.events.length >= 2, 'events from the other instance');
    expect(a.service.deps.events.kind).toBe('redis');
    // Give a duplicate time to show up if there were one.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mine.events.map((e) => [e.type, e.booking.bookingId])).toEqual([
      ['RESERVATION_CREATED', booking.id],
      ['RESERVATION_CONFIRMED', booking.id],
    ]);
    expect(theirs.events).toEqual([]);
  });
});
