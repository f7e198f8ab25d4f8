import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { v1 } from '../helpers/flow.js';
import { dataOf, gql } from '../helpers/graphql.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * Replays add attempts to a delivery without end, so a read of a delivery shows its newest 50
 * attempts, first first, and `attempts` counts them all (REST and GraphQL alike).
 */

let t: TestService;
let who: IssuedCredentials;
let receiver: Receiver;
let webhookId: string;
let deliveryId: string;

const ATTEMPTS = 70;

beforeAll(async () => {
  t = await startTestService();
  who = await t.channel({ name: 'Attempt Log' });
  receiver = await startReceiver(() => 204);
  const url = receiver.url('/hook');
  const { call } = v1(t, who);
  webhookId = (await (await call('POST', '/webhooks', { url })).json()).data.id;
  deliveryId = (await (await call('POST', `/webhooks/${webhookId}/ping`)).json()).data.id;
  // The attempts that 69 replays to a receiver that answers leave behind.
  const { prisma } = t.service.deps.db;
  const first = await prisma.webhookAttempt.findFirstOrThrow({ where: { deliveryId } });
  await prisma.webhookAttempt.createMany({
    data: Array.from({ length: ATTEMPTS - 1 }, (_, i) => ({
      id: randomUUID(),
      deliveryId,
      attempt: i + 2,
      startedAt: new Date(first.startedAt.getTime() + (i + 1) * 1000),
      durationMs: 3,
      statusCode: 204,
    })),
  });
  await prisma.webhookDelivery.update({ where: { id: deliveryId }, data: { attempts: ATTEMPTS } });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

const newest50 = Array.from({ length: 50 }, (_, i) => ATTEMPTS - 49 + i);

describe('a delivery with 70 attempts', () => {
  it('REST: the delivery and the log show the newest 50 attempts, first first, and attempts: 70', async () => {
    for (const path of [`/webhooks/${webhookId}/deliveries/${deliveryId}`, `/webhooks/${webhookId}/deliveries`]) {
      const res = await t.request(`/channel/v1${path}`, { headers: apiKey(who) });
      expect(res.status).toBe(200);
      const { data } = await res.json();
      const delivery = Array.isArray(data) ? data.find((d: { id: string }) => d.id === deliveryId) : data;
      expect(delivery.attempts).toBe(ATTEMPTS);
      expect(delivery.attempt_log.map((a: { attempt: number }) => a.attempt)).toEqual(newest50);
    }
  });

  it('GraphQL: attemptLog shows the same 50', async () => {
    const data = dataOf(
      await gql(t, who, 'query($w: ID!, $id: ID!) { webhookDelivery(webhookId: $w, id: $id) { attempts attemptLog { attempt } } }', { w: webhookId, id: deliveryId }),
    );
    expect(data.webhookDelivery.attempts).toBe(ATTEMPTS);
    expect(data.webhookDelivery.attemptLog.map((a: { attempt: number }) => a.attempt)).toEqual(newest50);
  });
});
