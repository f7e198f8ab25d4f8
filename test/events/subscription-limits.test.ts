import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createSubscriptionSlots, SLOT_LEASE_MS, slotKey } from '../../src/events/subscriptionSlots.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { v1 } from '../helpers/flow.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * Subscription limits stay exact under bursts (issue 15, finding 5): SUBSCRIPTIONS_MAX_PER_CONNECTION
 * when a client sends many subscribe messages back to back on one graphql-ws connection, and
 * SUBSCRIPTIONS_MAX_PER_CHANNEL when a burst spreads over several connections, over SSE, and (with
 * Redis) over two instances. A place is given back when its subscription ends, so new ones are
 * admitted again.
 */

const SUBSCRIPTION = 'subscription { bookingEvents { id type booking { id } } }';

interface Message {
  type: string;
  id?: string;
  payload?: unknown;
}

interface GraphQLErrorJson {
  message: string;
  extensions?: { code?: string; details?: { limit?: number } };
}

/** A graphql-ws connection spoken by hand, so a burst is exactly what is sent: messages back to back. */
class RawConnection {
  readonly messages: Message[] = [];
  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => this.messages.push(JSON.parse(String(data)) as Message));
  }

  static async open(port: number, credentials: IssuedCredentials): Promise<RawConnection> {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws');
    const connection = new RawConnection(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    connection.send({ type: 'connection_init', payload: { 'X-Api-Key': credentials.api_key } });
    await until(() => connection.messages.some((m) => m.type === 'connection_ack'), 'connection_ack');
    return connection;
  }

  send(message: Message): void {
    this.socket.send(JSON.stringify(message));
  }

  /** Subscribe messages with these ids, one after the other without waiting. */
  subscribe(ids: string[]): void {
    for (const id of ids) this.send({ id, type: 'subscribe', payload: { query: SUBSCRIPTION } });
  }

  complete(ids: string[]): void {
    for (const id of ids) this.send({ id, type: 'complete' });
  }

  /** The ids refused with SUBSCRIPTION_LIMIT_EXCEEDED (as an error message, or a result with the error and complete). */
  refused(limit: number): string[] {
    const ids = new Set<string>();
    for (const m of this.messages) {
      const errors = m.type === 'error' ? (m.payload as GraphQLErrorJson[]) : m.type === 'next' ? ((m.payload as { errors?: GraphQLErrorJson[] }).errors ?? []) : [];
      for (const e of errors) {
        // Every refusal is this one: the limit, with details.limit.
        expect(e.extensions).toEqual({ code: 'SUBSCRIPTION_LIMIT_EXCEEDED', details: { limit } });
        ids.add(m.id!);
      }
    }
    return [...ids];
  }

  /** Ids that received a booking event. */
  receiving(): Set<string> {
    return new Set(
      this.messages
        .filter((m) => m.type === 'next' && (m.payload as { data?: { bookingEvents?: unknown } }).data?.bookingEvents)
        .map((m) => m.id!),
    );
  }

  close(): void {
    this.socket.close();
  }
}

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

async function book(t: TestService, who: IssuedCredentials, from: number): Promise<string> {
  const flow = v1(t, who);
  const offer = await flow.offer({ from });
  const res = await flow.book({ book_token: offer.bookToken, booker_name: 'Burst Guest', guests_adult: 2 });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: { id: string } }).data.id;
}

/** An SSE subscription read as it arrives: its frames, and whether the stream ended. */
interface SseStream {
  frames: string[];
  ended: boolean;
  cancel(): Promise<void>;
}

async function sse(t: TestService, who: IssuedCredentials): Promise<SseStream> {
  const res = await t.request('/graphql', {
    method: 'POST',
    headers: { ...apiKey(who), 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: SUBSCRIPTION }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const stream: SseStream = { frames: [], ended: false, cancel: () => reader.cancel() };
  void (async () => {
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end).trim();
        buffer = buffer.slice(end + 2);
        if (frame && frame !== ':') stream.frames.push(frame);
      }
    }
    stream.ended = true;
  })();
  return stream;
}

const limitRefusal = (s: SseStream, limit: number) =>
  s.ended &&
  s.frames.some((f) => {
    const data = f.split('\n').find((line) => line.startsWith('data:'));
    const errors = data ? ((JSON.parse(data.slice(5)) as { errors?: GraphQLErrorJson[] }).errors ?? []) : [];
    return errors.some((e) => e.extensions?.code === 'SUBSCRIPTION_LIMIT_EXCEEDED' && e.extensions.details?.limit === limit);
  });

describe('one graphql-ws connection, 100 subscribe messages back to back (limit 20 per connection)', () => {
  let t: TestService;
  let port: number;
  let who: IssuedCredentials;
  const connections: RawConnection[] = [];

  beforeAll(async () => {
    t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '50' });
    port = await t.service.listen(0);
    who = await t.channel({ name: 'Burst One Connection' });
  });
  afterAll(async () => {
    for (const c of connections) c.close();
    await t?.close();
  });

  it('runs exactly 20 and refuses 80 with SUBSCRIPTION_LIMIT_EXCEEDED; completing 5 admits 5 new ones, and no more', async () => {
    expect(t.config.subscriptions.maxPerConnection).toBe(20);
    const connection = await RawConnection.open(port, who);
    connections.push(connection);
    const burst = ids('s', 100);
    connection.subscribe(burst);

    await until(() => connection.refused(20).length >= 80, '80 refusals');
    await sleep(300); // room for a wrong 81st
    const refused = new Set(connection.refused(20));
    expect(refused.size).toBe(80);
    const running = burst.filter((id) => !refused.has(id));
    expect(running).toHaveLength(20);

    // The 20 are live: each receives the booking's events.
    await book(t, who, 1);
    await until(() => running.every((id) => connection.receiving().has(id)), 'events on the 20');
    expect([...connection.receiving()].sort()).toEqual([...running].sort());

    // Completing 5 frees 5 places on the connection: of 6 new subscriptions, 5 run and 1 is refused.
    const done = running.slice(0, 5);
    connection.complete(done);
    await sleep(300);
    const again = ids('again', 6);
    connection.subscribe(again);
    await until(() => connection.refused(20).length >= 81, 'the 81st refusal');
    await sleep(300);
    const refusedAgain = connection.refused(20).filter((id) => id.startsWith('again'));
    expect(refusedAgain).toHaveLength(1);

    const before = connection.messages.length;
    await book(t, who, 20);
    const live = [...running.slice(5), ...again.filter((id) => !refusedAgain.includes(id))];
    expect(live).toHaveLength(20);
    await until(() => live.every((id) => connection.messages.slice(before).some((m) => m.id === id && m.type === 'next')), 'events on the 20 live');
    const afterwards = new Set(connection.messages.slice(before).filter((m) => m.type === 'next').map((m) => m.id));
    for (const id of done) expect(afterwards.has(id), `${id} was completed`).toBe(false);
  });
});

describe('SUBSCRIPTIONS_MAX_PER_CHANNEL=5 on one instance', () => {
  let t: TestService;
  let port: number;
  const connections: RawConnection[] = [];

  beforeAll(async () => {
    t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '50', SUBSCRIPTIONS_MAX_PER_CHANNEL: '5' });
    port = await t.service.listen(0);
  });
  afterAll(async () => {
    for (const c of connections) c.close();
    await t?.close();
  });

  it('a burst of 50 over 5 graphql-ws connections admits exactly 5; completing 2 admits 2 of the next 10', async () => {
    const who = await t.channel({ name: 'Burst Channel' });
    const opened = await Promise.all(Array.from({ length: 5 }, () => RawConnection.open(port, who)));
    connections.push(...opened);
    opened.forEach((c, i) => c.subscribe(ids(`c${i}-`, 10)));

    const refusedCount = () => opened.reduce((n, c) => n + c.refused(5).length, 0);
    await until(() => refusedCount() >= 45, '45 refusals');
    await sleep(300);
    expect(refusedCount()).toBe(45);
    expect(t.service.deps.events.subscribers(who.user_id)).toBe(5);

    const running = opened.flatMap((c, i) => ids(`c${i}-`, 10).filter((id) => !c.refused(5).includes(id)).map((id) => [c, id] as const));
    expect(running).toHaveLength(5);
    await book(t, who, 1);
    await until(() => running.every(([c, id]) => c.receiving().has(id)), 'events on the 5');

    // Another channel is not affected.
    const other = await t.channel({ name: 'Quiet Channel' });
    const elsewhere = await RawConnection.open(port, other);
    connections.push(elsewhere);
    elsewhere.subscribe(ids('o', 5));
    await sleep(300);
    expect(elsewhere.refused(5)).toEqual([]);

    // Two complete: their places come back, and of 10 more exactly 2 are admitted.
    for (const [c, id] of running.slice(0, 2)) c.complete([id]);
    await until(() => t.service.deps.events.subscribers(who.user_id) === 3, 'two places given back');
    const late = await RawConnection.open(port, who);
    connections.push(late);
    late.subscribe(ids('late', 10));
    await until(() => late.refused(5).length >= 8, '8 refusals');
    await sleep(300);
    expect(late.refused(5)).toHaveLength(8);
    expect(t.service.deps.events.subscribers(who.user_id)).toBe(5);
  });

  it('over SSE: of 10 concurrent subscriptions 5 stream and 5 end with SUBSCRIPTION_LIMIT_EXCEEDED; a client hanging up gives its place back', async () => {
    const who = await t.channel({ name: 'Burst SSE' });
    const streams = await Promise.all(Array.from({ length: 10 }, () => sse(t, who)));
    await until(() => streams.filter((s) => limitRefusal(s, 5)).length >= 5, '5 refused streams');
    await sleep(300);
    const open = streams.filter((s) => !s.ended);
    expect(open).toHaveLength(5);
    expect(streams.filter((s) => limitRefusal(s, 5))).toHaveLength(5);
    expect(t.service.deps.events.subscribers(who.user_id)).toBe(5);

    // The admitted ones are live.
    await book(t, who, 40);
    await until(() => open.every((s) => s.frames.some((f) => f.startsWith('event: next'))), 'events on the 5 streams');

    // Two clients hang up: their places come back.
    await Promise.all(open.slice(0, 2).map((s) => s.cancel()));
    await until(() => t.service.deps.events.subscribers(who.user_id) === 3, 'two places given back');
    const more = await Promise.all(Array.from({ length: 3 }, () => sse(t, who)));
    await until(() => more.filter((s) => limitRefusal(s, 5)).length >= 1, 'one refused');
    await sleep(300);
    expect(more.filter((s) => !s.ended)).toHaveLength(2);
    for (const s of [...open, ...more]) if (!s.ended) await s.cancel();
    await until(() => t.service.deps.events.subscribers(who.user_id) === 0, 'every place given back');
  });
});

// Instances share a channel only through PostgreSQL (the embedded database is one process's own)
// and the count only through Redis: CI's PostgreSQL + Redis pass.
describe.runIf(process.env.DATABASE_URL && process.env.REDIS_URL)('SUBSCRIPTIONS_MAX_PER_CHANNEL=5 across two instances sharing Redis', () => {
  let a: TestService;
  let b: TestService;
  const ports: number[] = [];
  const connections: RawConnection[] = [];

  beforeAll(async () => {
    const limits = { EVENTS_POLL_INTERVAL_MS: '50', SUBSCRIPTIONS_MAX_PER_CHANNEL: '5' };
    a = await startTestService(limits);
    // The same schema: a second instance of the same deployment.
    b = await startTestService({ ...limits, DATABASE_SCHEMA: a.config.databaseSchema });
    ports.push(await a.service.listen(0), await b.service.listen(0));
  });
  afterAll(async () => {
    for (const c of connections) c.close();
    await b?.service.close();
    await a?.close();
  });

  it('a burst of 50 spread over both admits exactly 5 in all; a place given back on one is taken on the other', async () => {
    const who = await a.channel({ name: 'Burst Two Instances' });
    // 5 connections on each instance, 5 subscribe messages on each, all sent at once.
    const opened = await Promise.all(Array.from({ length: 10 }, (_, i) => RawConnection.open(ports[i % 2]!, who)));
    connections.push(...opened);
    opened.forEach((c, i) => c.subscribe(ids(`c${i}-`, 5)));

    const refusedCount = () => opened.reduce((n, c) => n + c.refused(5).length, 0);
    await until(() => refusedCount() >= 45, '45 refusals');
    await sleep(500);
    expect(refusedCount()).toBe(45);
    const [onA, onB] = [a, b].map((s) => s.service.deps.events.subscribers(who.user_id));
    expect(onA! + onB!).toBe(5);

    // The 5 are live (an event booked on A reaches subscribers on both through Redis).
    const running = opened.flatMap((c, i) => ids(`c${i}-`, 5).filter((id) => !c.refused(5).includes(id)).map((id) => [c, id, i % 2] as const));
    expect(running).toHaveLength(5);
    await book(a, who, 1);
    await until(() => running.every(([c, id]) => c.receiving().has(id)), 'events on the 5');

    // One completes on its instance; the other instance can then admit one, and only one.
    const [c, id, instance] = running[0]!;
    c.complete([id]);
    const service = instance === 0 ? a : b;
    await until(() => service.service.deps.events.subscribers(who.user_id) === (instance === 0 ? onA! : onB!) - 1, 'the place given back');
    const late = await RawConnection.open(ports[1 - instance]!, who);
    connections.push(late);
    late.subscribe(ids('late', 3));
    await until(() => late.refused(5).length >= 2, '2 refusals');
    await sleep(300);
    expect(late.refused(5)).toHaveLength(2);
  });

  it("a crashed instance's places run out with their lease: admitted again once they expire", async () => {
    const who = await a.channel({ name: 'Crashed Holder' });
    const redis = a.service.deps.redis!;
    // An instance that died holding all 5 places: leases renewed last just now, expiring in 1.5 s.
    const [seconds, micros] = await redis.time();
    const expiry = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + 1_500;
    await redis.zadd(slotKey(who.user_id), ...ids('crashed', 5).flatMap((id) => [expiry, id]));
    expect(SLOT_LEASE_MS).toBeGreaterThan(1_500);

    const refused = await sse(a, who);
    await until(() => limitRefusal(refused, 5), 'a refusal while the dead places hold');
    await sleep(1_700);
    const admitted = await sse(b, who);
    await sleep(300);
    expect(admitted.ended).toBe(false);
    expect(b.service.deps.events.subscribers(who.user_id)).toBe(1);
    await admitted.cancel();
    // Given back in Redis too: the set holds nothing of it.
    await until(() => b.service.deps.events.subscribers(who.user_id) === 0, 'released');
    const deadline = Date.now() + 5_000;
    while ((await redis.zcard(slotKey(who.user_id))) > 0 && Date.now() < deadline) await sleep(20);
    expect(await redis.zcard(slotKey(who.user_id))).toBe(0);
  });
});

/** Redis server time in ms, the clock of the leases. */
async function redisNow(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

describe.runIf(process.env.REDIS_URL)('leases of subscription places (Redis)', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  afterAll(async () => {
    await redis?.quit();
  });

  it('a place is leased for SLOT_LEASE_MS, renewed while held, taken again after it ran out if there is room, and lost if not', async () => {
    const slots = createSubscriptionSlots(redis, pino({ level: 'silent' }));
    const channel = randomUUID();
    const key = slotKey(channel);
    try {
      const slot = (await slots.admit(channel, 2))!;
      expect(slot).not.toBeNull();
      const [id] = await redis.zrange(key, 0, -1);
      const leased = Number(await redis.zscore(key, id!));
      expect(leased - (await redisNow(redis))).toBeGreaterThan(SLOT_LEASE_MS - 1_000);
      expect(await redis.pttl(key)).toBeGreaterThan(SLOT_LEASE_MS);

      // Renewed: a later expiry.
      await new Promise((resolve) => setTimeout(resolve, 20));
      await slots.renew();
      expect(Number(await redis.zscore(key, id!))).toBeGreaterThan(leased);

      // Its lease ran out (this instance could not renew), and the channel has room: taken again.
      await redis.zadd(key, (await redisNow(redis)) - 1, id!);
      await slots.renew();
      expect(Number(await redis.zscore(key, id!))).toBeGreaterThan(await redisNow(redis));

      // Ran out again, and meanwhile others took every place: lost, and the holder is told.
      let lost = false;
      void slot.lost.then(() => (lost = true));
      const future = (await redisNow(redis)) + SLOT_LEASE_MS;
      await redis.zadd(key, (await redisNow(redis)) - 1, id!, future, 'other-1', future, 'other-2');
      await slots.renew();
      await new Promise((resolve) => setImmediate(resolve));
      expect(lost).toBe(true);
      expect(await redis.zscore(key, id!)).toBeNull();
      expect(await redis.zcard(key)).toBe(2);
      slot.release();
      expect(slots.held(channel)).toBe(0);
      expect(await redis.zcard(key)).toBe(2); // the others' places stay
    } finally {
      await slots.close();
      await redis.del(key);
    }
  });

  it('close gives back every place the instance holds', async () => {
    const slots = createSubscriptionSlots(redis, pino({ level: 'silent' }));
    const channel = randomUUID();
    for (let i = 0; i < 3; i++) expect(await slots.admit(channel, 3)).not.toBeNull();
    expect(await slots.admit(channel, 3)).toBeNull();
    expect(await redis.zcard(slotKey(channel))).toBe(3);
    await slots.close();
    expect(await redis.zcard(slotKey(channel))).toBe(0);
  });
});

describe.runIf(process.env.REDIS_URL)('a subscription that lost its place (Redis)', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '50', SUBSCRIPTIONS_MAX_PER_CHANNEL: '2' });
  });
  afterAll(async () => t?.close());

  it('ends with SUBSCRIPTION_LIMIT_EXCEEDED at the next renewal, and its place is not counted any more', async () => {
    const who = await t.channel({ name: 'Lost Place' });
    const stream = await sse(t, who);
    await until(() => t.service.deps.events.subscribers(who.user_id) === 1, 'admitted');
    const redis = t.service.deps.redis!;
    const key = slotKey(who.user_id);
    const [id] = await redis.zrange(key, 0, -1);
    // Its lease ran out while this instance could not reach Redis, and two others took the places.
    const now = await redisNow(redis);
    await redis.zadd(key, now - 1, id!, now + SLOT_LEASE_MS, 'other-1', now + SLOT_LEASE_MS, 'other-2');
    // The next renewal round (every SLOT_LEASE_MS / 3) finds it gone.
    await until(() => limitRefusal(stream, 2), 'the subscription ended with the limit error', SLOT_LEASE_MS);
    await until(() => t.service.deps.events.subscribers(who.user_id) === 0, 'its place no longer counted');
    expect(await redis.zrange(key, 0, -1)).toEqual(['other-1', 'other-2']);
  }, SLOT_LEASE_MS + 10_000);
});
