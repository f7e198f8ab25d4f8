import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService, type ChannelService } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createRequestContext } from '../../src/context.js';
import { authenticate } from '../../src/services/access/index.js';
import { createWebhook, type BookingEventMessage } from '../../src/services/webhooks/index.js';
import { day, v1 } from '../helpers/flow.js';
import { eventually, sleep, startReceiver, type Receiver } from '../helpers/receiver.js';
import { cleanupEnv, createTestChannel, testEnv, type TestService } from '../helpers/service.js';

/**
 * Two instances of the service on one PostgreSQL schema and one Redis, both running the outbox
 * dispatcher: every event becomes one delivery per endpoint, sent once (the fan-out lock, the
 * SKIP LOCKED leases), and reaches the live subscribers of both instances once (Redis bus).
 * And an API-only instance (no dispatcher) beside a dispatcher that polls only once a minute: the
 * commit's NOTIFY wakes the other instance, so the event goes out at once.
 */

// The embedded database is one process's own; this needs shared servers (CI's PostgreSQL pass).
describe.runIf(process.env.DATABASE_URL && process.env.REDIS_URL)('two instances sharing PostgreSQL and Redis', () => {
  let env: Record<string, string>;
  let instances: ChannelService[] = [];
  let receiver: Receiver;

  beforeAll(async () => {
    env = testEnv({ EVENTS_POLL_INTERVAL_MS: '20' });
    // The second starts with the same environment, so the same schema, after the first migrated it.
    for (let i = 0; i < 2; i++) instances.push(await createService(loadConfig(env)));
    receiver = await startReceiver(() => 200);
  });

  afterAll(async () => {
    await receiver?.close();
    await Promise.all(instances.map((s) => s.close()));
    if (env) await cleanupEnv(env);
  });

  /** The in-process HTTP surface of one instance, for the v1 flow helper. */
  function client(service: ChannelService): TestService {
    const ip = `127.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(1, 255)}`;
    return {
      request: (path: string, init: RequestInit & { ip?: string } = {}) => {
        const { ip: _ip, ...rest } = init;
        return service.fetch(new Request(`http://channel.test${path}`, rest), { incoming: { socket: { remoteAddress: ip } } });
      },
    } as unknown as TestService;
  }

  it('30 bookings spread over both: every event delivered exactly once per endpoint, attempts 1', async () => {
    const [a, b] = instances as [ChannelService, ChannelService];
    const prisma = a.deps.db.prisma;
    const who = await createTestChannel(prisma, { name: 'Two Instances' });
    const principal = await authenticate(prisma, { apiKey: who.api_key });
    const ctx = createRequestContext(b.deps, { requestId: 'test', logger: b.deps.logger, principal, authError: null, signal: undefined });
    const endpoints = [
      (await createWebhook(ctx, { url: receiver.url('/one') })).webhook,
      (await createWebhook(ctx, { url: receiver.url('/two') })).webhook,
    ];

    // Which instance sends each attempt (the sender is the instance's own).
    const sentBy = instances.map(() => 0);
    instances.forEach((service, i) => {
      const sender = service.deps.webhookSender;
      const send = sender.send.bind(sender);
      sender.send = (delivery) => {
        sentBy[i]!++;
        return send(delivery);
      };
    });

    // Live subscribers on both instances: each event reaches each of them once, through Redis.
    const live = instances.map(() => [] as BookingEventMessage[]);
    const subscriptions = instances.map((service, i) => {
      const source = service.deps.events.subscribe(who.user_id);
      void (async () => {
        for await (const event of source) live[i]!.push(event);
      })();
      return source;
    });
    await sleep(200); // the Redis SUBSCRIBE is asynchronous

    const apis = instances.map((s) => v1(client(s), who));
    const offers = [];
    for (let i = 0; i < 30; i++) offers.push(await apis[i % 2]!.offer({ checkin: day(60 + i), checkout: day(61 + i) }));
    const started = performance.now();
    const results = await Promise.all(
      offers.map((o, i) => apis[i % 2]!.book({ book_token: o.bookToken, booker_name: `Guest ${i}`, guests_adult: 2 })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(30).fill(201));

    const events = await prisma.outboxEvent.findMany({ where: { channelId: who.user_id } });
    expect(events).toHaveLength(60);
    const expected = events.length * endpoints.length;
    await receiver.waitFor(() => receiver.requests.length >= expected, 30_000, `${expected} deliveries`);
    const elapsed = Math.round(performance.now() - started);
    await eventually(
      async () => (await prisma.webhookDelivery.count({ where: { channelId: who.user_id, status: 'delivered' } })) === expected,
      10_000,
      'every delivery recorded delivered',
    );
    await sleep(500); // room for a duplicate to show up

    // At the receiver: each webhook-id once.
    const ids = receiver.requests.map((r) => r.webhookId);
    expect(ids).toHaveLength(expected);
    expect(new Set(ids).size).toBe(expected);
    // In the database: one delivery per event and endpoint, each sent once and delivered.
    const deliveries = await prisma.webhookDelivery.findMany({ where: { channelId: who.user_id }, include: { attemptLog: true } });
    expect(deliveries).toHaveLength(expected);
    expect(new Set(deliveries.map((d) => `${d.endpointId}/${d.eventId}`)).size).toBe(expected);
    expect(deliveries.filter((d) => !(d.status === 'delivered' && d.attempts === 1 && d.attemptLog.length === 1))).toEqual([]);
    expect(new Set(deliveries.map((d) => d.id))).toEqual(new Set(ids));
    for (const endpoint of endpoints) {
      const mine = deliveries.filter((d) => d.endpointId === endpoint.id);
      expect(new Set(mine.map((d) => d.eventId))).toEqual(new Set(events.map((e) => e.id)));
    }
    expect(sentBy.reduce((x, y) => x + y, 0)).toBe(expected);

    // Live subscribers of both instances: each event once.
    await eventually(() => live.every((list) => list.length >= events.length), 5_000, 'live events on both instances');
    for (const list of live) {
      expect(list.map((e) => e.id).sort()).toEqual(events.map((e) => e.id).sort());
    }
    for (const s of subscriptions) await s.return();

    console.info(
      `events-instances: 30 bookings → ${expected} deliveries received ${elapsed} ms after the first POST; attempts sent by instance A ${sentBy[0]}, B ${sentBy[1]}`,
    );
  }, 120_000);

  it('an API-only instance and a dispatcher polling once a minute: the commit wakes the dispatcher at once', async () => {
    const pairEnv = testEnv({});
    const api = await createService(loadConfig({ ...pairEnv, EVENTS_POLL_INTERVAL_MS: '0' }));
    const worker = await createService(loadConfig({ ...pairEnv, EVENTS_POLL_INTERVAL_MS: '60000' }));
    try {
      const prisma = api.deps.db.prisma;
      const who = await createTestChannel(prisma, { name: 'Woken' });
      const principal = await authenticate(prisma, { apiKey: who.api_key });
      const ctx = createRequestContext(api.deps, { requestId: 'test', logger: api.deps.logger, principal, authError: null, signal: undefined });
      await createWebhook(ctx, { url: receiver.url('/woken') });
      // Let the worker's first round (made when it started) pass, so only a notification can wake it.
      await sleep(300);
      const flow = v1(client(api), who);
      const offer = await flow.offer({ checkin: day(95), checkout: day(96) });
      const started = performance.now();
      expect((await flow.book({ book_token: offer.bookToken, booker_name: 'Woken Guest', guests_adult: 2 })).status).toBe(201);
      await receiver.waitFor(() => receiver.on('/woken').length >= 2, 10_000, 'both events, long before the next poll');
      const elapsed = Math.round(performance.now() - started);
      expect(receiver.on('/woken').map((r) => r.json.type).sort()).toEqual(['reservation.confirmed', 'reservation.created']);
      console.info(`events-instances: delivered by the other instance ${elapsed} ms after the booking request (poll interval 60 s)`);
    } finally {
      await Promise.all([api.close(), worker.close()]);
      await cleanupEnv(pairEnv);
    }
  }, 60_000);
});
