import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { accessToken, apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * An answer to a request with a credential is one partner's: a shared cache in front of the
 * service (a proxy or CDN) must neither keep it nor serve it to another partner asking the same
 * URL. Every such answer, refusals included, says `Cache-Control: no-store` (or the handler's own
 * private policy) and `Vary: X-Api-Key, Authorization`; public answers keep their own caching.
 */

const ME = '/channel/v1/channels/me';

function varyOf(res: Response): string[] {
  return (res.headers.get('vary') ?? '').split(',').map((name) => name.trim().toLowerCase()).filter(Boolean);
}

function expectPrivate(res: Response, what: string): void {
  expect(res.headers.get('cache-control'), what).toBe('no-store');
  expect(varyOf(res), what).toEqual(expect.arrayContaining(['x-api-key', 'authorization']));
}

describe('credentialed answers are not for shared caches', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  let other: IssuedCredentials;
  beforeAll(async () => {
    t = await startTestService();
    creds = await t.channel({ name: 'Private A' });
    other = await t.channel({ name: 'Private B' });
  });
  afterAll(() => t.close());

  it('REST answers with an API key or a bearer token: the same URL, each its own channel, neither storable', async () => {
    const a = await t.request(ME, { headers: apiKey(creds) });
    const b = await t.request(ME, { headers: { authorization: `Bearer ${await accessToken(t, other)}` } });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(((await a.json()) as { data: { name: string } }).data.name).toBe('Private A');
    expect(((await b.json()) as { data: { name: string } }).data.name).toBe('Private B');
    expectPrivate(a, 'api key');
    expectPrivate(b, 'bearer');
    const list = await t.request('/channel/v1/bookings', { headers: apiKey(creds) });
    expect(list.status).toBe(200);
    expectPrivate(list, 'bookings');
  });

  it('refusals of a credential too: a wrong key (401), a missing route (404), a bad query (400)', async () => {
    const wrong = await t.request(ME, { headers: { 'x-api-key': 'sk_live_not_a_key' } });
    expect(wrong.status).toBe(401);
    expectPrivate(wrong, '401');
    const missing = await t.request('/channel/v1/nothing-here', { headers: apiKey(creds) });
    expect(missing.status).toBe(404);
    expectPrivate(missing, '404');
    const bad = await t.request('/channel/v1/bookings?per_page=abc', { headers: apiKey(creds) });
    expect(bad.status).toBe(400);
    expectPrivate(bad, '400');
  });

  it('GraphQL answers over POST and GET', async () => {
    const post = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...apiKey(creds) },
      body: JSON.stringify({ query: '{ channel { name } }' }),
    });
    expect(post.status).toBe(200);
    expect(await post.json()).toEqual({ data: { channel: { name: 'Private A' } }, extensions: expect.anything() });
    expectPrivate(post, 'graphql post');
    const get = await t.request(`/graphql?query=${encodeURIComponent('{ channel { name } }')}`, { headers: apiKey(creds) });
    expect(get.status).toBe(200);
    expectPrivate(get, 'graphql get');
  });

  it("a handler's own private policy is kept, and the token endpoint's answer varies by its Basic credential", async () => {
    const basic = Buffer.from(`${creds.client_id}:${creds.client_secret}`).toString('base64');
    const token = await t.request('/channel/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
      body: 'grant_type=client_credentials',
    });
    expect(token.status).toBe(200);
    expect(token.headers.get('cache-control')).toBe('no-store');
    expect(varyOf(token)).toEqual(expect.arrayContaining(['authorization']));
  });

  it('public answers keep their own caching and do not vary by credential', async () => {
    const health = await t.request('/healthz');
    expect(health.status).toBe(200);
    expect(varyOf(health)).not.toContain('x-api-key');
    const spec = await t.request('/channel/v1/openapi.json');
    expect(spec.status).toBe(200);
    expect(spec.headers.get('cache-control')).toBe('no-cache');
    expect(varyOf(spec)).not.toContain('x-api-key');
  });
});

describe('with CORS_ORIGINS listing origins', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  beforeAll(async () => {
    t = await startTestService({ CORS_ORIGINS: 'https://partner.example' });
    creds = await t.channel({ name: 'Private CORS' });
  });
  afterAll(() => t.close());

  it('Vary names the origin and the credential headers, each once', async () => {
    const res = await t.request(ME, { headers: { ...apiKey(creds), origin: 'https://partner.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://partner.example');
    expect(varyOf(res).sort()).toEqual(['authorization', 'origin', 'x-api-key']);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const gql = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://partner.example', ...apiKey(creds) },
      body: JSON.stringify({ query: '{ channel { name } }' }),
    });
    expect(gql.status).toBe(200);
    expect(varyOf(gql)).toEqual(expect.arrayContaining(['origin', 'x-api-key', 'authorization']));
    expect(new Set(varyOf(gql)).size).toBe(varyOf(gql).length);
  });
});
