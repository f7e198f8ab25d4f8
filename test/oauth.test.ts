import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../src/services/operator.js';
import { startTestService, uniqueIp, type TestService } from './helpers/service.js';

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
