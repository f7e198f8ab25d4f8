import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestContext, type RequestContext } from '../../src/context.js';
import { authenticate } from '../../src/services/access/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import {
  claimDue,
  createWebhook,
  fanOut,
  LAST_SUCCESS_EVERY_MS,
  PER_ENDPOINT_IN_FLIGHT,
} from '../../src/services/webhooks/index.js';
import { countCalls } from '../helpers/counters.js';
import { day, v1 } from '../helpers/flow.js';
import { eventually, sleep, startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Webhook throughput (issue 18, item 6): successful attempts are recorded in batches, one
 * statement for many outcomes, and a dispatcher round records the waiting outcomes and claims the
 * slots they free in that same statement; an endpoint's last_success_at is written at most once a
 * second, and never more than a second late. Statements are counted at the database driver
 * (test/helpers/counters.ts). Embedded PGlite by default; PostgreSQL + Redis with DATABASE_URL /
 * REDIS_URL.
 *
 * `manual` has no background dispatcher (the tests drive it); `live` runs it (woken by
 * LISTEN/NOTIFY, polling once a minute, so what it does between two notifications is its own).
 */

let manual: TestService;
let live: TestService;
let receiver: Receiver;

beforeAll(async () => {
  // One after the other: two services starting at once on a busy machine can time out their
  // first transactions.
  manual = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0' });
  live = await startTestService({ EVENTS_POLL_INTERVAL_MS: '60000' });
  receiver = await startReceiver(() => 200);
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await Promise.all([manual?.close(), live?.close()]);
});

async function ctxOf(t: TestService, who: IssuedCredentials): Promise<RequestContext> {
  const principal = await authenticate(t.service.deps.db.prisma, { apiKey: who.api_key });
  if (!principal) throw new Error('test credential refused');
  return createRequestContext(t.service.deps, { requestId: 'test', logger: t.service.deps.logger, principal, authError: null, signal: undefined });
}

let stays = 0;

/**
 * A channel with `hooks` webhooks on the receiver and a real booking (two outbox events), and
 * `copies(n)`, which writes n copies of those events with new ids in one statement (as the bench's
 * backlog is made).
 */
async function backlog(t: TestService, hooks: number, events: number) {
  const who = await t.channel();
  const ctx = await ctxOf(t, who);
  const webhooks = [];
  for (let i = 0; i < hooks; i++) {
    webhooks.push(await createWebhook(ctx, { url: receiver.url(`/batch-${who.user_id}-${i}`) }));
  }
  const api = v1(t, who);
  const n = stays++;
  const offer = await api.offer({ checkin: day(40 + n * 3), checkout: day(41 + n * 3) });
  const res = await api.book({ book_token: offer.bookToken, booker_name: 'A B', guests_adult: 2 });
  expect(res.status).toBe(201);
  const copies = (count: number) => t.service.deps.db.prisma.$executeRaw`
    INSERT INTO outbox_events (id, channel_id, booking_id, type, payload, occurred_at)
    SELECT gen_random_uuid(), e.channel_id, e.booking_id, e.type, e.payload, clock_timestamp()
    FROM generate_series(1, ${count}::int) AS g
    JOIN LATERAL (SELECT * FROM outbox_events WHERE channel_id = ${who.user_id}::uuid
      ORDER BY occurred_at, id OFFSET (g % 2) LIMIT 1) e ON true`;
  if (events > 2) await copies(events - 2);
  return { who, webhooks, copies };
}

const ok = () => ({ startedAt: new Date(), durationMs: 1, statusCode: 200, responseBody: 'ok' });

describe('batched recording', () => {
  it('20 successes given together are recorded by one statement: attempts logged, deliveries delivered, last_success_at written', async () => {
    const { deps } = manual.service;
    const { webhooks } = await backlog(manual, 2, 10);
    await fanOut(deps, 500);
    // 10 per endpoint: the cap of attempts in flight.
    const claimed = await claimDue(deps, 50);
    expect(claimed).toHaveLength(2 * PER_ENDPOINT_IN_FLIGHT);

    const counter = countCalls(manual, []);
    await Promise.all(claimed.map((c) => deps.webhookOutcomes.success(c, ok())));
    const counts = counter.stop();
    expect(counts.database).toBe(1);

    const prisma = deps.db.prisma;
    const deliveries = await prisma.webhookDelivery.findMany({
      where: { id: { in: claimed.map((c) => c.id) } },
      include: { attemptLog: true },
    });
    expect(deliveries.map((d) => [d.status, d.leaseId, d.attemptLog.length, d.attemptLog[0]?.statusCode])).toEqual(
      Array(20).fill(['delivered', null, 1, 200]),
    );
    for (const { webhook } of webhooks) {
      const endpoint = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: webhook.id } });
      expect(endpoint.lastSuccessAt).not.toBeNull();
    }
  });

  it('one statement records a batch and claims the slots it frees (the recorded leases no longer count)', async () => {
    const { deps } = manual.service;
    await backlog(manual, 1, 30);
    await fanOut(deps, 500);
    const first = await claimDue(deps, 50);
    expect(first).toHaveLength(PER_ENDPOINT_IN_FLIGHT);
    // The endpoint is at its cap: a claim alone finds nothing.
    expect(await claimDue(deps, 50)).toEqual([]);

    // As a running dispatcher does: the outcomes wait for its round, which writes them with its claim.
    deps.webhookOutcomes.attach({ outcomesWaiting() {} });
    try {
      const recorded = Promise.all(first.map((c) => deps.webhookOutcomes.success(c, ok())));
      const counter = countCalls(manual, []);
      const batch = deps.webhookOutcomes.prepare(deps.clock());
      expect(batch?.size).toBe(PER_ENDPOINT_IN_FLIGHT);
      const next = await claimDue(deps, 50, batch!);
      batch!.done();
      await recorded;
      expect(counter.stop().database).toBe(1);
      // The ten freed slots are taken again by the same statement.
      expect(next).toHaveLength(PER_ENDPOINT_IN_FLIGHT);
      expect(new Set([...first, ...next].map((c) => c.id)).size).toBe(2 * PER_ENDPOINT_IN_FLIGHT);
      const statuses = await deps.db.prisma.webhookDelivery.groupBy({
        by: ['status'],
        where: { id: { in: first.map((c) => c.id) } },
        _count: true,
      });
      expect(statuses.map((s) => [s.status, s._count])).toEqual([['delivered', PER_ENDPOINT_IN_FLIGHT]]);
      // Finish the second lot so nothing stays leased.
      const rest = Promise.all(next.map((c) => deps.webhookOutcomes.success(c, ok())));
      deps.webhookOutcomes.attach(undefined);
      await rest;
    } finally {
      deps.webhookOutcomes.attach(undefined);
    }
    await manual.service.dispatcher.drain();
  });

  it("a success of a webhook deleted meanwhile fails alone; the batch's other outcomes are recorded", async () => {
    const { deps } = manual.service;
    const { webhooks } = await backlog(manual, 2, 4);
    await fanOut(deps, 500);
    const claimed = await claimDue(deps, 50);
    expect(claimed).toHaveLength(8);
    const [gone, kept] = webhooks.map((w) => w.webhook.id);
    await deps.db.prisma.webhookEndpoint.delete({ where: { id: gone! } });
    const results = await Promise.allSettled(claimed.map((c) => deps.webhookOutcomes.success(c, ok())));
    const byEndpoint = (id: string) => results.filter((_, i) => claimed[i]!.endpointId === id).map((r) => r.status);
    // The deleted webhook's deliveries went with it: logging their attempts breaks the foreign key.
    expect(byEndpoint(gone!)).toEqual(Array(4).fill('rejected'));
    expect(byEndpoint(kept!)).toEqual(Array(4).fill('fulfilled'));
    expect(await deps.db.prisma.webhookDelivery.count({ where: { endpointId: kept!, status: 'delivered' } })).toBe(4);
  });
});

describe('last_success_at', () => {
  it('written with the first success, then at most once a second, and never more than a second late', async () => {
    const { deps } = manual.service;
    const prisma = deps.db.prisma;
    const { webhooks } = await backlog(manual, 1, 4);
    const endpointId = webhooks[0]!.webhook.id;
    await fanOut(deps, 500);
    const [a, b] = await claimDue(deps, 2);
    const lastSuccess = async () => (await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } })).lastSuccessAt;

    await deps.webhookOutcomes.success(a!, ok());
    const first = await lastSuccess();
    expect(first).not.toBeNull();
    const firstDelivered = (await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: a!.id } })).deliveredAt;
    expect(first).toEqual(firstDelivered);

    // A second success within the second: the delivery is delivered at once, the endpoint's row waits.
    await sleep(50);
    await deps.webhookOutcomes.success(b!, ok());
    const secondDelivered = (await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: b!.id } })).deliveredAt!;
    expect(secondDelivered.getTime()).toBeGreaterThan(first!.getTime());
    expect(await lastSuccess()).toEqual(first);

    // ... and shows within the second after the first write.
    await eventually(async () => (await lastSuccess())?.getTime() === secondDelivered.getTime(), LAST_SUCCESS_EVERY_MS + 2_000, 'the later success written');
    await manual.service.dispatcher.drain();
  });
});

describe('a running dispatcher drains a backlog', () => {
  it('60 events to one webhook: each delivered once with a valid signature, in far fewer statements than deliveries', async () => {
    const { deps } = live.service;
    const prisma = deps.db.prisma;
    const { webhooks, copies } = await backlog(live, 1, 2);
    const { webhook, secret } = webhooks[0]!;
    const path = new URL(webhook.url).pathname;
    // The booking's two events first, so what is counted is the backlog's.
    await receiver.waitFor(() => receiver.on(path).length >= 2, 30_000, "the booking's events");
    await eventually(
      async () => (await prisma.webhookDelivery.count({ where: { endpointId: webhook.id, status: 'delivered' } })) === 2,
      10_000,
      "the booking's deliveries recorded",
    );
    // The receiver answers in bursts, as a busy one does: it holds each request until the
    // dispatcher has as many in flight as it may (PER_ENDPOINT_IN_FLIGHT, or what is left), then
    // answers them all at once. Each burst's outcomes are then recorded together.
    receiver.respond = (r) => (r.path === path ? 'hang' : 200);
    let answered = 2;
    const counter = countCalls(live, []);
    // One commit: its notification wakes the dispatcher (its poll, once a minute, does not come).
    await copies(60);
    while (answered < 62) {
      const burst = Math.min(PER_ENDPOINT_IN_FLIGHT, 62 - answered);
      await receiver.waitFor(() => receiver.on(path).length >= answered + burst, 30_000, `a burst of ${burst}`);
      answered += burst;
      receiver.release(200);
    }
    await eventually(
      async () => (await prisma.webhookDelivery.count({ where: { endpointId: webhook.id, status: 'delivered' } })) === 62,
      10_000,
      'every delivery recorded delivered',
    );
    const statements = counter.stop().database;
    receiver.respond = () => 200;
    await sleep(300); // room for a duplicate to show up

    const got = receiver.on(path);
    expect(got).toHaveLength(62);
    expect(new Set(got.map((r) => r.webhookId)).size).toBe(62);
    const verifier = new Webhook(secret);
    for (const r of got) expect(() => verifier.verify(r.body, r.headers)).not.toThrow();
    const deliveries = await prisma.webhookDelivery.findMany({ where: { endpointId: webhook.id }, include: { attemptLog: true } });
    expect(deliveries.filter((d) => !(d.status === 'delivered' && d.attempts === 1 && d.attemptLog.length === 1))).toEqual([]);
    expect((await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: webhook.id } })).lastSuccessAt).not.toBeNull();
    // One statement per success was the old way, plus a claim per burst and the fan-out (over 70
    // here). Now: the insert, the fan-out's transaction (7), a statement or two per burst of 10
    // (its outcomes and the claim of the next burst), a last_success_at write, and the counts above.
    console.info(`webhook-batching: a backlog of 60 deliveries to one webhook drained in ${statements} statements (${deps.db.kind})`);
    expect(statements).toBeLessThan(30);
  }, 90_000);
});
