import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { expectError, rawExchange } from '../helpers/http.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * What opens to loopback (the operator API, /metrics, the HTTPS rule's exception for them) opens
 * only to a caller on this host that is not a proxy: a same-host proxy that forwards no address
 * is not the operator. And production's links never come from a request's Host: PUBLIC_BASE_URL
 * is needed to start.
 */

const PROXY = '127.0.0.1';
const ORIGIN = 'https://api.example.com';

describe('behind a proxy on this host (TRUSTED_PROXIES=127.0.0.1), production, plain HTTP', () => {
  let t: TestService;
  const operatorPost = (ip: string, headers: Record<string, string> = {}) =>
    t.request('/admin/v1/channels', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}', ip });
  beforeAll(async () => {
    t = await startTestService({ CHANNEL_ENV: 'production', REQUIRE_HTTPS: 'true', TRUSTED_PROXIES: PROXY });
  });
  afterAll(() => t.close());

  it('the proxy sending no X-Forwarded-For gets the HTTPS rule, not the loopback exception', async () => {
    await expectError(await operatorPost(PROXY), 403, 'HTTPS_REQUIRED');
    await expectError(await t.request('/metrics', { ip: PROXY }), 403, 'HTTPS_REQUIRED');
    // A forwarded loopback address is the proxy's word, not a local caller.
    await expectError(await operatorPost(PROXY, { 'x-forwarded-for': '127.0.0.1' }), 403, 'HTTPS_REQUIRED');
  });

  it('over HTTPS through the proxy the operator API is still remote: 403 naming ADMIN_ALLOW_REMOTE, token or not', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    const error = await expectError(await operatorPost(PROXY, https), 403, 'FORBIDDEN');
    expect(error.message).toMatch(/ADMIN_ALLOW_REMOTE/);
    const withToken = await operatorPost(PROXY, { ...https, authorization: `Bearer ${t.service.adminToken.token}` });
    expect(withToken.status).toBe(403);
    expect((await t.request('/metrics', { ip: PROXY, headers: https })).status).toBe(403);
  });

  it('a process on this host that is not the proxy is local: the operator API asks for its token, /metrics answers', async () => {
    await expectError(await operatorPost('127.0.0.3'), 401, 'UNAUTHORIZED');
    // With the token it reaches the route itself, whose body check answers.
    await expectError(await operatorPost('::1', { authorization: `Bearer ${t.service.adminToken.token}` }), 400, 'VALIDATION_ERROR');
    expect((await t.request('/metrics', { ip: '127.0.0.3' })).status).toBe(200);
  });
});

describe('without TRUSTED_PROXIES', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.close());

  it('every loopback caller is local, and a forwarded address is not believed', async () => {
    expect((await t.request('/metrics', { ip: '127.0.0.1' })).status).toBe(200);
    expect((await t.request('/metrics', { ip: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(200);
    const remote = await t.request('/metrics', { ip: '203.0.113.9', headers: { 'x-forwarded-for': '127.0.0.1' } });
    expect(remote.status).toBe(403);
  });
});

describe('PUBLIC_BASE_URL in production', () => {
  it('is needed to start: a ConfigError naming it, and npm start exits 2 saying so', async () => {
    expect(() => loadConfig({ CHANNEL_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadConfig({ CHANNEL_ENV: 'production' })).toThrow(/PUBLIC_BASE_URL: needed with CHANNEL_ENV=production/);
    expect(loadConfig({ CHANNEL_ENV: 'production', PUBLIC_BASE_URL: `${ORIGIN}/ignored/path` }).publicBaseUrl).toBe(ORIGIN);
    expect(loadConfig({}).publicBaseUrl).toBeUndefined();
    const dataDir = mkdtempSync(join(tmpdir(), 'channel-no-origin-'));
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', CHANNEL_ENV: 'production' },
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += String(d)));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(2);
      expect(stderr).toContain('PUBLIC_BASE_URL');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  describe('a running production service', () => {
    let t: TestService;
    let who: IssuedCredentials;
    let port: number;
    beforeAll(async () => {
      t = await startTestService({ CHANNEL_ENV: 'production', PUBLIC_BASE_URL: ORIGIN, TRUSTED_PROXIES: PROXY });
      who = await t.channel();
      port = await t.service.listen(0);
    });
    afterAll(() => t.close());

    it('hands out image links on PUBLIC_BASE_URL whatever Host or a proxy says', async () => {
      const body = JSON.stringify({ query: '{ property(id: "1") { heroImage { links { href } } } }' });
      for (const headers of [
        'Host: attacker.example',
        'Host: attacker.example\r\nX-Forwarded-Host: attacker.example\r\nX-Forwarded-Proto: http',
      ]) {
        const answer = await rawExchange(
          port,
          `POST /graphql HTTP/1.1\r\n${headers}\r\nX-Api-Key: ${who.api_key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        expect(answer).toMatch(/^HTTP\/1\.1 200 /);
        const json = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { data: { property: { heroImage: { links: { href: string }[] } } } };
        const links = json.data.property.heroImage.links.map((l) => l.href);
        expect(links.length).toBeGreaterThan(0);
        for (const href of links) expect(href.startsWith(`${ORIGIN}/images/1/`), href).toBe(true);
        expect(answer).not.toContain('attacker.example');
      }
      // REST too.
      const rest = await t.request('/channel/v1/properties/1', { headers: apiKey(who) });
      expect(rest.status).toBe(200);
      expect(await rest.text()).toContain(`${ORIGIN}/images/1/`);
    });
  });
});
