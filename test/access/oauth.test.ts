import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { startTestService, uniqueIp, type TestService } from '../helpers/service.js';

let t: TestService;
let creds: IssuedCredentials;

beforeAll(async () => {
  t = await startTestService();
  creds = await t.channel({ scopes: ['channels:read', 'channels:write', 'reservations:read'] });
});
afterAll(() => t.close());

/**
 * Each request comes from an address of its own unless a test names one, so the per-address
 * limit counts only that test's requests (also across runs sharing one Redis).
 */
function token(body: string | Record<string, unknown>, headers: Record<string, string> = {}, ip = uniqueIp()) {
  const form = typeof body === 'string';
  return t.request('/channel/v1/oauth/token', {
    method: 'POST',
    ip,
    headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json', ...headers },
    body: form ? body : JSON.stringify(body),
  });
}

function form(fields: Record<string, string>) {
  return new URLSearchParams(fields).toString();
}

describe('POST /channel/v1/oauth/token', () => {
  it('issues an oat_ token for client_credentials (form-urlencoded) that authenticates API calls', async () => {
    const res = await token(form({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret }));
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.json();
    expect(body).toEqual({
      access_token: expect.stringMatching(/^oat_[\w-]{40,}$/),
      token_type: 'Bearer',
      expires_in: 1800,
      scope: 'reservations:read channels:read channels:write',
    });
    expect(body).not.toHaveProperty('meta');
    expect(body).not.toHaveProperty('refresh_token');

    const me = await t.request('/channel/v1/channels/me', { headers: { authorization: `Bearer ${body.access_token}` } });
    expect(me.status).toBe(200);
    expect((await me.json()).data.user_id).toBe(creds.user_id);
  });

  it('accepts a JSON body and HTTP Basic client authentication', async () => {
    const viaJson = await token({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret });
    expect(viaJson.status).toBe(200);
    const basic = Buffer.from(`${creds.client_id}:${creds.client_secret}`).toString('base64');
    const viaBasic = await token(form({ grant_type: 'client_credentials' }), { authorization: `Basic ${basic}` });
    expect(viaBasic.status).toBe(200);
  });

  it('issues only the requested subset of scopes, and the token is refused outside them', async () => {
    const res = await token(
      form({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret, scope: 'channels:read' }),
    );
    const body = await res.json();
    expect(body.scope).toBe('channels:read');
    const auth = { authorization: `Bearer ${body.access_token}`, 'content-type': 'application/json' };
    expect((await t.request('/channel/v1/channels/me', { headers: auth })).status).toBe(200);
    const put = await t.request('/channel/v1/channels/me', { method: 'PUT', headers: auth, body: JSON.stringify({ name: 'X' }) });
    expect(put.status).toBe(403);
    expect((await put.json()).error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'channels:write' } });
  });

  const valid = () => ({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret });
  const cases: [string, () => string | Record<string, unknown>, Record<string, string>, number, string][] = [
    ['missing grant_type', () => { const { grant_type: _, ...rest } = valid(); return form(rest); }, {}, 400, 'invalid_request'],
    ['missing client_id', () => form({ grant_type: 'client_credentials', client_secret: 'x' }), {}, 400, 'invalid_request'],
    ['missing client_secret', () => form({ grant_type: 'client_credentials', client_id: creds.client_id }), {}, 400, 'invalid_request'],
    ['client_id sent twice', () => `${form(valid())}&client_id=other`, {}, 400, 'invalid_request'],
    ['malformed JSON', () => '{"grant_type": ', { 'content-type': 'application/json' }, 400, 'invalid_request'],
    ['a text/plain body', () => 'grant_type=client_credentials', { 'content-type': 'text/plain' }, 400, 'invalid_request'],
    ['client_id as a number', () => ({ ...valid(), client_id: 12 }), {}, 400, 'invalid_request'],
    ['grant_type=password', () => form({ ...valid(), grant_type: 'password' }), {}, 400, 'unsupported_grant_type'],
    ['grant_type=authorization_code', () => form({ ...valid(), grant_type: 'authorization_code' }), {}, 400, 'unsupported_grant_type'],
    ['a wrong secret', () => form({ ...valid(), client_secret: 'cs_wrong' }), {}, 401, 'invalid_client'],
    ['an unknown client_id', () => form({ ...valid(), client_id: 'app_unknown' }), {}, 401, 'invalid_client'],
    ['an unknown scope', () => form({ ...valid(), scope: 'channels:read admin:all' }), {}, 400, 'invalid_scope'],
    ['a scope the app lacks', () => form({ ...valid(), scope: 'reservations:write' }), {}, 400, 'invalid_scope'],
  ];
  it.each(cases)('refuses %s in RFC 6749 form', async (_name, body, headers, status, code) => {
    const res = await token(body(), headers);
    expect(res.status).toBe(status);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const payload = await res.json();
    expect(payload.error).toBe(code);
    expect(typeof payload.error_description).toBe('string');
    expect(payload).not.toHaveProperty('meta');
  });

  it('refuses a suspended app with invalid_client, and issues again after resume', async () => {
    const other = await t.channel();
    const body = form({ grant_type: 'client_credentials', client_id: other.client_id, client_secret: other.client_secret });
    const prisma = t.service.deps.db.prisma;
    await prisma.app.update({ where: { id: other.app_id }, data: { status: 'suspended' } });
    const refused = await token(body);
    expect(refused.status).toBe(401);
    expect((await refused.json()).error).toBe('invalid_client');
    await prisma.app.update({ where: { id: other.app_id }, data: { status: 'active' } });
    expect((await token(body)).status).toBe(200);
  });

  it('allows 20 requests per 60 s per address; the 21st gets 429 rate_limit_exceeded with Retry-After', async () => {
    const ip = uniqueIp();
    const body = form(valid());
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await token(body, {}, ip)).status);
    expect(statuses).toEqual(Array(20).fill(200));
    const limited = await token(body, {}, ip);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(await limited.json()).toMatchObject({ error: 'rate_limit_exceeded' });
    // Another address is not affected.
    expect((await token(body, {}, uniqueIp())).status).toBe(200);
  });

  it('counts failed attempts too, so secrets cannot be guessed quickly', async () => {
    const ip = uniqueIp();
    for (let i = 0; i < 20; i++) {
      expect((await token(form({ ...valid(), client_secret: `guess-${i}` }), {}, ip)).status).toBe(401);
    }
    expect((await token(form(valid()), {}, ip)).status).toBe(429);
  });

  it('an expired token is refused with 401 in the envelope', async () => {
    const res = await token(form(valid()));
    const { access_token } = await res.json();
    await t.service.deps.db.prisma.accessToken.updateMany({ data: { expiresAt: new Date(Date.now() - 1000) } });
    const me = await t.request('/channel/v1/channels/me', { headers: { authorization: `Bearer ${access_token}` } });
    expect(me.status).toBe(401);
    expect((await me.json()).error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/expired/) });
  });
});

/** POST /channel/v1/oauth/revoke from an address of its own unless the test names one. */
function revoke(body: string | Record<string, unknown>, headers: Record<string, string> = {}, ip = uniqueIp()) {
  const isForm = typeof body === 'string';
  return t.request('/channel/v1/oauth/revoke', {
    method: 'POST',
    ip,
    headers: { 'content-type': isForm ? 'application/x-www-form-urlencoded' : 'application/json', ...headers },
    body: isForm ? body : JSON.stringify(body),
  });
}

/** A fresh access token of `who`. */
async function mint(who: IssuedCredentials): Promise<string> {
  const res = await token(form({ grant_type: 'client_credentials', client_id: who.client_id, client_secret: who.client_secret }));
  expect(res.status).toBe(200);
  return (await res.json()).access_token;
}

const bearer = (accessToken: string) => ({ authorization: `Bearer ${accessToken}` });
const me = (accessToken: string) => t.request('/channel/v1/channels/me', { headers: bearer(accessToken) });

describe('POST /channel/v1/oauth/revoke (RFC 7009)', () => {
  const client = (who: IssuedCredentials = creds) => ({ client_id: who.client_id, client_secret: who.client_secret });

  it('revokes the client\'s own token: 200 with no content and no-store, then 401 on REST v1, v2 and GraphQL at once', async () => {
    const who = await t.channel({ name: 'Revoker' });
    const accessToken = await mint(who);
    // Used first on every surface, so the credential cache holds it: the revocation must drop it.
    expect((await me(accessToken)).status).toBe(200);
    expect((await t.request('/api/channel/v2/properties', { headers: bearer(accessToken) })).status).toBe(200);
    expect((await t.graphql('{ channel { userId } }', {}, bearer(accessToken))).data).toEqual({ channel: { userId: who.user_id } });

    const res = await revoke(form({ ...client(who), token: accessToken }));
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toBe('');

    const v1 = await me(accessToken);
    expect(v1.status).toBe(401);
    expect((await v1.json()).error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/revoked/) });
    const v2 = await t.request('/api/channel/v2/properties', { headers: bearer(accessToken) });
    expect(v2.status).toBe(401);
    expect((await v2.json()).error.code).toBe('UNAUTHORIZED');
    const gql = await t.graphql('{ channel { userId } }', {}, bearer(accessToken));
    expect(gql.data ?? null).toBeNull();
    expect(gql.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
    expect((await t.service.deps.db.prisma.accessToken.findMany({ where: { appId: who.app_id } })).map((r) => r.revokedAt)).toEqual([expect.any(Date)]);

    // Revoking it again, or a token that never existed, is the same 200 (§2.2).
    expect((await revoke(form({ ...client(who), token: accessToken }))).status).toBe(200);
    // The app's API key and its other tokens are untouched; new tokens can be minted.
    expect((await t.request('/channel/v1/channels/me', { headers: { 'x-api-key': who.api_key } })).status).toBe(200);
    expect((await me(await mint(who))).status).toBe(200);
  });

  it.each([
    ['an unknown oat_ token', 'oat_not-a-real-token'],
    ['garbage', 'garbage \u00e9\u0000 %zz'],
    ['a very long value', 'x'.repeat(10_000)],
  ])('answers 200 for %s and changes nothing', async (_name, value) => {
    const before = await t.service.deps.db.prisma.accessToken.count({ where: { revokedAt: { not: null } } });
    const res = await revoke(form({ ...client(), token: value }));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect(await t.service.deps.db.prisma.accessToken.count({ where: { revokedAt: { not: null } } })).toBe(before);
  });

  it("answers 200 for another client's token and leaves it working (the answer does not tell)", async () => {
    const victim = await t.channel({ name: 'Victim' });
    const theirs = await mint(victim);
    const unknown = await revoke(form({ ...client(), token: 'oat_never-issued' }));
    const foreign = await revoke(form({ ...client(), token: theirs }));
    expect(foreign.status).toBe(200);
    expect(await foreign.text()).toBe('');
    // The same answer as for a token that does not exist: status, body and headers but the limit count.
    const shape = (r: Response) => [r.status, r.headers.get('content-type'), r.headers.get('cache-control')];
    expect(shape(foreign)).toEqual(shape(unknown));
    expect((await me(theirs)).status).toBe(200);
    expect(await t.service.deps.db.prisma.accessToken.findFirstOrThrow({ where: { appId: victim.app_id } })).toMatchObject({ revokedAt: null });
  });

  it('takes a JSON body, HTTP Basic client authentication, and any token_type_hint (ignored)', async () => {
    const who = await t.channel({ name: 'Hinting' });
    const viaJson = await mint(who);
    expect((await revoke({ ...client(who), token: viaJson, token_type_hint: 'access_token' })).status).toBe(200);
    expect((await me(viaJson)).status).toBe(401);

    const basic = `Basic ${Buffer.from(`${who.client_id}:${who.client_secret}`).toString('base64')}`;
    const viaBasic = await mint(who);
    const res = await revoke(form({ token: viaBasic, token_type_hint: 'refresh_token' }), { authorization: basic });
    expect(res.status).toBe(200);
    expect((await me(viaBasic)).status).toBe(401);

    const unknownHint = await mint(who);
    expect((await revoke(form({ ...client(who), token: unknownHint, token_type_hint: 'something_else' }))).status).toBe(200);
    expect((await me(unknownHint)).status).toBe(401);
  });

  const revokeCases: [string, () => string | Record<string, unknown>, Record<string, string>, number, string][] = [
    ['a missing token', () => form(client()), {}, 400, 'invalid_request'],
    ['an empty token', () => form({ ...client(), token: '' }), {}, 400, 'invalid_request'],
    ['a token as a number', () => ({ ...client(), token: 12 }), {}, 400, 'invalid_request'],
    ['token sent twice', () => `${form({ ...client(), token: 'oat_a' })}&token=oat_b`, {}, 400, 'invalid_request'],
    ['malformed JSON', () => '{"token": ', { 'content-type': 'application/json' }, 400, 'invalid_request'],
    ['a text/plain body', () => 'token=oat_x', { 'content-type': 'text/plain' }, 400, 'invalid_request'],
    ['a missing client_secret', () => form({ client_id: creds.client_id, token: 'oat_x' }), {}, 400, 'invalid_request'],
    ['both client authentication methods', () => form({ ...client(), token: 'oat_x' }), { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, 400, 'invalid_request'],
    ['a wrong secret', () => form({ ...client(), client_secret: 'cs_wrong', token: 'oat_x' }), {}, 401, 'invalid_client'],
    ['an unknown client_id', () => form({ ...client(), client_id: 'app_unknown', token: 'oat_x' }), {}, 401, 'invalid_client'],
    ['malformed Basic credentials', () => form({ token: 'oat_x' }), { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` }, 401, 'invalid_client'],
    ['an API key', () => form({ ...client(), token: creds.api_key }), {}, 400, 'unsupported_token_type'],
  ];
  it.each(revokeCases)('refuses %s in RFC 6749 form', async (_name, body, headers, status, code) => {
    const res = await revoke(body(), headers);
    expect(res.status).toBe(status);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const payload = await res.json();
    expect(payload).toEqual({ error: code, error_description: expect.any(String) });
    // The API key sent for revocation is not revoked (the operator rotates keys).
    expect((await t.request('/channel/v1/channels/me', { headers: { 'x-api-key': creds.api_key } })).status).toBe(200);
  });

  it('a wrong secret revokes nothing, and a suspended app cannot revoke (invalid_client)', async () => {
    const who = await t.channel({ name: 'Guessed' });
    const accessToken = await mint(who);
    expect((await revoke(form({ ...client(who), client_secret: 'cs_guess', token: accessToken }))).status).toBe(401);
    expect((await me(accessToken)).status).toBe(200);
    await t.service.deps.db.prisma.app.update({ where: { id: who.app_id }, data: { status: 'suspended' } });
    const refused = await revoke(form({ ...client(who), token: accessToken }));
    expect(refused.status).toBe(401);
    expect((await refused.json()).error).toBe('invalid_client');
  });

  it("applies the app's IP allow list after client authentication, as the token endpoint does", async () => {
    const who = await t.channel({ name: 'Listed' });
    const inside = uniqueIp();
    const accessToken = await mint(who);
    await t.service.deps.db.prisma.app.update({ where: { id: who.app_id }, data: { ipAllowList: [inside] } });
    t.service.deps.credentials?.clear();
    const outside = await revoke(form({ ...client(who), token: accessToken }));
    expect(outside.status).toBe(403);
    expect(await outside.json()).toMatchObject({ error: 'access_denied' });
    // A wrong secret from outside is invalid_client: the list says nothing to an unproven client.
    expect((await revoke(form({ ...client(who), client_secret: 'cs_guess', token: accessToken }))).status).toBe(401);
    expect((await t.request('/channel/v1/channels/me', { headers: bearer(accessToken), ip: inside })).status).toBe(200);
    expect((await revoke(form({ ...client(who), token: accessToken }), {}, inside)).status).toBe(200);
    expect((await t.request('/channel/v1/channels/me', { headers: bearer(accessToken), ip: inside })).status).toBe(401);
  });

  it('shares the 20-per-60-s limit of the token endpoint per address: failed attempts count, the 21st is 429', async () => {
    const ip = uniqueIp();
    const tokenBody = form({ grant_type: 'client_credentials', ...client() });
    for (let i = 0; i < 10; i++) expect((await token(tokenBody, {}, ip)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await revoke(form({ ...client(), token: `oat_${i}` }), {}, ip)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await revoke(form({ ...client(), client_secret: `guess-${i}`, token: 'oat_x' }), {}, ip)).status).toBe(401);
    const limited = await revoke(form({ ...client(), token: 'oat_x' }), {}, ip);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('cache-control')).toBe('no-store');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(await limited.json()).toMatchObject({ error: 'rate_limit_exceeded' });
    expect((await token(tokenBody, {}, ip)).status).toBe(429);
    // Another address is not affected.
    expect((await revoke(form({ ...client(), token: 'oat_x' }))).status).toBe(200);
  });
});
