import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { expectError } from '../helpers/http.js';
import { apiKey, startTestService, uniqueIp, type TestService } from '../helpers/service.js';

/**
 * Work before a caller is known is bounded per client address: every request without a credential
 * (the image route, the docs pages and their assets, the GraphiQL page, the token endpoint,
 * anonymous GraphQL and its introspection, GraphQL with a refused credential) counts against
 * PUBLIC_REQUESTS_PER_ADDRESS_MINUTE of its address (behind TRUSTED_PROXIES, the forwarded one);
 * past it, 429 RATE_LIMIT_EXCEEDED in the error envelope with Retry-After, before any body is read.
 * A partner's credentialed requests are charged to its channel, never to the address.
 */

const LIMIT = 5;
let t: TestService;
let partner: IssuedCredentials;

beforeAll(async () => {
  t = await startTestService({ PUBLIC_REQUESTS_PER_ADDRESS_MINUTE: String(LIMIT), TRUSTED_PROXIES: '127.0.0.1' });
  partner = await t.channel({ name: 'Public Limits Partner' });
});
afterAll(() => t.close());

const introspection = JSON.stringify({ query: '{ __schema { types { name } } }' });

/** Each public route, as a request from `ip`. */
const routes: Record<string, (ip: string) => Promise<Response>> = {
  'GET /images/{unknown}/abc/large.png': (ip) => t.request('/images/900001/abc/large.png', { ip }),
  'GET /channel/v1/docs': (ip) => t.request('/channel/v1/docs', { ip }),
  'GET /channel/v1/docs/assets/init.js': (ip) => t.request('/channel/v1/docs/assets/init.js', { ip }),
  'GET /graphql (GraphiQL)': (ip) => t.request('/graphql', { ip, headers: { accept: 'text/html' } }),
  'POST /oauth/token': (ip) =>
    t.request('/oauth/token', { ip, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&client_id=x&client_secret=y' }),
  'POST /graphql introspection, anonymous': (ip) => t.request('/graphql', { ip, method: 'POST', headers: { 'content-type': 'application/json' }, body: introspection }),
  'POST /graphql with a refused API key': (ip) =>
    t.request('/graphql', { ip, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'nonsense' }, body: introspection }),
};

describe(`PUBLIC_REQUESTS_PER_ADDRESS_MINUTE=${LIMIT}`, () => {
  it.each(Object.keys(routes))('%s: the sixth request from one address is 429 with Retry-After; another address is served', async (name) => {
    const send = routes[name]!;
    const ip = uniqueIp();
    for (let i = 0; i < LIMIT; i++) {
      const res = await send(ip);
      expect(res.status, `request ${i + 1}`).not.toBe(429);
      await res.arrayBuffer();
    }
    const refused = await send(ip);
    const error = await expectError(refused, 429, 'RATE_LIMIT_EXCEEDED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(error.details).toMatchObject({ limit: LIMIT, retry_after: expect.any(Number) });
    expect(refused.headers.get('x-request-id')).toBeTruthy();
    const other = await send(uniqueIp());
    expect(other.status).not.toBe(429);
    await other.arrayBuffer();
  });

  it('the routes share one count per address', async () => {
    const ip = uniqueIp();
    const names = Object.keys(routes);
    for (let i = 0; i < LIMIT; i++) await (await routes[names[i % names.length]!]!(ip)).arrayBuffer();
    await expectError(await routes['GET /channel/v1/docs']!(ip), 429, 'RATE_LIMIT_EXCEEDED');
  });

  it("behind a trusted proxy the forwarded address is counted, not the proxy's", async () => {
    const a = uniqueIp();
    const viaProxy = (client: string) => t.request('/images/900001/abc/large.png', { ip: '127.0.0.1', headers: { 'x-forwarded-for': client } });
    for (let i = 0; i < LIMIT; i++) await (await viaProxy(a)).arrayBuffer();
    await expectError(await viaProxy(a), 429, 'RATE_LIMIT_EXCEEDED');
    const b = await viaProxy(uniqueIp());
    expect(b.status).toBe(404);
  });

  it("a partner's credentialed requests from a spent address are charged to its channel, not refused", async () => {
    const ip = uniqueIp();
    for (let i = 0; i < LIMIT + 1; i++) await (await routes['GET /channel/v1/docs']!(ip)).arrayBuffer();
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await t.request('/channel/v1/properties/1', { ip, headers: apiKey(partner) });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const gql = await t.request('/graphql', { ip, method: 'POST', headers: { 'content-type': 'application/json', ...apiKey(partner) }, body: JSON.stringify({ query: '{ __typename }' }) });
    expect(gql.status).toBe(200);
  });

  it('a refused POST is answered before its body is read (413-sized bodies drain, not parse)', async () => {
    const ip = uniqueIp();
    for (let i = 0; i < LIMIT; i++) await (await routes['POST /graphql introspection, anonymous']!(ip)).arrayBuffer();
    const big = JSON.stringify({ query: `{ ${'__typename '.repeat(50_000)}}` });
    await expectError(await t.request('/graphql', { ip, method: 'POST', headers: { 'content-type': 'application/json' }, body: big }), 429, 'RATE_LIMIT_EXCEEDED');
  });
});
