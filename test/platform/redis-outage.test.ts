import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/receiver.js';
import { startPrivateRedis, redisServerAvailable, type PrivateRedis } from '../helpers/privateRedis.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * A Redis that stops answering (SIGSTOP: connections stay open, nothing comes back), on a
 * redis-server of this file's own. Requests of the API must not wait for it: each Redis command
 * has REDIS_COMMAND_TIMEOUT_MS, after which the rate limiter counts on its own (the documented
 * fallback, docs/operations.md "When Redis or PostgreSQL fail"), and /readyz answers 503 naming
 * redis within a second. The request deadline here is the 5 s the failure was seen with: without
 * the bound, every request waited for Redis until its deadline (504 REQUEST_TIMEOUT).
 */
describe.runIf(redisServerAvailable)('Redis frozen under requests', () => {
  let redis: PrivateRedis;
  let t: TestService;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    t = await startTestService({ REDIS_URL: redis.url, REQUEST_TIMEOUT_MS: '5000' });
  });
  afterAll(async () => {
    redis?.thaw();
    await t?.close();
    await redis?.close();
  });

  /** /readyz, and how long it took. */
  async function ready(): Promise<{ status: number; body: { checks: Record<string, string> }; ms: number }> {
    const started = performance.now();
    const res = await t.request('/readyz');
    return { status: res.status, body: await res.json(), ms: performance.now() - started };
  }

  it('answers from its own count instead of 504, refuses past the limit per instance, and /readyz says redis: failing within 1 s', async () => {
    const limit = 5;
    const who = await t.channel({ rateLimit: { sandbox: limit, production: limit } });
    expect((await ready()).status).toBe(200);

    redis.freeze();
    try {
      // Sent at once, as partners do: none waits for Redis, all are answered, and the instance's
      // own count stands in for the shared one: the limit, then 429 with the usual headers.
      const answers = await Promise.all(
        Array.from({ length: limit + 2 }, () => t.request('/channel/v1/channels/me', { headers: apiKey(who) })),
      );
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).toEqual([...Array<number>(limit).fill(200), 429, 429]);
      const refused = answers.find((r) => r.status === 429)!;
      expect(refused.headers.get('x-ratelimit-limit')).toBe(String(limit));
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await refused.json()).error.code).toBe('RATE_LIMIT_EXCEEDED');

      // GraphQL is charged the same way (a fresh channel, so its count is its own).
      const other = await t.channel();
      const gql = await t.graphql('{ channel { name } }', undefined, apiKey(other));
      expect(gql.status).toBe(200);
      expect(gql.errors).toBeUndefined();

      // A subscription's place cannot be counted: refused at once with SERVICE_UNAVAILABLE (it
      // waited for Redis for ever), the stream ended.
      const subscribed = await t.request('/graphql', {
        method: 'POST',
        headers: { ...apiKey(other), 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: 'subscription { bookingEvents { id } }' }),
      });
      expect(await subscribed.text()).toContain('"code":"SERVICE_UNAVAILABLE"');
      // A credential change is made here and announced to the other instances when Redis can be
      // told: the revocation answers at once.
      const token = await t.request('/channel/v1/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: other.client_id, client_secret: other.client_secret }),
      });
      expect(token.status).toBe(200);
      const { access_token } = await token.json();
      const revoked = await t.request('/channel/v1/oauth/revoke', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: access_token, client_id: other.client_id, client_secret: other.client_secret }),
      });
      expect(revoked.status).toBe(200);
      expect((await t.request('/channel/v1/channels/me', { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(401);

      const probe = await ready();
      expect(probe.ms).toBeLessThan(1_000);
      expect(probe.status).toBe(503);
      expect(probe.body.checks).toMatchObject({ database: 'ok', redis: 'failing', upstream: 'ok' });
    } finally {
      redis.thaw();
    }
    // Redis answers again: ready, and the shared count is used again (the same channel, fresh in Redis).
    await eventually(async () => (await ready()).status === 200, 10_000, '/readyz ready after the thaw');
    const after = await eventually(async () => {
      const res = await t.request('/channel/v1/channels/me', { headers: apiKey(await t.channel({ rateLimit: { sandbox: 3, production: 3 } })) });
      return res.status === 200 ? res : null;
    });
    expect(after.headers.get('x-ratelimit-remaining')).toBe('2');
  }, 60_000);
});
