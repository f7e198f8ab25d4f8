import { randomInt } from 'node:crypto';
import { parse } from 'graphql';
import { createClient, type Client, type ExecutionResult } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createService, type ChannelService } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { documentCost } from '../../src/graphql/cost.js';
import { sleep } from '../helpers/receiver.js';
import { graphqlResponse } from '../helpers/graphql.js';
import { apiKey, cleanupEnv, createTestChannel, startTestService, testEnv, uniqueIp, type TestService } from '../helpers/service.js';

/**
 * The API's per-channel rate limit (docs/spec/channel-api.md §8, docs/spec/DECISIONS.md "Errors"): X-RateLimit-* on every
 * authenticated v1, v2 and GraphQL response, 429 RATE_LIMIT_EXCEEDED with Retry-After past the
 * channel's limit, GraphQL charged by operation cost, shared across instances through Redis; the
 * token endpoint keeps its own 20 per 60 s per address.
 */

const WINDOW = 60;

let t: TestService;

beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t?.close());

/** A channel whose limit, in this (sandbox) deployment, is `limit` per window. */
function channelWithLimit(limit: number, name = 'Limited') {
  return t.channel({ name, rateLimit: { sandbox: limit, production: 1_000_000 } });
}

function rateHeaders(res: Response) {
  return {
    limit: res.headers.get('x-ratelimit-limit'),
    remaining: res.headers.get('x-ratelimit-remaining'),
    reset: res.headers.get('x-ratelimit-reset'),
  };
}

function expectReset(res: Response, window = WINDOW) {
  const reset = Number(res.headers.get('x-ratelimit-reset'));
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(window);
}

const gql = (query: string, headers: Record<string, string>, variables?: Record<string, unknown>, service = t) =>
  graphqlResponse(service, query, variables, { headers });

interface GraphQLBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string; details?: Record<string, unknown> } }[];
  extensions?: { rateLimit?: { cost: number; limit: number; remaining: number; reset: number } };
}

describe('REST v1 and v2', () => {
  it('every authenticated response carries X-RateLimit-Limit, -Remaining and -Reset, successes and errors alike', async () => {
    const who = await channelWithLimit(50);
    const key = apiKey(who);

    const ok = await t.request('/channel/v1/channels/me', { headers: key });
    expect(ok.status).toBe(200);
    expect(rateHeaders(ok)).toMatchObject({ limit: '50', remaining: '49' });
    expectReset(ok);

    const notFound = await t.request('/channel/v1/bookings/00000000-0000-4000-8000-000000000000', { headers: key });
    expect(notFound.status).toBe(404);
    expect((await notFound.json()).error.code).toBe('NOT_FOUND');
    expect(rateHeaders(notFound)).toMatchObject({ limit: '50', remaining: '48' });
    expectReset(notFound);

    const invalid = await t.request('/channel/v1/channels/me', {
      method: 'PUT',
      headers: { ...key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: '' }),
    });
    expect(invalid.status).toBe(400);
    expect(rateHeaders(invalid)).toMatchObject({ limit: '50', remaining: '47' });

    const v2 = await t.request('/api/channel/v2/properties?per_page=1', { headers: key });
    expect(v2.status).toBe(200);
    expect(rateHeaders(v2)).toMatchObject({ limit: '50', remaining: '46' });
    expectReset(v2);

    const v2Invalid = await t.request('/api/channel/v2/properties?per_page=0', { headers: key });
    expect(v2Invalid.status).toBe(400);
    expect((await v2Invalid.json()).error.code).toBe('INVALID_REQUEST');
    expect(rateHeaders(v2Invalid)).toMatchObject({ limit: '50', remaining: '45' });

    // An unknown route under the base, with a credential: charged like any request.
    const unknown = await t.request('/channel/v1/no-such-route', { headers: key });
    expect(unknown.status).toBe(404);
    expect(rateHeaders(unknown)).toMatchObject({ limit: '50', remaining: '44' });
  });

  it('a scope refusal (403) is charged and carries the headers', async () => {
    const who = await t.channel({ name: 'Narrow', scopes: ['channels:read'], rateLimit: { sandbox: 10 } });
    const res = await t.request('/channel/v1/bookings', { headers: apiKey(who) });
    expect(res.status).toBe(403);
    expect(rateHeaders(res)).toMatchObject({ limit: '10', remaining: '9' });
  });

  it('a request without a valid credential is refused with 401 before any charge, and has no rate headers', async () => {
    const who = await channelWithLimit(5);
    const none = await t.request('/channel/v1/channels/me');
    expect(none.status).toBe(401);
    expect(none.headers.get('x-ratelimit-limit')).toBeNull();
    const bad = await t.request('/api/channel/v2/properties', { headers: { 'x-api-key': 'ck_not_a_key' } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('x-ratelimit-limit')).toBeNull();
    const expired = await t.request('/channel/v1/channels/me', { headers: { authorization: 'Bearer oat_unknown' } });
    expect(expired.status).toBe(401);

    const first = await t.request('/channel/v1/channels/me', { headers: apiKey(who) });
    expect(rateHeaders(first)).toMatchObject({ limit: '5', remaining: '4' });
  });

  it('a channel with limit N gets N requests, then 429 RATE_LIMIT_EXCEEDED in the envelope with Retry-After; another channel is unaffected', async () => {
    const limit = 4;
    const who = await channelWithLimit(limit);
    const other = await channelWithLimit(limit, 'Other');

    for (let i = 1; i <= limit; i++) {
      const res = await t.request('/channel/v1/channels/me', { headers: apiKey(who) });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(limit - i));
    }

    const refused = await t.request('/channel/v1/channels/me', { headers: apiKey(who) });
    expect(refused.status).toBe(429);
    const body = await refused.json();
    expect(body).toEqual({
      error: { code: 'RATE_LIMIT_EXCEEDED', message: expect.any(String), details: { retry_after: expect.any(Number) } },
      meta: { request_id: refused.headers.get('x-request-id'), timestamp: expect.stringMatching(/Z$/) },
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW);
    expect(body.error.details.retry_after).toBe(retryAfter);
    expect(rateHeaders(refused)).toEqual({ limit: String(limit), remaining: '0', reset: String(retryAfter) });

    // The same limit covers v2 (in v2's envelope, which is v1's) and GraphQL.
    const v2 = await t.request('/api/channel/v2/properties', { headers: apiKey(who) });
    expect(v2.status).toBe(429);
    expect(v2.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await v2.json()).error.code).toBe('RATE_LIMIT_EXCEEDED');
    const graphql = await gql('{ channel { name } }', apiKey(who));
    expect(graphql.status).toBe(429);
    expect(graphql.headers.get('retry-after')).toMatch(/^\d+$/);
    const gqlBody = (await graphql.json()) as GraphQLBody;
    expect(gqlBody.data).toBeUndefined();
    expect(gqlBody.errors?.[0]?.extensions?.code).toBe('RATE_LIMIT_EXCEEDED');

    // Refused requests are not counted on top: still 0 left, not less.
    const again = await t.request('/channel/v1/channels/me', { headers: apiKey(who) });
    expect(again.status).toBe(429);
    expect(again.headers.get('x-ratelimit-remaining')).toBe('0');

    const theirs = await t.request('/channel/v1/channels/me', { headers: apiKey(other) });
    expect(theirs.status).toBe(200);
    expect(rateHeaders(theirs)).toMatchObject({ limit: String(limit), remaining: String(limit - 1) });
  });

  it("the limit is the channel's rate_limit for the deployment's environment, as GET /channels/me shows it", async () => {
    const who = await t.channel({ name: 'Defaults', rateLimit: 'default' });
    const res = await t.request('/channel/v1/channels/me', { headers: apiKey(who) });
    const profile = (await res.json()).data;
    expect(profile.rate_limit).toEqual({ sandbox: 60, production: 600 });
    // CHANNEL_ENV is sandbox here.
    expect(rateHeaders(res)).toMatchObject({ limit: '60', remaining: '59' });
  });

  it('the public documents need no credential and are not charged without one', async () => {
    const res = await t.request('/channel/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('the window', () => {
  let short: TestService;
  const window = 2;

  beforeAll(async () => {
    short = await startTestService({ RATE_LIMIT_WINDOW_SECONDS: String(window) });
  });
  afterAll(() => short?.close());

  it('resets after X-RateLimit-Reset seconds: the full limit is available again', async () => {
    const who = await short.channel({ name: 'Short Window', rateLimit: { sandbox: 2 } });
    const get = () => short.request('/channel/v1/channels/me', { headers: apiKey(who) });

    const first = await get();
    expect(first.status).toBe(200);
    expectReset(first, window);
    expect((await get()).status).toBe(200);
    const refused = await get();
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(window);
    expect(refused.headers.get('x-ratelimit-reset')).toBe(String(retryAfter));

    // Waiting what Retry-After says is enough (it is rounded up).
    await sleep(retryAfter * 1000 + 50);
    const renewed = await get();
    expect(renewed.status).toBe(200);
    expect(rateHeaders(renewed)).toMatchObject({ limit: '2', remaining: '1' });
    expectReset(renewed, window);
  });
});

describe('GraphQL', () => {
  it('charges the operation its cost, reports extensions.rateLimit and sends the headers', async () => {
    const who = await channelWithLimit(100);
    const cheap = await gql('{ channel { name rateLimit { sandbox production } } }', apiKey(who));
    expect(cheap.status).toBe(200);
    const cheapBody = (await cheap.json()) as GraphQLBody;
    expect(cheapBody.data).toBeTruthy();
    expect(cheapBody.extensions?.rateLimit).toEqual({ cost: 1, limit: 100, remaining: 99, reset: Number(cheap.headers.get('x-ratelimit-reset')) });
    expect(rateHeaders(cheap)).toMatchObject({ limit: '100', remaining: '99' });
    expectReset(cheap);

    // 10 properties, each with up to 10 room types of up to 10 rate plans: 1,110 list items, 12 points.
    const query = '{ properties(first: 10) { edges { node { propertyId roomTypes { roomtypeId ratePlans { rateplanId } } } } } }';
    expect(documentCost(parse(query))).toBe(12);
    const dear = await gql(query, apiKey(who));
    expect(dear.status).toBe(200);
    const dearBody = (await dear.json()) as GraphQLBody;
    expect(dearBody.errors).toBeUndefined();
    expect(dearBody.extensions?.rateLimit).toMatchObject({ cost: 12, limit: 100, remaining: 87 });
    expect(rateHeaders(dear)).toMatchObject({ limit: '100', remaining: '87' });

    // Page sizes in variables count.
    const paged = await gql('query ($n: Int!) { bookings(first: $n) { edges { node { bookingId } } } webhooks { edges { node { webhookId } } } }', apiKey(who), { n: 100 });
    expect(((await paged.json()) as GraphQLBody).extensions?.rateLimit).toMatchObject({ cost: 2, remaining: 85 });
  });

  it('a document that does not parse or validate costs 1 point and carries the headers; so does a malformed body', async () => {
    const who = await channelWithLimit(10);
    const syntax = await gql('{ channel { name ', apiKey(who));
    expect(syntax.status).toBe(400);
    expect(((await syntax.json()) as GraphQLBody).extensions?.rateLimit).toMatchObject({ cost: 1, limit: 10, remaining: 9 });
    expect(rateHeaders(syntax)).toMatchObject({ limit: '10', remaining: '9' });

    const invalid = await gql('{ channel { noSuchField } }', apiKey(who));
    expect(invalid.status).toBe(400);
    expect(rateHeaders(invalid)).toMatchObject({ limit: '10', remaining: '8' });

    const malformed = await t.request('/graphql', {
      method: 'POST',
      headers: { ...apiKey(who), 'content-type': 'application/json' },
      body: '{"query": ',
    });
    expect(malformed.status).toBeGreaterThanOrEqual(400);
    expect(malformed.status).toBeLessThan(500);
    expect(rateHeaders(malformed)).toMatchObject({ limit: '10', remaining: '7' });
  });

  it('an operation costing more than what is left is refused without running and without using up the rest', async () => {
    const who = await channelWithLimit(15);
    const dear = '{ properties(first: 10) { edges { node { propertyId roomTypes { roomtypeId ratePlans { rateplanId } } } } } }'; // 12 points
    expect((await gql(dear, apiKey(who))).status).toBe(200); // 3 left

    const renamed = await gql('mutation { updateChannel(input: { name: "Renamed" }) { name } }', apiKey(who));
    expect(renamed.status).toBe(200); // 1 point: runs
    const tooDear = await gql(dear, apiKey(who)); // 2 left, needs 12
    expect(tooDear.status).toBe(429);
    const body = (await tooDear.json()) as GraphQLBody;
    expect(body.errors?.[0]?.extensions).toEqual({ code: 'RATE_LIMIT_EXCEEDED', details: { retry_after: expect.any(Number), cost: 12, limit: 15 } });
    expect(body.extensions?.rateLimit).toMatchObject({ cost: 12, limit: 15, remaining: 2 });
    expect(rateHeaders(tooDear)).toMatchObject({ limit: '15', remaining: '2' });

    // The 2 points left are still there for cheaper operations.
    for (const remaining of [1, 0]) {
      const res = await gql('{ channel { name } }', apiKey(who));
      expect(res.status).toBe(200);
      expect(((await res.json()) as GraphQLBody).extensions?.rateLimit?.remaining).toBe(remaining);
    }

    // A refused mutation changes nothing.
    const mutation = await gql('mutation { updateChannel(input: { name: "Refused" }) { name } }', apiKey(who));
    expect(mutation.status).toBe(429);
    const stored = await t.service.deps.db.prisma.channel.findUniqueOrThrow({ where: { id: who.user_id } });
    expect(stored.name).toBe('Renamed');
  });

  it('an operation dearer than the whole limit says so', async () => {
    const who = await channelWithLimit(5);
    const res = await gql('{ properties(first: 10) { edges { node { propertyId roomTypes { roomtypeId ratePlans { rateplanId } } } } } }', apiKey(who));
    expect(res.status).toBe(429);
    const body = (await res.json()) as GraphQLBody;
    expect(body.errors?.[0]?.message).toMatch(/costs 12 points, more than this channel's limit of 5/);
    expect(body.extensions?.rateLimit).toMatchObject({ cost: 12, remaining: 5 });
  });

  it('a request without a credential is not charged and gets no rate information', async () => {
    const res = await gql('{ channel { name } }', {});
    const body = (await res.json()) as GraphQLBody;
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
    expect(body.extensions?.rateLimit).toBeUndefined();
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('graphql-ws', () => {
  let port: number;
  const clients: Client[] = [];

  beforeAll(async () => {
    port = await t.service.listen(0);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
  });

  function run(client: Client, query: string): Promise<{ result?: ExecutionResult; errors?: unknown[] }> {
    return new Promise((resolve) => {
      let result: ExecutionResult | undefined;
      client.subscribe(
        { query },
        {
          next: (value) => (result = value as ExecutionResult),
          error: (error) => resolve({ errors: Array.isArray(error) ? error : [error] }),
          complete: () => resolve({ result }),
        },
      );
    });
  }

  it('charges each operation when it is subscribed; past the limit it is refused with RATE_LIMIT_EXCEEDED', async () => {
    const who = await channelWithLimit(3);
    const client = createClient({
      url: `ws://127.0.0.1:${port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { 'X-Api-Key': who.api_key },
      retryAttempts: 0,
    });
    clients.push(client);

    const first = await run(client, '{ channel { name } }');
    expect(first.result?.data).toEqual({ channel: { name: 'Limited' } });
    expect(first.result?.extensions).toMatchObject({ rateLimit: { cost: 1, limit: 3, remaining: 2 } });
    const second = await run(client, '{ a: channel { name } b: channel { userId } }');
    expect(second.result?.extensions).toMatchObject({ rateLimit: { cost: 2, limit: 3, remaining: 0 } });

    const refused = await run(client, '{ channel { name } }');
    expect(refused.result).toBeUndefined();
    expect(refused.errors).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'RATE_LIMIT_EXCEEDED', details: expect.objectContaining({ cost: 1, limit: 3 }) }) }),
    ]);

    // The same budget as HTTP.
    const http = await gql('{ channel { name } }', apiKey(who));
    expect(http.status).toBe(429);
  });
});

describe('the token endpoint', () => {
  it("keeps its own 20 requests per 60 s per address, which does not touch the channel's API limit", async () => {
    const who = await channelWithLimit(3);
    const ip = uniqueIp();
    const token = (from: string) =>
      t.request('/channel/v1/oauth/token', {
        method: 'POST',
        ip: from,
        // An API key sent along does not make it an API request.
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...apiKey(who) },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: who.client_id, client_secret: who.client_secret }).toString(),
      });

    for (let i = 1; i <= 20; i++) {
      const res = await token(ip);
      expect(res.status).toBe(200);
      expect(rateHeaders(res)).toMatchObject({ limit: '20', remaining: String(20 - i) });
    }
    const refused = await token(ip);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'rate_limit_exceeded' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await token(uniqueIp())).status).toBe(200);

    const api = await t.request('/channel/v1/channels/me', { headers: apiKey(who) });
    expect(api.status).toBe(200);
    expect(rateHeaders(api)).toMatchObject({ limit: '3', remaining: '2' });
  });
});

// Two processes' worth of limiter state can only be shared through servers both reach: the
// embedded database is one process's own, so this runs in the PostgreSQL + Redis pass.
describe.runIf(process.env.DATABASE_URL && process.env.REDIS_URL)('two instances sharing one Redis', () => {
  let env: Record<string, string>;
  const instances: ChannelService[] = [];

  beforeAll(async () => {
    env = testEnv();
    // The same environment, so the same DATABASE_SCHEMA and REDIS_URL; the second starts after the first migrated.
    for (let i = 0; i < 2; i++) instances.push(await createService(loadConfig(env)));
  });
  afterAll(async () => {
    await Promise.all(instances.map((s) => s.close()));
    if (env) await cleanupEnv(env);
  });

  it("together allow exactly the channel's limit in a window, however the requests are spread", async () => {
    const limit = 10;
    const prisma = instances[0]!.deps.db.prisma;
    const who = await createTestChannel(prisma, { name: 'Two Instances', rateLimit: { sandbox: limit } });
    const ip = `127.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(1, 255)}`;
    const call = (service: ChannelService, path: string) =>
      service.fetch(new Request(`http://channel.test${path}`, { headers: apiKey(who) }), { incoming: { socket: { remoteAddress: ip } } });

    // Three times the limit at once, alternating instances and v1, v2 and GraphQL (1 point each).
    const paths = ['/channel/v1/channels/me', '/api/channel/v2/properties?per_page=1'];
    const responses = await Promise.all(
      Array.from({ length: limit * 3 }, (_, i) => {
        const service = instances[i % 2]!;
        if (i % 3 === 2) {
          return service.fetch(
            new Request('http://channel.test/graphql', {
              method: 'POST',
              headers: { ...apiKey(who), 'content-type': 'application/json' },
              body: JSON.stringify({ query: '{ channel { name } }' }),
            }),
            { incoming: { socket: { remoteAddress: ip } } },
          );
        }
        return call(service, paths[i % 2]!);
      }),
    );
    const allowed = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect(allowed).toHaveLength(limit);
    expect(refused).toHaveLength(limit * 2);
    // Each allowed request saw its own place in one shared count.
    const remaining = allowed.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: limit }, (_, i) => i));
    for (const r of refused) {
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    // Both instances took part in both outcomes.
    const byInstance = (status: number) => new Set(responses.flatMap((r, i) => (r.status === status ? [i % 2] : [])));
    expect(byInstance(200).size + byInstance(429).size).toBeGreaterThanOrEqual(3);

    // And afterwards, on either instance, nothing is left.
    for (const service of instances) expect((await call(service, '/channel/v1/channels/me')).status).toBe(429);
  });
});
