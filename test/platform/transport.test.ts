import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { createClient } from 'graphql-ws';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { day, v1 } from '../helpers/flow.js';
import { rawExchange } from '../helpers/http.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * The transport rules of issue 7 part 2, as a partner meets them: REQUIRE_HTTPS behind trusted
 * proxies, TLS served from certificate files, per-app IP allow lists, security headers, CORS, the
 * request deadline and the slow-client timeouts.
 */

const ME = '/channel/v1/channels/me';
/** A production configuration as loadConfig takes it (production needs its public origin). */
const PRODUCTION = { CHANNEL_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com' } as const;

const PROXY = '10.0.0.5';

async function envelope(res: Response): Promise<{ code: string; details: Record<string, unknown> | null }> {
  const body = (await res.json()) as { error: { code: string; message: string; details: Record<string, unknown> | null }; meta: { request_id: string } };
  expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
  expect(typeof body.error.message).toBe('string');
  return body.error;
}

async function setAllowList(t: TestService, creds: IssuedCredentials, list: string[]): Promise<void> {
  await t.service.deps.db.prisma.app.update({ where: { id: creds.app_id }, data: { ipAllowList: list } });
  t.service.deps.credentials?.clear();
}

describe('REQUIRE_HTTPS', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  beforeAll(async () => {
    t = await startTestService({ REQUIRE_HTTPS: 'true', TRUSTED_PROXIES: `${PROXY},10.1.0.0/16` });
    creds = await t.channel({ name: 'Transport' });
  });
  afterAll(() => t.close());

  it('is on by default in production only', () => {
    expect(loadConfig({ ...PRODUCTION }).transport.requireHttps).toBe(true);
    expect(loadConfig({}).transport.requireHttps).toBe(false);
    expect(loadConfig({ ...PRODUCTION, REQUIRE_HTTPS: 'false' }).transport.requireHttps).toBe(false);
  });

  it('refuses plain HTTP with 403 HTTPS_REQUIRED in the envelope, before the credential is looked at or charged', async () => {
    const res = await t.request(ME, { headers: apiKey(creds), ip: '203.0.113.9' });
    expect(res.status).toBe(403);
    expect((await envelope(res)).code).toBe('HTTPS_REQUIRED');
    expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
    expect(res.headers.get('strict-transport-security')).toBeNull();
    // GraphQL and the token endpoint too.
    const gql = await t.request('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...apiKey(creds) }, body: '{"query":"{ channel { name } }"}' });
    expect(gql.status).toBe(403);
    expect((await envelope(gql)).code).toBe('HTTPS_REQUIRED');
    const token = await t.request('/channel/v1/oauth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(token.status).toBe(403);
  });

  it('believes X-Forwarded-Proto only from a trusted proxy, and only its own (last) value', async () => {
    const viaProxy = (ip: string, proto: string) =>
      t.request(ME, { headers: { ...apiKey(creds), 'x-forwarded-proto': proto, 'x-forwarded-for': '198.51.100.20' }, ip });
    const ok = await viaProxy(PROXY, 'https');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
    expect((await viaProxy('10.1.44.3', 'https')).status).toBe(200);
    // A client claiming https itself, or a chain whose nearest hop was plain.
    expect((await viaProxy('198.51.100.20', 'https')).status).toBe(403);
    expect((await viaProxy(PROXY, 'https, http')).status).toBe(403);
    expect((await viaProxy(PROXY, 'http')).status).toBe(403);
  });

  it('refuses a plain graphql-ws upgrade with 403 HTTPS_REQUIRED in the envelope', async () => {
    const port = await t.service.listen(0);
    const answer = await rawExchange(
      port,
      'GET /graphql HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string }; meta: { request_id: string } };
    expect(body.error.code).toBe('HTTPS_REQUIRED');
    expect(body.meta.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('accepts a TLS socket', async () => {
    const res = await t.service.fetch(new Request(`https://channel.test${ME}`, { headers: apiKey(creds) }), {
      incoming: { socket: { remoteAddress: '203.0.113.9', encrypted: true } },
    });
    expect(res.status).toBe(200);
  });

  it('leaves the health routes to plain probes, and the operator routes to loopback', async () => {
    expect((await t.request('/healthz', { ip: '10.9.9.9' })).status).toBe(200);
    expect((await t.request('/readyz', { ip: '10.9.9.9' })).status).toBe(200);
    // From loopback the operator route is reached (and refuses the missing operator token).
    const local = await t.request('/admin/v1/channels', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', ip: '127.0.0.1' });
    expect(local.status).toBe(401);
    const remote = await t.request('/admin/v1/channels', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', ip: '203.0.113.9' });
    expect(remote.status).toBe(403);
    expect((await envelope(remote)).code).toBe('HTTPS_REQUIRED');
  });
});

describe('IP allow lists', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  let other: IssuedCredentials;
  beforeAll(async () => {
    t = await startTestService({ TRUSTED_PROXIES: PROXY });
    [creds, other] = await Promise.all([t.channel({ name: 'Listed' }), t.channel({ name: 'Unlisted' })]);
    await setAllowList(t, creds, ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32']);
  });
  afterAll(() => t.close());

  it('accepts addresses and ranges in the list, IPv4-mapped IPv6 included', async () => {
    for (const ip of ['203.0.113.7', '198.51.100.200', '::ffff:203.0.113.7', '2001:db8::1']) {
      expect((await t.request(ME, { headers: apiKey(creds), ip })).status, ip).toBe(200);
    }
  });

  it('refuses any other address with 403 IP_NOT_ALLOWED naming it, uncharged, for keys and tokens', async () => {
    const res = await t.request(ME, { headers: apiKey(creds), ip: '203.0.113.8' });
    expect(res.status).toBe(403);
    const error = await envelope(res);
    expect(error).toMatchObject({ code: 'IP_NOT_ALLOWED', details: { client_ip: '203.0.113.8' } });
    expect(res.headers.get('x-ratelimit-remaining')).toBeNull();

    const issued = await t.request('/channel/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret }),
      ip: '203.0.113.7',
    });
    const { access_token } = (await issued.json()) as { access_token: string };
    // The token endpoint itself refuses the client from outside the list (OAuth form), after its secret.
    const tokenRequest = (ip: string, secret = creds.client_secret) =>
      t.request('/channel/v1/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: secret }),
        ip,
      });
    const outside = await tokenRequest('192.0.2.77');
    expect(outside.status).toBe(403);
    expect(await outside.json()).toEqual({ error: 'access_denied', error_description: 'Requests of this app are not accepted from 192.0.2.77' });
    expect((await tokenRequest('192.0.2.78', 'wrong')).status).toBe(401);
    const bearer = { authorization: `Bearer ${access_token}` };
    expect((await t.request(ME, { headers: bearer, ip: '203.0.113.7' })).status).toBe(200);
    const refused = await t.request(ME, { headers: bearer, ip: '192.0.2.1' });
    expect(refused.status).toBe(403);
    expect((await envelope(refused)).code).toBe('IP_NOT_ALLOWED');
    // v2 as well; an app without a list is not affected.
    const v2 = await t.request('/api/channel/v2/properties', { headers: apiKey(creds), ip: '192.0.2.1' });
    expect(v2.status).toBe(403);
    expect((await t.request(ME, { headers: apiKey(other), ip: '192.0.2.1' })).status).toBe(200);
  });

  it('uses the address behind a trusted proxy, never one a client forwards itself', async () => {
    const viaProxy = await t.request(ME, { headers: { ...apiKey(creds), 'x-forwarded-for': '203.0.113.7' }, ip: PROXY });
    expect(viaProxy.status).toBe(200);
    const spoofed = await t.request(ME, { headers: { ...apiKey(creds), 'x-forwarded-for': '203.0.113.7' }, ip: '192.0.2.50' });
    expect(spoofed.status).toBe(403);
    expect((await envelope(spoofed)).details).toEqual({ client_ip: '192.0.2.50' });
  });

  it('reads a forwarded address that carries a port (as some load balancers send it)', async () => {
    for (const forwarded of ['203.0.113.7:51234', '[::ffff:203.0.113.7]:443', '198.51.100.9:1, 203.0.113.7:8080']) {
      const res = await t.request(ME, { headers: { ...apiKey(creds), 'x-forwarded-for': forwarded }, ip: PROXY });
      expect(res.status, forwarded).toBe(200);
    }
    const outside = await t.request(ME, { headers: { ...apiKey(creds), 'x-forwarded-for': '192.0.2.9:443' }, ip: PROXY });
    expect((await envelope(outside)).details).toEqual({ client_ip: '192.0.2.9' });
  });

  it('TRUSTED_PROXIES takes only addresses and ranges, in canonical form', () => {
    expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.5, 10.1.0.0/16, ::ffff:10.2.0.0/112' }).trustedProxies).toEqual(['10.0.0.5', '10.1.0.0/16', '10.2.0.0/16']);
    for (const bad of ['10.0.0.5/8', 'proxy.internal', '0.0.0.0/0', '127.1']) {
      expect(() => loadConfig({ TRUSTED_PROXIES: bad }), bad).toThrow(/TRUSTED_PROXIES/);
    }
  });

  it('refuses GraphQL fields with IP_NOT_ALLOWED', async () => {
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...apiKey(creds) },
      body: JSON.stringify({ query: '{ channel { name } }' }),
      ip: '192.0.2.1',
    });
    const body = (await res.json()) as { data: unknown; errors: { extensions: { code: string } }[] };
    expect(body.data).toBeNull();
    expect(body.errors[0]!.extensions.code).toBe('IP_NOT_ALLOWED');
  });

  it('closes a graphql-ws connection from outside the list with 4403 IP_NOT_ALLOWED and admits one from inside', async () => {
    const port = await t.service.listen(0);
    const attempt = (params: Record<string, string>) =>
      new Promise<{ code?: number; reason?: string; data?: unknown }>((resolve) => {
        const client = createClient({ url: `ws://127.0.0.1:${port}/graphql`, webSocketImpl: WebSocket, connectionParams: params, retryAttempts: 0 });
        client.subscribe(
          { query: '{ channel { name } }' },
          {
            next: (result) => resolve({ data: result.data }),
            error: (error) => resolve({ code: (error as { code?: number }).code, reason: (error as { reason?: string }).reason }),
            complete: () => void client.dispose(),
          },
        );
      });
    await setAllowList(t, creds, ['203.0.113.7']);
    expect(await attempt(apiKey(creds))).toEqual({ code: 4403, reason: expect.stringMatching(/^IP_NOT_ALLOWED: Requests of this app are not accepted from \S*127\.0\.0\.1$/) });
    await setAllowList(t, creds, ['127.0.0.0/8', '::1']);
    expect(await attempt(apiKey(creds))).toEqual({ data: { channel: { name: 'Listed' } } });
    await setAllowList(t, creds, ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32']);
  });
});

describe('security headers', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  beforeAll(async () => {
    t = await startTestService();
    creds = await t.channel({ name: 'Headers' });
  });
  afterAll(() => t.close());

  it('API answers, refusals included, forbid sniffing, framing and any active content', async () => {
    for (const res of [await t.request(ME, { headers: apiKey(creds) }), await t.request(ME), await t.request('/nowhere')]) {
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-powered-by')).toBeNull();
      // Plain HTTP never carries HSTS (a browser would ignore it, and a test host would be pinned).
      expect(res.headers.get('strict-transport-security')).toBeNull();
    }
  });

  it('the docs page may load only its own assets; GraphiQL nothing at all, and runs only its own inline script', async () => {
    const docs = await t.request('/channel/v1/docs');
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    const docsCsp = docs.headers.get('content-security-policy')!;
    expect(docsCsp).toContain("default-src 'self'");
    expect(docsCsp).not.toContain('unpkg');
    expect(docsCsp).toContain("frame-ancestors 'none'");
    const graphiql = await t.request('/graphql', { headers: { accept: 'text/html' } });
    expect(graphiql.status).toBe(200);
    const csp = graphiql.headers.get('content-security-policy')!;
    expect(csp).toMatch(
      /^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]{43}='; style-src 'unsafe-inline'; img-src data:; font-src data:; worker-src blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/,
    );
    expect(csp).not.toMatch(/unpkg|https:|unsafe-eval/);
    // The page loads no script: its one inline script is the one the policy names by digest.
    const html = await graphiql.text();
    expect(html).not.toMatch(/<script[^>]*\ssrc=|<link[^>]*\shref="(?!data:)/);
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(1);
    expect(csp).toContain(`script-src 'sha256-${createHash('sha256').update(scripts[0]!).digest('base64')}'`);
    // The same policy, header for header, on every load (computed once, at start).
    const again = await t.request('/graphql', { headers: { accept: 'text/html' } });
    expect(again.headers.get('content-security-policy')).toBe(csp);
    await again.body?.cancel();
  });
});

describe('CORS', () => {
  let sandbox: TestService;
  let production: TestService;
  let listed: TestService;
  let creds: IssuedCredentials;
  beforeAll(async () => {
    [sandbox, production, listed] = await Promise.all([
      startTestService(),
      startTestService({ CHANNEL_ENV: 'production' }),
      startTestService({ CORS_ORIGINS: 'https://app.example.com, https://ota.example:8443' }),
    ]);
    creds = await sandbox.channel({ name: 'Browser' });
  });
  afterAll(() => Promise.all([sandbox.close(), production.close(), listed.close()]));

  const preflight = (t: TestService, path: string, origin: string) =>
    t.request(path, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-api-key, idempotency-key' },
    });

  it('the sandbox answers any origin: preflights without a credential, answers and refusals readable', async () => {
    for (const path of ['/channel/v1/bookings', '/graphql', '/api/channel/v2/bookings']) {
      const res = await preflight(sandbox, path, 'https://partner.example');
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-headers')!.toLowerCase()).toContain('x-api-key');
      expect(res.headers.get('access-control-allow-headers')!.toLowerCase()).toContain('idempotency-key');
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-max-age')).toBe('600');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
    const answer = await sandbox.request(ME, { headers: { origin: 'https://partner.example', ...apiKey(creds) } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-expose-headers')!.toLowerCase()).toContain('x-ratelimit-remaining');
    const refused = await sandbox.request(ME, { headers: { origin: 'https://partner.example' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    // GraphQL through the browser: Yoga's own CORS is off, so one set of headers answers.
    const gql = await sandbox.request('/graphql', {
      method: 'POST',
      headers: { origin: 'https://partner.example', 'content-type': 'application/json', ...apiKey(creds) },
      body: '{"query":"{ channel { name } }"}',
    });
    expect(gql.status).toBe(200);
    expect(gql.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('production allows no origin unless CORS_ORIGINS names it', async () => {
    const res = await preflight(production, '/channel/v1/bookings', 'https://partner.example');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.status).not.toBe(204);
    const allowed = await preflight(listed, '/channel/v1/bookings', 'https://ota.example:8443');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://ota.example:8443');
    expect(allowed.headers.get('vary')).toContain('Origin');
    const other = await listed.request(ME, { headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('CORS_ORIGINS accepts only origins or *', () => {
    expect(() => loadConfig({ CORS_ORIGINS: 'https://app.example.com/path' })).toThrow(ConfigError);
    expect(() => loadConfig({ CORS_ORIGINS: 'app.example.com' })).toThrow(ConfigError);
    expect(loadConfig({ CORS_ORIGINS: '*' }).transport.corsOrigins).toEqual(['*']);
    expect(loadConfig({ ...PRODUCTION }).transport.corsOrigins).toEqual([]);
  });
});

describe('request deadline and slow clients', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  beforeAll(async () => {
    t = await startTestService({ REQUEST_TIMEOUT_MS: '300', HTTP_HEADERS_TIMEOUT_MS: '500', HTTP_REQUEST_TIMEOUT_MS: '1000' });
    creds = await t.channel({ name: 'Slow' });
  });
  afterAll(() => t.close());

  it('an answer not ready by REQUEST_TIMEOUT_MS is 504 REQUEST_TIMEOUT in the envelope', async () => {
    const started = performance.now();
    const res = await t.request(`/channel/v1/search/availability/1?checkin=${day(30)}&checkout=${day(31)}&adults=2`, {
      headers: { ...apiKey(creds), 'x-test-scenario': 'upstream_timeout' },
    });
    const elapsed = performance.now() - started;
    expect(res.status).toBe(504);
    expect(await envelope(res)).toMatchObject({ code: 'REQUEST_TIMEOUT', details: { timeout_ms: 300 } });
    expect(elapsed).toBeLessThan(3_000);
    // A quick route on the same instance is unaffected.
    expect((await t.request(ME, { headers: apiKey(creds) })).status).toBe(200);
  });

  it('GraphQL has the deadline whatever its headers: a POST /graphql with an Idempotency-Key is 504 REQUEST_TIMEOUT', async () => {
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { ...apiKey(creds), 'content-type': 'application/json', 'idempotency-key': 'no-exemption-1', 'x-test-scenario': 'upstream_timeout' },
      body: JSON.stringify({ query: '{ property(id: "1") { name } }' }),
    });
    expect(res.status).toBe(504);
    expect(await res.text()).toContain('REQUEST_TIMEOUT');
  });

  it('a write with an Idempotency-Key is never cut off, so its retry replays instead of booking twice', async () => {
    const flow = v1(t, creds);
    const upstream = t.service.deps.upstream;
    const book = upstream.book.bind(upstream);
    // The provider is slow on bookings (its deadline is 20 s): the answer comes after the 300 ms deadline.
    upstream.book = async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, 600));
      return book(...args);
    };
    try {
      const offer = await flow.offer();
      const body = JSON.stringify({ book_token: offer.bookToken, booker_name: 'Slow Provider' });
      const post = (headers: Record<string, string>) =>
        t.request('/channel/v1/bookings', { method: 'POST', headers: { ...apiKey(creds), 'content-type': 'application/json', ...headers }, body });
      const first = await post({ 'idempotency-key': 'slow-booking-1' });
      expect(first.status).toBe(201);
      const { data } = (await first.json()) as { data: { id: string } };
      const retry = await post({ 'idempotency-key': 'slow-booking-1' });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      const bookings = await t.service.deps.db.prisma.booking.findMany({ where: { channelId: creds.user_id } });
      expect(bookings.map((b) => b.id)).toEqual([data.id]);

      // Without a key the deadline applies: 504 at once, while the booking still completes.
      const second = await flow.offer({ from: offer.propertyId + 1 });
      const cut = await t.request('/channel/v1/bookings', {
        method: 'POST',
        headers: { ...apiKey(creds), 'content-type': 'application/json' },
        body: JSON.stringify({ book_token: second.bookToken, booker_name: 'No Key' }),
      });
      expect(cut.status).toBe(504);
      expect((await envelope(cut)).code).toBe('REQUEST_TIMEOUT');
      await expect.poll(async () => t.service.deps.db.prisma.booking.count({ where: { channelId: creds.user_id, status: 'confirmed' } }), { timeout: 5_000 }).toBe(2);
    } finally {
      upstream.book = book;
    }
  });

  it('a client that does not finish its headers gets 408 and the connection closed', async () => {
    const port = await t.service.listen(0);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = netConnect(port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: '));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      setTimeout(() => reject(new Error(`still open after 5 s: ${text}`)), 5_000).unref();
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });
});

describe('TLS from certificate files', () => {
  let dir: string;
  let t: TestService;
  let creds: IssuedCredentials;
  let port: number;

  function makeCertificate(name: string): { cert: string; key: string } {
    const cert = join(dir, `${name}.crt`);
    const key = join(dir, `${name}.key`);
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', cert], { stdio: 'ignore' });
    return { cert, key };
  }

  function peerCertificateName(): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
        resolve(socket.getPeerCertificate().subject.CN as string);
        socket.end();
      });
      socket.on('error', reject);
    });
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'channel-tls-'));
    const first = makeCertificate('first');
    makeCertificate('second');
    // Names the live files so a renewal can replace them in place.
    execFileSync('cp', [first.cert, join(dir, 'live.crt')]);
    execFileSync('cp', [first.key, join(dir, 'live.key')]);
    t = await startTestService({ REQUIRE_HTTPS: 'true', TLS_CERT_FILE: join(dir, 'live.crt'), TLS_KEY_FILE: join(dir, 'live.key') });
    creds = await t.channel({ name: 'TLS' });
    port = await t.service.listen(0);
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS with the files, passes REQUIRE_HTTPS, sends HSTS; plain HTTP on that port gets no answer', async () => {
    const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
    try {
      const res = await undiciFetch(`https://127.0.0.1:${port}${ME}`, { headers: apiKey(creds), dispatcher });
      expect(res.status).toBe(200);
      expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
      expect(((await res.json()) as { data: { name: string } }).data.name).toBe('TLS');
    } finally {
      await dispatcher.close();
    }
    await expect(fetch(`http://127.0.0.1:${port}${ME}`, { headers: apiKey(creds) })).rejects.toThrow();
    expect(await peerCertificateName()).toBe('first');
  });

  it('takes a renewed certificate on reloadTls (SIGHUP) for new connections', async () => {
    execFileSync('cp', [join(dir, 'second.crt'), join(dir, 'live.crt')]);
    execFileSync('cp', [join(dir, 'second.key'), join(dir, 'live.key')]);
    expect(await peerCertificateName()).toBe('first');
    t.service.reloadTls();
    expect(await peerCertificateName()).toBe('second');
  });

  it('refuses a config with only one of the two files', () => {
    expect(() => loadConfig({ TLS_CERT_FILE: '/x.crt' })).toThrow(/TLS_CERT_FILE, TLS_KEY_FILE/);
  });
});
