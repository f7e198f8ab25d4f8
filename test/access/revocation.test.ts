import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { digest } from '../../src/services/access/index.js';
import { v1 } from '../helpers/flow.js';
import { eventually, sleep } from '../helpers/receiver.js';
import { apiKey, startTestService, uniqueIp, type TestService } from '../helpers/service.js';

/**
 * Credentials that can be revoked (issue 15, finding 2): `secret:rotate` replaces a leaked client
 * secret and revokes every token minted with the old one; `app:suspend` revokes the app's tokens
 * and `app:resume` does not revive them; `key:rotate` keeps revoking keys. Each revocation is
 * honoured at once by the instance that made it (its credential cache included), by live
 * subscriptions at their next event, and by other instances within AUTH_CACHE_TTL_MS, or at once
 * through Redis.
 */

const SUBSCRIPTION = /* GraphQL */ `
  subscription {
    bookingEvents {
      id
      type
      booking { bookingId }
    }
  }
`;

async function mint(t: TestService, who: { client_id: string; client_secret: string }): Promise<Response> {
  return t.request('/channel/v1/oauth/token', {
    method: 'POST',
    ip: uniqueIp(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: who.client_id, client_secret: who.client_secret }).toString(),
  });
}

async function tokenOf(t: TestService, who: { client_id: string; client_secret: string }): Promise<string> {
  const res = await mint(t, who);
  expect(res.status).toBe(200);
  return (await res.json()).access_token;
}

function revoke(t: TestService, who: IssuedCredentials, token: string): Promise<Response> {
  return t.request('/channel/v1/oauth/revoke', {
    method: 'POST',
    ip: uniqueIp(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: who.client_id, client_secret: who.client_secret, token }).toString(),
  });
}

/** An operator command through the operator API, as `npm run admin` sends it. */
async function operator(t: TestService, appId: string, action: 'suspend' | 'resume' | 'rotate-key' | 'rotate-secret') {
  const res = await t.request(`/admin/v1/apps/${appId}/${action}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.service.adminToken.token}` },
    ip: '127.0.0.1',
  });
  return { status: res.status, body: (await res.json()) as { data?: Record<string, unknown>; error?: { code: string } } };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const bookings = (t: TestService, headers: Record<string, string>) => t.request('/channel/v1/bookings', { headers });

async function expectRefused(res: Response, pattern: RegExp) {
  expect(res.status).toBe(401);
  const body = await res.json();
  expect(body.error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(pattern) });
}

describe('operator commands revoke tokens (one instance)', () => {
  let t: TestService;

  beforeAll(async () => {
    // The default cache lifetime: every refusal below is the revocation's, not an expired entry's.
    t = await startTestService({ AUTH_CACHE_TTL_MS: '5000' });
  });
  afterAll(async () => t?.close());

  it('secret:rotate: a token issued before reads bookings no more, the old secret mints nothing, the new one does', async () => {
    const who = await t.channel({ name: 'Leaked Secret' });
    const before = await tokenOf(t, who);
    const other = await tokenOf(t, who);
    // Read once, so the token sits in the credential cache.
    expect((await bookings(t, bearer(before))).status).toBe(200);

    const rotated = await operator(t, who.app_id, 'rotate-secret');
    expect(rotated.status).toBe(200);
    expect(rotated.body.data).toEqual({
      app_id: who.app_id,
      client_id: who.client_id,
      client_secret: expect.stringMatching(/^cs_[\w-]{40,}$/),
      revoked_tokens: 2,
    });
    const secret = rotated.body.data!.client_secret as string;
    expect(secret).not.toBe(who.client_secret);
    // Stored as its digest, never the secret itself.
    const app = await t.service.deps.db.prisma.app.findUniqueOrThrow({ where: { id: who.app_id } });
    expect(app.clientSecretHash).toBe(digest(secret));

    await expectRefused(await bookings(t, bearer(before)), /revoked/);
    await expectRefused(await bookings(t, bearer(other)), /revoked/);
    const old = await mint(t, who);
    expect(old.status).toBe(401);
    expect(await old.json()).toMatchObject({ error: 'invalid_client' });

    const fresh = await tokenOf(t, { client_id: who.client_id, client_secret: secret });
    expect((await bookings(t, bearer(fresh))).status).toBe(200);
    // The API key is another credential: secret rotation leaves it working.
    expect((await bookings(t, apiKey(who))).status).toBe(200);
    // Rotating again revokes the token of the second secret too.
    expect((await operator(t, who.app_id, 'rotate-secret')).body.data).toMatchObject({ revoked_tokens: 1 });
    await expectRefused(await bookings(t, bearer(fresh)), /revoked/);
  });

  it('secret:rotate of an unknown app is 404 and of a malformed id 400, changing nothing', async () => {
    expect(await operator(t, '00000000-0000-4000-8000-000000000000', 'rotate-secret')).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    expect(await operator(t, 'not-a-uuid', 'rotate-secret')).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_ERROR' } } });
  });

  it('app:suspend refuses the tokens; app:resume brings the API key back but not the tokens; new tokens work', async () => {
    const who = await t.channel({ name: 'Suspended' });
    const token = await tokenOf(t, who);
    expect((await bookings(t, bearer(token))).status).toBe(200);
    expect((await bookings(t, apiKey(who))).status).toBe(200);

    const suspended = await operator(t, who.app_id, 'suspend');
    expect(suspended.body.data).toMatchObject({ status: 'suspended', revoked_tokens: 1 });
    await expectRefused(await bookings(t, bearer(token)), /suspended/);
    await expectRefused(await bookings(t, apiKey(who)), /suspended/);
    expect((await mint(t, who)).status).toBe(401);

    const resumed = await operator(t, who.app_id, 'resume');
    expect(resumed.body.data).toMatchObject({ status: 'active', revoked_tokens: 0 });
    await expectRefused(await bookings(t, bearer(token)), /revoked/);
    const gql = await t.graphql('{ channel { userId } }', {}, bearer(token));
    expect(gql.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
    expect((await bookings(t, apiKey(who))).status).toBe(200);
    expect((await bookings(t, bearer(await tokenOf(t, who)))).status).toBe(200);
  });

  it('key:rotate still refuses the old key at once; tokens, minted with the client secret, are not affected', async () => {
    const who = await t.channel({ name: 'Rotated Key' });
    const token = await tokenOf(t, who);
    expect((await bookings(t, apiKey(who))).status).toBe(200);
    const rotated = await operator(t, who.app_id, 'rotate-key');
    expect(rotated.status).toBe(200);
    await expectRefused(await bookings(t, apiKey(who)), /not valid/);
    expect((await bookings(t, { 'x-api-key': rotated.body.data!.api_key as string })).status).toBe(200);
    expect((await bookings(t, bearer(token))).status).toBe(200);
  });

  it('a token being minted while the secret is rotated is either revoked or never issued', async () => {
    const who = await t.channel({ name: 'Racing' });
    const racing = Array.from({ length: 6 }, () => mint(t, who));
    const rotation = operator(t, who.app_id, 'rotate-secret');
    const answers = await Promise.all(racing);
    expect((await rotation).status).toBe(200);
    for (const answer of answers) {
      if (answer.status !== 200) {
        expect(answer.status).toBe(401);
        continue;
      }
      const { access_token } = await answer.json();
      expect((await bookings(t, bearer(access_token))).status).toBe(401);
    }
  });
});

describe('a live subscription ends when its token is revoked', () => {
  let t: TestService;

  beforeAll(async () => {
    // A long cache lifetime: only the revocation's own cache drop can end the subscription in time.
    t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '50', AUTH_CACHE_TTL_MS: '60000' });
  });
  afterAll(async () => t?.close());

  it('RFC 7009 revocation: the SSE subscription of the token ends with UNAUTHORIZED at the next event, with no event', async () => {
    const who = await t.channel({ name: 'Live Revoked' });
    const token = await tokenOf(t, who);
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    expect(res.status).toBe(200);
    const whole = res.text();
    // A subscription of the API key beside it, which the revocation does not concern.
    const kept = await t.request('/graphql', {
      method: 'POST',
      headers: { ...apiKey(who), 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    const reader = kept.body!.pipeThrough(new TextDecoderStream()).getReader();
    let keptText = '';
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        keptText += value;
      }
    })();
    await sleep(150);
    expect((await revoke(t, who, token)).status).toBe(200);
    const flow = v1(t, who);
    const offer = await flow.offer();
    const booked = await flow.book({ book_token: offer.bookToken, booker_name: 'Live Guest', guests_adult: 2 });
    expect(booked.status).toBe(201);
    const bookingId = (await booked.json()).data.id as string;
    await eventually(() => keptText.includes(bookingId), 10_000, 'the event on the API key subscription');
    await reader.cancel();
    await reading;
    // The stream ends by itself: an error result, then complete.
    const text = await Promise.race([whole, sleep(8_000).then(() => 'the stream did not end')]);
    const frames = text.split('\n\n').map((f) => f.trim()).filter((f) => f && f !== ':');
    expect(frames).toHaveLength(2);
    const result = JSON.parse(frames[0]!.split('\ndata: ')[1]!) as { data?: unknown; errors: { extensions: { code: string } }[] };
    expect(result.data ?? null).toBeNull();
    expect(result.errors.map((e) => e.extensions.code)).toEqual(['UNAUTHORIZED']);
    expect(frames[1]).toMatch(/^event: complete/);
  });
});

/** A second instance of the deployment `a` belongs to: the same PostgreSQL schema. */
function secondInstance(a: TestService, overrides: Record<string, string>): Promise<TestService> {
  return startTestService({ ...overrides, DATABASE_SCHEMA: a.config.databaseSchema });
}

/** Closes the second instance without dropping the schema the first still uses. */
async function closeSecond(b: TestService | undefined): Promise<void> {
  if (!b) return;
  await b.service.close();
  rmSync(b.config.dataDir, { recursive: true, force: true });
}

// The embedded database belongs to one process; two instances need PostgreSQL (CI's pass).
describe.runIf(process.env.DATABASE_URL)('two instances sharing PostgreSQL, without Redis', () => {
  const TTL = 3_000;
  let a: TestService;
  let b: TestService;

  beforeAll(async () => {
    a = await startTestService({ REDIS_URL: '', AUTH_CACHE_TTL_MS: String(TTL) });
    b = await secondInstance(a, { REDIS_URL: '', AUTH_CACHE_TTL_MS: String(TTL) });
  });
  afterAll(async () => {
    await closeSecond(b);
    await a?.close();
  });

  it('a revocation on A is refused at once on A, and on B within AUTH_CACHE_TTL_MS', async () => {
    expect(b.service.deps.redis).toBeUndefined();
    const who = await a.channel({ name: 'Two Without Redis' });
    const revoked = await tokenOf(a, who);
    const rotatedAway = await tokenOf(a, who);
    const suspendedKey = await b.channel({ name: 'Two Without Redis, suspended' });
    // Both instances cache all three credentials.
    for (const t of [a, b]) {
      expect((await bookings(t, bearer(revoked))).status).toBe(200);
      expect((await bookings(t, bearer(rotatedAway))).status).toBe(200);
      expect((await bookings(t, apiKey(suspendedKey))).status).toBe(200);
    }
    const started = Date.now();
    expect((await revoke(a, who, revoked)).status).toBe(200);
    expect((await operator(a, suspendedKey.app_id, 'suspend')).status).toBe(200);
    await expectRefused(await bookings(a, bearer(revoked)), /revoked/);
    await expectRefused(await bookings(a, apiKey(suspendedKey)), /suspended/);
    // B was not told: it trusts its cached entries until they expire...
    if (Date.now() - started < TTL / 2) {
      expect((await bookings(b, bearer(revoked))).status).toBe(200);
      expect((await bookings(b, apiKey(suspendedKey))).status).toBe(200);
    }
    // ...and no longer.
    await sleep(TTL + 100);
    await expectRefused(await bookings(b, bearer(revoked)), /revoked/);
    await expectRefused(await bookings(b, apiKey(suspendedKey)), /suspended/);

    // secret:rotate on B: A refuses the old tokens within the TTL too.
    expect((await bookings(a, bearer(rotatedAway))).status).toBe(200);
    expect((await operator(b, who.app_id, 'rotate-secret')).status).toBe(200);
    await expectRefused(await bookings(b, bearer(rotatedAway)), /revoked/);
    await sleep(TTL + 100);
    await expectRefused(await bookings(a, bearer(rotatedAway)), /revoked/);
  });
});

describe.runIf(process.env.DATABASE_URL && process.env.REDIS_URL)('two instances sharing PostgreSQL and Redis', () => {
  let a: TestService;
  let b: TestService;

  beforeAll(async () => {
    // The longest cache lifetime: only the Redis message can make B refuse within the test.
    a = await startTestService({ AUTH_CACHE_TTL_MS: '60000' });
    b = await secondInstance(a, { AUTH_CACHE_TTL_MS: '60000' });
    await Promise.all([a.service.deps.credentialChanges.ready, b.service.deps.credentialChanges.ready]);
  });
  afterAll(async () => {
    await closeSecond(b);
    await a?.close();
  });

  /** Refused on `t` within a moment (the Redis message's way), far inside the 60 s cache lifetime. */
  async function refusedSoon(t: TestService, headers: Record<string, string>) {
    const started = Date.now();
    await eventually(async () => (await bookings(t, headers)).status === 401, 2_000, 'the refusal on the other instance');
    expect(Date.now() - started).toBeLessThan(2_000);
  }

  it('a revocation, a secret rotation and a suspension on A are refused at once on B', async () => {
    const who = await a.channel({ name: 'Two With Redis' });
    const partnerRevoked = await tokenOf(a, who);
    const rotatedAway = await tokenOf(a, who);
    const suspended = await a.channel({ name: 'Two With Redis, suspended' });
    for (const t of [a, b]) {
      expect((await bookings(t, bearer(partnerRevoked))).status).toBe(200);
      expect((await bookings(t, bearer(rotatedAway))).status).toBe(200);
      expect((await bookings(t, apiKey(suspended))).status).toBe(200);
    }

    expect((await revoke(a, who, partnerRevoked)).status).toBe(200);
    await expectRefused(await bookings(a, bearer(partnerRevoked)), /revoked/);
    await refusedSoon(b, bearer(partnerRevoked));
    // Only that token: the app's other token is still good on B.
    expect((await bookings(b, bearer(rotatedAway))).status).toBe(200);

    expect((await operator(a, who.app_id, 'rotate-secret')).status).toBe(200);
    await refusedSoon(b, bearer(rotatedAway));

    expect((await operator(a, suspended.app_id, 'suspend')).status).toBe(200);
    await refusedSoon(b, apiKey(suspended));
  });
});
