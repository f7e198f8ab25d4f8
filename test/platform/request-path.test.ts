import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routedPath } from '../../rest-adapters/requestPath.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { rawExchange } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The front's path rules (the HTTPS rule and its exception for operator routes from loopback,
 * the GraphQL endpoint, health) read the path as the router reads it: dot segments resolved
 * (plain or percent-encoded), percent-encodings decoded; a target the router refuses is 400. Sent over a raw
 * socket: a client library would remove the dot segments itself.
 */

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/** One request written byte for byte on a fresh socket from loopback, and its whole answer. */
async function raw(port: number, lines: string): Promise<RawAnswer> {
  const text = await rawExchange(port, lines);
  const split = text.indexOf('\r\n\r\n');
  return { status: Number(text.slice(9, 12)), headers: text.slice(0, split), body: text.slice(split + 4) };
}

function get(port: number, target: string, key?: string): Promise<RawAnswer> {
  return raw(port, `GET ${target} HTTP/1.1\r\nHost: channel.test\r\n${key ? `X-Api-Key: ${key}\r\n` : ''}Connection: close\r\n\r\n`);
}

function operatorPost(port: number, target: string): Promise<RawAnswer> {
  return raw(port, `POST ${target} HTTP/1.1\r\nHost: channel.test\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
}

function codeOf(answer: RawAnswer): string {
  const body = JSON.parse(answer.body) as { error: { code: string; message: string }; meta: { request_id: string } };
  expect(body.meta.request_id).toMatch(/^[0-9a-f-]{36}$/);
  return body.error.code;
}

const ME = '/channel/v1/channels/me';

describe('request paths under REQUIRE_HTTPS, from loopback over plain HTTP', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  let port: number;
  beforeAll(async () => {
    t = await startTestService({ REQUIRE_HTTPS: 'true' });
    creds = await t.channel({ name: 'Paths' });
    port = await t.service.listen(0);
  });
  afterAll(() => t.close());

  it('a partner route reached through the operator prefix gets the HTTPS rule, not a 200', async () => {
    for (const target of [
      ME,
      '/admin/../channel/v1/channels/me',
      '/admin/%2e%2e/channel/v1/channels/me',
      '/admin/%2E%2E/channel/v1/channels/me',
      '/admin/.%2e/channel/v1/channels/me',
      '/admin/./../channel/v1/channels/me',
      '/metrics/../channel/v1/channels/me',
      '/%63hannel/v1/channels/%6De',
      'http://channel.test/admin/../channel/v1/channels/me',
      // An absolute-form target with an empty authority: the WHATWG parser takes `admin` for the host.
      'http:///admin/channel/v1/channels/me',
      'https:///admin/channel/v1/channels/me',
      'http://metrics/channel/v1/channels/me',
    ]) {
      const answer = await get(port, target, creds.api_key);
      expect(answer.status, target).toBe(403);
      expect(codeOf(answer), target).toBe('HTTPS_REQUIRED');
      expect(answer.body).not.toContain('"channel_id"');
    }
  });

  it('a target the router refuses (a backslash in the path, no path) is 400 in the envelope before any rule', async () => {
    for (const target of ['/admin\\..\\channel/v1/channels/me', '/admin/v1\\channels', 'HTTP://x/admin/v1/channels', '*']) {
      const answer = await get(port, target, creds.api_key);
      expect(answer.status, target).toBe(400);
      expect(codeOf(answer), target).toBe('VALIDATION_ERROR');
      expect(JSON.parse(answer.body).error.details.fields[0].field, target).toBe('(path)');
    }
    // A backslash in the query is the query's.
    const query = await get(port, `${ME}?note=a\\b`, creds.api_key);
    expect(codeOf(query)).toBe('HTTPS_REQUIRED');
  });

  it('the operator route in any spelling is the operator route: reached from loopback, asking for its token', async () => {
    for (const target of ['/admin/v1/channels', '/%61dmin/v1/channels', '/admin/v1/%63hannels', '/channel/../admin/v1/channels', 'http://channel.test/admin/v1/channels']) {
      const answer = await operatorPost(port, target);
      expect(answer.status, target).toBe(401);
      expect(codeOf(answer), target).toBe('UNAUTHORIZED');
    }
    // A path the router matches to no operator route is not under the exception either.
    const elsewhere = await operatorPost(port, '/admin/v1/../../channel/v1/bookings');
    expect(elsewhere.status).toBe(403);
    expect(codeOf(elsewhere)).toBe('HTTPS_REQUIRED');
  });

  it('a graphql-ws upgrade is refused by the same rules in any spelling of /graphql', async () => {
    const upgrade = (target: string) =>
      raw(
        port,
        `GET ${target} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`,
      );
    for (const target of ['/graphql', '/x/../graphql', '/%67raphql', 'http:///graphql/../graphql']) expect((await upgrade(target)).status, target).toBe(403);
    for (const target of ['/graphql%2f', '/x\\..\\graphql', 'http:///graphql']) expect((await upgrade(target)).status, target).toBe(404);
  });
});

describe('request paths of an open sandbox', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  let port: number;
  beforeAll(async () => {
    t = await startTestService();
    creds = await t.channel({ name: 'Open paths' });
    port = await t.service.listen(0);
  });
  afterAll(() => t.close());

  it('each spelling answers as the route it names; an encoded character in an id reaches the route', async () => {
    for (const target of [ME, '/channel/v1/../v1/channels/me', '/channel/v1/%63hannels/me']) {
      const me = await get(port, target, creds.api_key);
      expect(me.status, target).toBe(200);
      expect(JSON.parse(me.body), target).toMatchObject({ data: { name: 'Open paths' } });
      expect(me.headers, target).toMatch(/\r\nx-request-id: [0-9a-f-]{36}/i);
    }
    // The route's own check of its id.
    const encoded = await get(port, '/channel/v1/properties/no%20such', creds.api_key);
    expect(encoded.status).toBe(400);
    expect(codeOf(encoded)).toBe('VALIDATION_ERROR');
    expect(JSON.parse(encoded.body).error.details.fields).toEqual([{ field: 'id', reason: 'an integer id' }]);
    // An encoded slash stays inside its segment: no route has it.
    const slashed = await get(port, '/channel%2Fv1/channels/me', creds.api_key);
    expect(slashed.status).toBe(404);
    expect(codeOf(slashed)).toBe('NOT_FOUND');
  });

  it('GraphQL in another spelling of its endpoint is GraphQL, answered by Yoga as by the front', async () => {
    for (const target of ['/%67raphql', '/x/../graphql']) {
      const answer = await get(port, `${target}?query=${encodeURIComponent('{ channel { name } }')}`, creds.api_key);
      expect(answer.status, target).toBe(200);
      expect(JSON.parse(answer.body), target).toMatchObject({ data: { channel: { name: 'Open paths' } } });
    }
  });
});

describe('routedPath', () => {
  it("is the target itself for plain paths and the router's reading for the others", () => {
    expect(routedPath('/channel/v1/properties?limit=5')).toBe('/channel/v1/properties');
    expect(routedPath('/docs/openapi.json')).toBe('/docs/openapi.json');
    expect(routedPath('/a/.well-known/x')).toBe('/a/.well-known/x');
    expect(routedPath('/a/caf%C3%A9%20b')).toBe('/a/café b');
    expect(routedPath('/%61dmin/v1')).toBe('/admin/v1');
    expect(routedPath('/a%25b')).toBe('/a%25b');
    expect(routedPath('/a%2Fb')).toBe('/a%2Fb');
    expect(routedPath('/a/../b/./c')).toBe('/b/c');
    expect(routedPath('/a/%2e%2E/b')).toBe('/b');
    expect(routedPath('/a\\..\\b')).toBeNull();
    expect(routedPath('/a?b\\c')).toBe('/a');
    expect(routedPath('http:///admin/x')).toBe('/x');
    expect(routedPath('HTTP://h/x')).toBeNull();
    expect(routedPath('/../../etc')).toBe('/etc');
    expect(routedPath('//a//b')).toBe('//a//b');
    expect(routedPath('//a/%61')).toBe('//a/a');
    expect(routedPath('http://h:8080/x/../y?z')).toBe('/y');
    expect(routedPath('http://h')).toBe('/');
    expect(routedPath('*')).toBeNull();
  });
});
