import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAppStatus, type IssuedCredentials } from '../../src/services/channels/index.js';
import { expectError } from '../helpers/http.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
let full: IssuedCredentials;
let readOnly: IssuedCredentials;

beforeAll(async () => {
  t = await startTestService({ AUTH_CACHE_TTL_MS: '300' });
  full = await t.channel();
  readOnly = await t.channel({ scopes: ['properties:read'] });
});
afterAll(() => t.close());

describe('authentication (spec §5, DECISIONS.md)', () => {
  it('refuses a request without a credential: 401 UNAUTHORIZED in the envelope', async () => {
    const res = await t.request('/channel/v1/channels/me');
    await expectError(res, 401, 'UNAUTHORIZED');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it.each([
    ['an unknown API key', { 'x-api-key': 'ck_not-a-real-key' }],
    ['an unknown bearer token', { authorization: 'Bearer oat_not-a-real-token' }],
    ['a bearer value without the oat_ prefix', { authorization: 'Bearer abc' }],
    ['a Basic Authorization header', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['an empty Bearer', { authorization: 'Bearer' }],
  ])('refuses %s with 401', async (_name, headers) => {
    await expectError(await t.request('/channel/v1/channels/me', { headers }), 401, 'UNAUTHORIZED');
  });

  it('a suspended app is refused for its API key and its tokens at once, even just after using them; after resume the key works again, the tokens stay revoked', async () => {
    const creds = await t.channel();
    const tokenRes = await t.request('/channel/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret }),
    });
    const bearer = { authorization: `Bearer ${(await tokenRes.json()).access_token}` };
    // Used once, so both credentials sit in the credential cache.
    expect((await t.request('/channel/v1/channels/me', { headers: apiKey(creds) })).status).toBe(200);
    expect((await t.request('/channel/v1/channels/me', { headers: bearer })).status).toBe(200);
    const operator = { authorization: `Bearer ${t.service.adminToken.token}` };
    expect((await t.request(`/admin/v1/apps/${creds.app_id}/suspend`, { method: 'POST', headers: operator, ip: '127.0.0.1' })).status).toBe(200);
    const viaKey = await expectError(await t.request('/channel/v1/channels/me', { headers: apiKey(creds) }), 401, 'UNAUTHORIZED');
    expect(viaKey.message).toMatch(/suspended/);
    await expectError(await t.request('/channel/v1/channels/me', { headers: bearer }), 401, 'UNAUTHORIZED');
    const gql = await t.graphql('{ channel { userId } }', {}, apiKey(creds));
    expect(gql.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
    expect((await t.request(`/admin/v1/apps/${creds.app_id}/resume`, { method: 'POST', headers: operator, ip: '127.0.0.1' })).status).toBe(200);
    expect((await t.request('/channel/v1/channels/me', { headers: apiKey(creds) })).status).toBe(200);
    // Suspension revoked the token: resuming does not revive it (issue 15).
    const stale = await expectError(await t.request('/channel/v1/channels/me', { headers: bearer }), 401, 'UNAUTHORIZED');
    expect(stale.message).toMatch(/revoked/);
  });

  it('an API key sent as a bearer token is refused, even while the key is cached', async () => {
    const creds = await t.channel();
    expect((await t.request('/channel/v1/channels/me', { headers: apiKey(creds) })).status).toBe(200);
    await expectError(await t.request('/channel/v1/channels/me', { headers: { authorization: `Bearer ${creds.api_key}` } }), 401, 'UNAUTHORIZED');
  });

  it('a suspension made elsewhere (another instance, the database) applies within AUTH_CACHE_TTL_MS', async () => {
    const creds = await t.channel();
    expect((await t.request('/channel/v1/channels/me', { headers: apiKey(creds) })).status).toBe(200);
    await setAppStatus(t.service.deps.db.prisma, creds.app_id, 'suspended');
    // Trusted from the cache until the TTL runs out (this instance was not told)...
    expect((await t.request('/channel/v1/channels/me', { headers: apiKey(creds) })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, t.config.authCacheTtlMs + 50));
    await expectError(await t.request('/channel/v1/channels/me', { headers: apiKey(creds) }), 401, 'UNAUTHORIZED');
  });

  it('a rotated key stops working at once and the new key works', async () => {
    const creds = await t.channel();
    expect((await t.request('/channel/v1/channels/me', { headers: apiKey(creds) })).status).toBe(200);
    const res = await t.request(`/admin/v1/apps/${creds.app_id}/rotate-key`, { method: 'POST', headers: { authorization: `Bearer ${t.service.adminToken.token}` }, ip: '127.0.0.1' });
    const { api_key } = (await res.json()).data;
    await expectError(await t.request('/channel/v1/channels/me', { headers: apiKey(creds) }), 401, 'UNAUTHORIZED');
    expect((await t.request('/channel/v1/channels/me', { headers: { 'x-api-key': api_key } })).status).toBe(200);
  });
});

describe('scopes: deny by default, the same on REST and GraphQL', () => {
  it('REST: a credential without channels:read gets 403 INSUFFICIENT_SCOPE naming the scope', async () => {
    const body = await expectError(await t.request('/channel/v1/channels/me', { headers: apiKey(readOnly) }), 403, 'INSUFFICIENT_SCOPE');
    expect(body.details).toEqual({ required_scope: 'channels:read' });
  });

  it('REST: PUT /channels/me needs channels:write and changes nothing when refused', async () => {
    const res = await t.request('/channel/v1/channels/me', {
      method: 'PUT',
      headers: { ...apiKey(readOnly), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Hijacked' }),
    });
    const body = await expectError(res, 403, 'INSUFFICIENT_SCOPE');
    expect(body.details!.required_scope).toBe('channels:write');
    const channel = await t.service.deps.db.prisma.channel.findUniqueOrThrow({ where: { id: readOnly.user_id } });
    expect(channel.name).toBe('Test Channel');
  });

  it('GraphQL: the same refusals carry the same codes in extensions', async () => {
    const read = await t.graphql('{ channel { userId } }', {}, apiKey(readOnly));
    expect(read.data).toBeNull();
    expect(read.errors?.[0]?.extensions).toEqual({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'channels:read' } });
    const write = await t.graphql('mutation { updateChannel(input: { name: "X" }) { name } }', {}, apiKey(readOnly));
    expect(write.errors?.[0]?.extensions?.details).toEqual({ required_scope: 'channels:write' });
    const anonymous = await t.graphql('{ channel { userId } }');
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
    const badKey = await t.graphql('{ channel { userId } }', {}, { 'x-api-key': 'ck_wrong' });
    expect(badKey.errors?.[0]).toMatchObject({ message: 'The API key is not valid', extensions: { code: 'UNAUTHORIZED' } });
  });

  it('GraphQL introspection works without a credential (GraphiQL), data does not', async () => {
    const res = await t.graphql('{ __schema { queryType { name } } }');
    expect(res.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });

  it('an API key carries all of its app\'s scopes', async () => {
    expect((await t.request('/channel/v1/channels/me', { headers: apiKey(full) })).status).toBe(200);
    const gql = await t.graphql('{ channel { userId } }', {}, apiKey(full));
    expect(gql.data).toEqual({ channel: { userId: full.user_id } });
  });
});
