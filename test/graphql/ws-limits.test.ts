import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { connectionLanguage } from '../../src/graphql/ws.js';
import { CONNECTION_INIT_MAX_BYTES, connectionSlotKey } from '../../src/graphql/wsConnections.js';
import { CREDENTIAL_MAX_CHARS } from '../../src/services/access/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { ACCEPT_LANGUAGE_MAX_CHARS, negotiateLanguage } from '../../src/services/kernel/index.js';
import { statementsOf } from '../helpers/counters.js';
import { graphqlResponse } from '../helpers/graphql.js';
import { expectError } from '../helpers/http.js';
import { eventually } from '../helpers/receiver.js';
import { startTestService, uniqueIp, type TestService } from '../helpers/service.js';
import { RawSocket } from '../helpers/wsRaw.js';

/**
 * What a graphql-ws connection may cost before and while it is open (docs/decisions.md, "Hardening:
 * subscriptions and refused work"): a message over CONNECTION_INIT_MAX_BYTES before connection_init
 * is accepted closes the socket with 4413, unread; Accept-Language and credentials are read only
 * up to a bound (in the one place each is read, for HTTP too); a channel holds at most
 * SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CHANNEL connections (4429), across instances with Redis; and a
 * client address makes at most SUBSCRIPTIONS_CONNECTS_PER_ADDRESS_MINUTE attempts a minute (429
 * before the handshake).
 */

/** An Accept-Language of many entries, the supported language only after the first ACCEPT_LANGUAGE_MAX_CHARS characters. */
const longAcceptLanguage = (bytes: number) => `${'x-aa;q=0.1,'.repeat(Math.ceil(bytes / 11))}en-US;q=1`;

/** The outcome of an upgrade of /graphql from `forwardedFor`: opened, or refused with an HTTP answer. */
async function upgrade(port: number, forwardedFor: string): Promise<{ opened: true; socket: WebSocket } | { status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws', { headers: { 'x-forwarded-for': forwardedFor } });
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ opened: true, socket }));
    socket.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    socket.once('error', reject);
  });
}

describe('graphql-ws limits before and while a connection is open', () => {
  let t: TestService;
  let port: number;
  let redis: Redis | undefined;
  const sockets: { close(): void }[] = [];

  beforeAll(async () => {
    t = await startTestService({
      SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CHANNEL: '3',
      SUBSCRIPTIONS_CONNECTS_PER_ADDRESS_MINUTE: '5',
      // Loopback is the proxy, so each test picks the client address it connects from.
      TRUSTED_PROXIES: '127.0.0.1',
    });
    port = await t.service.listen(0);
    redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined;
  });
  afterAll(async () => {
    for (const s of sockets) s.close();
    await redis?.quit();
    await t?.close();
  });

  const connect = async (who: IssuedCredentials | { payload: unknown }) => {
    const { raw, outcome } = await RawSocket.connect(port, who, { 'x-forwarded-for': uniqueIp() });
    sockets.push(raw);
    return { raw, outcome };
  };

  it('connection_init with a 1 MiB Accept-Language is closed with 4413 PAYLOAD_TOO_LARGE, and the connection is never accepted', async () => {
    const who = await t.channel({ name: 'Huge Init' });
    // Just under BODY_LIMIT_BYTES (1 MiB, ws's maxPayload): the largest message ws reads.
    const { raw, outcome } = await connect({ payload: { 'X-Api-Key': who.api_key, 'Accept-Language': longAcceptLanguage(1024 * 1024 - 1024) } });
    expect(outcome).toEqual({ code: 4413, reason: expect.stringMatching(/^PAYLOAD_TOO_LARGE: A message before connection_init is accepted is at most 8192 bytes/) });
    expect(raw.messages).toEqual([]);
    // One just under the cap is accepted.
    const fits = await connect({ payload: { 'X-Api-Key': who.api_key, 'Accept-Language': longAcceptLanguage(CONNECTION_INIT_MAX_BYTES - 200) } });
    expect(fits.outcome).toEqual({ acked: true });
  });

  it('a message over BODY_LIMIT_BYTES is closed with 1009 by ws, and nothing is written to stderr', async () => {
    const stderr = vi.spyOn(console, 'error');
    try {
      const who = await t.channel({ name: 'Over The Body Limit' });
      const { raw, outcome } = await connect(who);
      expect(outcome).toEqual({ acked: true });
      raw.send({ id: 'big', type: 'subscribe', payload: { query: `{ __typename } # ${'x'.repeat(t.config.bodyLimitBytes)}` } });
      await eventually(() => raw.closed, 10_000, 'the socket closed');
      expect(raw.closed?.code).toBe(1009);
      expect(stderr).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
    }
  });

  it('Accept-Language is read up to ACCEPT_LANGUAGE_MAX_CHARS characters: over graphql-ws, and on HTTP (Content-Language)', async () => {
    expect(negotiateLanguage('en-US')).toBe('en-US');
    // The language named after the bound is not seen: the default, as for a header that names none.
    expect(connectionLanguage({ 'Accept-Language': longAcceptLanguage(1024 * 1024) })).toBe('ko-KR');
    expect(connectionLanguage({ headers: { 'accept-language': `${'x'.repeat(ACCEPT_LANGUAGE_MAX_CHARS)},en-US` } })).toBe('ko-KR');
    expect(negotiateLanguage(`${'x-aa;q=0.1,'.repeat(20)}en-US`)).toBe('en-US');

    const who = await t.channel({ name: 'Long Accept-Language' });
    const long = await graphqlResponse(t, '{ __typename }', undefined, { headers: { 'x-api-key': who.api_key, 'accept-language': longAcceptLanguage(8 * 1024) } });
    expect(long.status).toBe(200);
    expect(long.headers.get('content-language')).toBe('ko-KR');
    const short = await graphqlResponse(t, '{ __typename }', undefined, { headers: { 'x-api-key': who.api_key, 'accept-language': 'x-aa;q=0.1,en-US;q=1' } });
    expect(short.headers.get('content-language')).toBe('en-US');
  });

  it('a credential longer than CREDENTIAL_MAX_CHARS is 401 without a database lookup, on HTTP and in connection_init', async () => {
    const long = `ck_${'a'.repeat(CREDENTIAL_MAX_CHARS)}`;
    const { result: res, statements } = await statementsOf(() => t.request('/channel/v1/channels/me', { headers: { 'x-api-key': long } }));
    expect(statements).toEqual([]);
    const error = await expectError(res, 401, 'UNAUTHORIZED');
    expect(error.message).toBe('The API key is not valid');
    const bearer = await t.request('/channel/v1/channels/me', { headers: { authorization: `Bearer oat_${'a'.repeat(CREDENTIAL_MAX_CHARS)}` } });
    expect((await expectError(bearer, 401, 'UNAUTHORIZED')).message).toBe('The access token is not valid');
    const { outcome } = await connect({ payload: { 'X-Api-Key': long } });
    expect(outcome).toEqual({ code: 4401, reason: 'UNAUTHORIZED: The API key is not valid' });
  });

  it('SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CHANNEL=3: the fourth connection is closed with 4429; closing one admits another; other channels are not counted', async () => {
    const who = await t.channel({ name: 'Three Connections' });
    const open = await Promise.all([connect(who), connect(who), connect(who)]);
    expect(open.map((c) => c.outcome)).toEqual([{ acked: true }, { acked: true }, { acked: true }]);
    if (redis) expect(await redis.zcard(connectionSlotKey(who.user_id))).toBe(3);

    const fourth = await connect(who);
    expect(fourth.outcome).toEqual({ code: 4429, reason: expect.stringMatching(/^SUBSCRIPTION_LIMIT_EXCEEDED: A channel holds at most 3 graphql-ws connections/) });
    const other = await t.channel({ name: 'Other Channel' });
    expect((await connect(other)).outcome).toEqual({ acked: true });

    // An open connection still runs operations; one closing gives its place back.
    open[0]!.raw.send({ id: 'q', type: 'subscribe', payload: { query: '{ channel { name } }' } });
    expect((await open[0]!.raw.reply('q')).payload.data).toEqual({ channel: { name: 'Three Connections' } });
    open[1]!.raw.close();
    await eventually(async () => 'acked' in (await connect(who)).outcome, 10_000, 'a place given back');
    if (redis) expect(await redis.zcard(connectionSlotKey(who.user_id))).toBe(3);
  });

  it('SUBSCRIPTIONS_CONNECTS_PER_ADDRESS_MINUTE=5: the sixth attempt from one address is 429 RATE_LIMIT_EXCEEDED before the handshake; another address connects', async () => {
    const address = uniqueIp();
    for (let i = 0; i < 5; i++) {
      const attempt = await upgrade(port, address);
      expect(attempt).toMatchObject({ opened: true });
      if ('socket' in attempt) attempt.socket.close();
    }
    const refused = await upgrade(port, address);
    expect('status' in refused && refused.status).toBe(429);
    if (!('status' in refused)) return;
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const body = JSON.parse(refused.body) as { error: { code: string; message: string; details: { limit: number; retry_after: number } }; meta: { request_id: string } };
    expect(body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 5, retry_after: Number(refused.headers['retry-after']) } });
    expect(body.error.message).toMatch(/^Too many graphql-ws connection attempts from fd00:\S+: at most 5 a minute; retry in \d+ s$/);
    expect(body.meta.request_id).toBe(refused.headers['x-request-id']);
    const elsewhere = await upgrade(port, uniqueIp());
    expect(elsewhere).toMatchObject({ opened: true });
    if ('socket' in elsewhere) elsewhere.socket.close();
  });
});
