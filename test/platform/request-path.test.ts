import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routedPath } from '../../rest-adapters/requestPath.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The front's path rules (the HTTPS rule and its exception for operator routes from loopback,
 * the GraphQL endpoint) read the path the router routes, and a target that only a resolver makes
 * sense of (dot segments, empty segments, backslashes, encoded slashes) is refused before any
 * rule. Sent over a raw socket: a client library would remove the dot segments itself.
 */

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/** One request written byte for byte on a fresh socket from loopback, and its whole answer. */
function raw(port: number, lines: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(lines));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('close', () => {
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(text.slice(9, 12)), headers: text.slice(0, split), body: text.slice(split + 4) });
    });
    socket.on('error', reject);
  });
}

function get(port: number, target: string, key?: string): Promise<RawAnswer> {
  return raw(port, `GET ${target} HTTP/1.1\r\nHost: channel.test\r\n${key ? `X-Api-Key: ${key}\r\n` : ''}Connection: close\r\n\r\n`);
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

  it('a partner route reached through the operator prefix is refused, not answered 200', async () => {
    // The partner route itself: HTTPS_REQUIRED.
    const direct = await get(port, ME, creds.api_key);
    expect(direct.status).toBe(403);
    expect(codeOf(direct)).toBe('HTTPS_REQUIRED');
    for (const target of [
      '/admin/../channel/v1/channels/me',
      '/admin/%2e%2e/channel/v1/channels/me',
      '/admin/%2E%2E/channel/v1/channels/me',
      '/admin/.%2e/channel/v1/channels/me',
      '/admin/./../channel/v1/channels/me',
      '/admin\\..\\channel/v1/channels/me',
      '/admin/..',
      '/metrics/../channel/v1/channels/me',
    ]) {
      const answer = await get(port, target, creds.api_key);
      expect(answer.status, target).toBe(400);
      expect(codeOf(answer), target).toBe('BAD_REQUEST');
      expect(answer.body).not.toContain('"channel_id"');
    }
  });

  it('empty segments, backslashes and encoded slashes are refused on every path', async () => {
    for (const target of ['//channel/v1/channels/me', '/channel//v1/channels/me', '/channel%2fv1/channels/me', '/channel%2Fv1%2Fchannels/me', '/channel%5cv1/channels/me', '/channel\\v1/channels/me', '/graphql/.', '/./graphql']) {
      const answer = await get(port, target, creds.api_key);
      expect(answer.status, target).toBe(400);
      expect(codeOf(answer), target).toBe('BAD_REQUEST');
    }
  });

  it('percent-encoded letters are refused too, so no spelling of a path reaches the operator exception or GraphQL but its own', async () => {
    for (const target of ['/%63hannel/v1/channels/%6De', '/%61dmin/v1/channels', '/admin/v1/%63hannels', '/%67raphql?query=%7B__typename%7D', '/metric%73']) {
      const answer = await get(port, target, creds.api_key);
      expect(answer.status, target).toBe(400);
      expect(codeOf(answer), target).toBe('BAD_REQUEST');
    }
    // The operator route, spelled plainly, is reached from loopback and asks for its token.
    const operator = await raw(port, `POST /admin/v1/channels HTTP/1.1\r\nHost: channel.test\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
    expect(operator.status).toBe(401);
    expect(codeOf(operator)).toBe('UNAUTHORIZED');
    // An absolute-form target is read by its path.
    const absolute = await get(port, `http://channel.test/admin/../channel/v1/channels/me`, creds.api_key);
    expect(absolute.status).toBe(400);
    const absolutePlain = await get(port, `http://channel.test${ME}`, creds.api_key);
    expect(absolutePlain.status).toBe(403);
  });

  it('a graphql-ws upgrade to a path that resolves to /graphql is not an upgrade', async () => {
    const upgrade = (target: string) =>
      raw(
        port,
        `GET ${target} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`,
      );
    expect((await upgrade('/graphql')).status).toBe(403);
    expect((await upgrade('/x/../graphql')).status).toBe(404);
    expect((await upgrade('/%67raphql')).status).toBe(404);
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

  it("plain paths answer as before; an encoded character in an id reaches the route's own check of it", async () => {
    const me = await get(port, ME, creds.api_key);
    expect(me.status).toBe(200);
    expect(JSON.parse(me.body)).toMatchObject({ data: { name: 'Open paths' } });
    const encoded = await get(port, '/channel/v1/properties/no%20such', creds.api_key);
    // The route's own check of its id: the path passed the front.
    expect(encoded.status).toBe(400);
    expect(codeOf(encoded)).toBe('VALIDATION_ERROR');
    expect(JSON.parse(encoded.body).error.details.fields).toEqual([{ field: 'id', reason: 'an integer id' }]);
    const dotted = await get(port, '/channel/v1/../v1/channels/me', creds.api_key);
    expect(dotted.status).toBe(400);
    expect(dotted.headers).toMatch(/\r\nx-request-id: [0-9a-f-]{36}/i);
  });
});

describe('routedPath', () => {
  it("is the target itself for plain paths, the router's reading for encoded ones, null for the ambiguous", () => {
    expect(routedPath('/channel/v1/properties?limit=5')).toBe('/channel/v1/properties');
    expect(routedPath('/docs/openapi.json')).toBe('/docs/openapi.json');
    expect(routedPath('/a/.well-known/x')).toBe('/a/.well-known/x');
    expect(routedPath('/a/caf%C3%A9%20b')).toBe('/a/café b');
    expect(routedPath('/%61dmin/v1')).toBeNull();
    expect(routedPath('/a%7eb')).toBeNull();
    expect(routedPath('/a%25b')).toBe('/a%25b');
    expect(routedPath('http://h:8080/x?y')).toBe('/x');
    expect(routedPath('http://h')).toBe('/');
    expect(routedPath('/a/..?b')).toBeNull();
    expect(routedPath('*')).toBeNull();
    expect(routedPath('/a/b/.')).toBeNull();
    expect(routedPath('/a/%2E')).toBeNull();
  });
});
