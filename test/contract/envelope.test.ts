import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
let creds: IssuedCredentials;

beforeAll(async () => {
  t = await startTestService();
  creds = await t.channel();
});
afterAll(() => t.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids and envelopes (spec §2.1, DECISIONS.md)', () => {
  it('gives every response an X-Request-Id equal to meta.request_id', async () => {
    const res = await t.request('/channel/v1/channels/me', { headers: apiKey(creds) });
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(UUID);
    expect((await res.json()).meta.request_id).toBe(id);
  });

  it('keeps a client request id that is a UUID', async () => {
    const mine = '0b3a4c1e-8d2f-4a6b-9c7d-1e2f3a4b5c6d';
    const res = await t.request('/channel/v1/channels/me', { headers: { ...apiKey(creds), 'x-request-id': mine } });
    expect(res.headers.get('x-request-id')).toBe(mine);
    expect((await res.json()).meta.request_id).toBe(mine);
  });

  it('replaces a client request id that is not a UUID', async () => {
    const res = await t.request('/channel/v1/channels/me', { headers: { ...apiKey(creds), 'x-request-id': 'abc"<script>' } });
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(UUID);
    expect(id).not.toBe('abc"<script>');
  });

  it.each(['/channel/v1/no-such-thing', '/api/channel/v2/nothing', '/elsewhere'])('answers an unknown route %s with 404 NOT_FOUND in the envelope', async (path) => {
    const res = await t.request(path, { headers: apiKey(creds) });
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body).toEqual({
      error: { code: 'NOT_FOUND', message: expect.any(String), details: null },
      meta: { request_id: res.headers.get('x-request-id'), timestamp: expect.any(String) },
    });
  });

  it('serves the OpenAPI 3.1 document of v1 without a credential', async () => {
    const res = await t.request('/channel/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/oauth/token', '/channels/me']));
    expect(doc.paths['/channels/me'].get.security).toEqual([{ ApiKeyAuth: [] }, { OAuth2: ['channels:read'] }]);
    expect(doc.paths['/channels/me'].put.security).toEqual([{ ApiKeyAuth: [] }, { OAuth2: ['channels:write'] }]);
    expect(doc.components.securitySchemes.OAuth2.flows.clientCredentials.tokenUrl).toBe('/channel/v1/oauth/token');
  });
});

describe('a server fault', () => {
  it('is a masked 500 INTERNAL_ERROR with the request id and nothing else', async () => {
    const broken = await startTestService();
    const key = await broken.channel();
    // A table goes away under the running service: every credential lookup now fails.
    await broken.service.deps.db.runScript('DROP TABLE "api_keys" CASCADE');
    const res = await broken.request('/channel/v1/channels/me', { headers: apiKey(key) });
    expect(res.status).toBe(500);
    const text = await res.text();
    const body = JSON.parse(text);
    expect(body).toEqual({
      error: { code: 'INTERNAL_ERROR', message: 'An internal error occurred; quote the request id to support', details: null },
      meta: { request_id: res.headers.get('x-request-id'), timestamp: expect.any(String) },
    });
    expect(text).not.toMatch(/prisma|pglite|postgres|stack|at /i);

    const gql = await broken.graphql('{ channel { userId } }', {}, apiKey(key));
    expect(gql.errors?.[0]).toMatchObject({ message: 'An internal error occurred; quote the request id to support', extensions: { code: 'INTERNAL_ERROR' } });

    // The database goes away altogether: not ready.
    await broken.service.deps.db.close();
    const ready = await broken.request('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'not_ready', checks: { database: 'failing' } });
    await broken.close().catch(() => {});
  });
});

describe('health', () => {
  it('/healthz and /readyz answer without a credential', async () => {
    const live = await t.request('/healthz');
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    const ready = await t.request('/readyz');
    expect(ready.status).toBe(200);
    const body = await ready.json();
    expect(body.status).toBe('ready');
    expect(body.checks.database).toBe('ok');
    if (t.config.redisUrl) expect(body.checks.redis).toBe('ok');
  });
});

describe('shutting down', () => {
  it('refuses new requests with 503 SERVICE_UNAVAILABLE in the envelope', async () => {
    const closing = await startTestService();
    const key = await closing.channel();
    await closing.close();
    const res = await closing.request('/channel/v1/channels/me', { headers: apiKey(key) });
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
    const ready = await closing.request('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'not_ready', shutting_down: true });
  });
});
