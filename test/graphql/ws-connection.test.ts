import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { connectionCredentials, NO_CREDENTIAL_MESSAGE } from '../../src/graphql/ws.js';
import { rotateKey, setAppStatus, setIpAllowList, type IssuedCredentials } from '../../src/services/channels/index.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * graphql-ws's connection_init (docs/decisions.md "GraphQL"): the credential flat or under
 * `headers`, in any case; a refused connection is closed with 4000 + the HTTP status of the same
 * refusal and `CODE: message` as the reason. Spoken with a bare WebSocket, so the close frame is
 * seen as the server sent it.
 */

type Outcome = { acked: true } | { code: number; reason: string };

interface Connection {
  outcome: Promise<Outcome>;
  socket: WebSocket;
}

function open(port: number, init: Record<string, unknown>): Connection {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws');
  const outcome = new Promise<Outcome>((resolve, reject) => {
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', ...init })));
    socket.on('message', (data) => {
      if ((JSON.parse(String(data)) as { type: string }).type === 'connection_ack') resolve({ acked: true });
    });
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    socket.on('error', reject);
  });
  return { outcome, socket };
}

async function connect(port: number, payload?: unknown): Promise<Outcome> {
  const { outcome, socket } = open(port, payload === undefined ? {} : { payload });
  const result = await outcome;
  socket.close();
  return result;
}

/** Connects, runs `{ channel { userId } }` and answers its data. */
async function channelOver(port: number, payload: unknown): Promise<unknown> {
  const { outcome, socket } = open(port, { payload });
  expect(await outcome).toEqual({ acked: true });
  const data = new Promise<unknown>((resolve) => {
    socket.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as { type: string; payload?: { data?: unknown; errors?: unknown } };
      if (message.type === 'next') resolve(message.payload?.data ?? message.payload?.errors);
    });
  });
  socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ channel { userId } }' } }));
  const result = await data;
  socket.close();
  return result;
}

describe('graphql-ws connection_init', () => {
  let t: TestService;
  let port: number;
  let alice: IssuedCredentials;
  let token: string;

  beforeAll(async () => {
    t = await startTestService();
    port = await t.service.listen(0);
    alice = await t.channel({ name: 'Alice WS' });
    const issued = await t.request('/channel/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: alice.client_id, client_secret: alice.client_secret }),
    });
    token = ((await issued.json()) as { access_token: string }).access_token;
  });
  afterAll(() => t?.close());

  it('takes the credential flat or under headers, in any case', async () => {
    const mine = { channel: { userId: alice.user_id } };
    for (const payload of [
      { 'X-Api-Key': alice.api_key },
      { 'x-api-key': alice.api_key },
      { Authorization: `Bearer ${token}` },
      { headers: { 'X-Api-Key': alice.api_key } },
      { headers: { 'x-api-key': alice.api_key, 'content-type': 'application/json' } },
      { headers: { Authorization: `Bearer ${token}` } },
      // A flat entry wins over the same entry under headers.
      { 'X-Api-Key': alice.api_key, headers: { 'X-Api-Key': 'ck_not_a_key' } },
    ]) {
      expect(await channelOver(port, payload), JSON.stringify(payload)).toEqual(mine);
    }
    expect(await connect(port, { 'X-Api-Key': 'ck_not_a_key', headers: { 'X-Api-Key': alice.api_key } })).toEqual({
      code: 4401,
      reason: 'UNAUTHORIZED: The API key is not valid',
    });
  });

  it('closes with 4401 and says why when there is no credential, or it is not valid', async () => {
    const none = { code: 4401, reason: `UNAUTHORIZED: ${NO_CREDENTIAL_MESSAGE}` };
    expect(await connect(port)).toEqual(none);
    expect(await connect(port, {})).toEqual(none);
    expect(await connect(port, { headers: `X-Api-Key: ${alice.api_key}` })).toEqual(none);
    expect(await connect(port, { 'X-Api-Key': 42 })).toEqual(none);
    expect(await connect(port, { token: alice.api_key })).toEqual(none);
    expect(await connect(port, { 'X-Api-Key': 'ck_not_a_key' })).toEqual({ code: 4401, reason: 'UNAUTHORIZED: The API key is not valid' });
    expect(await connect(port, { headers: { 'X-Api-Key': 'ck_not_a_key' } })).toEqual({ code: 4401, reason: 'UNAUTHORIZED: The API key is not valid' });
    expect(await connect(port, { Authorization: alice.api_key })).toEqual({
      code: 4401,
      reason: 'UNAUTHORIZED: The Authorization header must be "Bearer <access_token>"',
    });
    expect(await connect(port, { Authorization: 'Bearer oat_nope' })).toEqual({ code: 4401, reason: 'UNAUTHORIZED: The access token is not valid' });
    expect(NO_CREDENTIAL_MESSAGE.length + 'UNAUTHORIZED: '.length).toBeLessThanOrEqual(123);
  });

  it('closes with 4401 for a revoked key and a suspended app, 4403 outside the IP allow list', async () => {
    const bob = await t.channel({ name: 'Bob WS' });
    const { prisma } = t.service.deps.db;
    const fresh = await rotateKey(prisma, bob.app_id);
    t.service.deps.credentials?.clear();
    expect(await connect(port, { 'X-Api-Key': bob.api_key })).toEqual({ code: 4401, reason: 'UNAUTHORIZED: The API key is not valid' });
    expect(await connect(port, { 'X-Api-Key': fresh.api_key })).toEqual({ acked: true });

    await setIpAllowList(prisma, bob.app_id, ['203.0.113.7']);
    t.service.deps.credentials?.clear();
    const outside = await connect(port, { headers: { 'X-Api-Key': fresh.api_key } });
    expect(outside).toEqual({ code: 4403, reason: expect.stringMatching(/^IP_NOT_ALLOWED: Requests of this app are not accepted from [0-9a-f.:]*127\.0\.0\.1$/) });
    await setIpAllowList(prisma, bob.app_id, []);

    await setAppStatus(prisma, bob.app_id, 'suspended');
    t.service.deps.credentials?.clear();
    expect(await connect(port, { 'X-Api-Key': fresh.api_key })).toEqual({ code: 4401, reason: 'UNAUTHORIZED: The app of this API key is suspended' });
    await setAppStatus(prisma, bob.app_id, 'active');
  });

  it('closes with 4500 and an id to quote, never the internal message, when the credential cannot be checked', async () => {
    const lookup = vi.spyOn(t.service.deps.db.prisma.apiKey, 'findUnique').mockRejectedValueOnce(new Error('connection to the database lost'));
    try {
      const outcome = await connect(port, { 'X-Api-Key': 'ck_never_seen_before' });
      expect(outcome).toEqual({ code: 4500, reason: expect.stringMatching(/^INTERNAL_ERROR: An internal error occurred; quote [0-9a-f-]{36} to support$/) });
    } finally {
      lookup.mockRestore();
    }
  });
});

describe('connectionCredentials', () => {
  it('reads X-Api-Key and Authorization flat or under headers, flat first', () => {
    expect(connectionCredentials(undefined)).toEqual({ apiKey: undefined, authorization: undefined });
    expect(connectionCredentials({ 'X-API-KEY': 'ck_a', HEADERS: { AUTHORIZATION: 'Bearer oat_b' } })).toEqual({ apiKey: 'ck_a', authorization: 'Bearer oat_b' });
    expect(connectionCredentials({ authorization: 'Bearer oat_flat', headers: { Authorization: 'Bearer oat_nested', 'X-Api-Key': 'ck_nested' } })).toEqual({
      apiKey: 'ck_nested',
      authorization: 'Bearer oat_flat',
    });
    expect(connectionCredentials({ headers: [['X-Api-Key', 'ck_a']] })).toEqual({ apiKey: undefined, authorization: undefined });
  });
});
