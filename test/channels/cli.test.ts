import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { day } from '../helpers/flow.js';
import { cleanupEnv, testEnv } from '../helpers/service.js';

/**
 * The real process: `src/main.ts` listening on a port, the operator CLI as a separate process
 * talking to it over HTTP, graphql-ws over a real socket, and SIGTERM.
 */

const run = promisify(execFile);
const TSX = 'node_modules/.bin/tsx';

let env: Record<string, string>;
let server: ChildProcessWithoutNullStreams;
let baseUrl: string;
let demo: Record<string, string>;
let exited: Promise<number | null>;

beforeAll(async () => {
  env = testEnv({ LOG_LEVEL: 'info', ADMIN_TOKEN: 'adm_test-operator-token-0123456789' });
  server = spawn(TSX, ['src/main.ts'], { env: { ...process.env, ...env } });
  exited = new Promise((resolve) => server.once('exit', (code) => resolve(code)));
  const stderr: string[] = [];
  server.stderr.on('data', (d) => stderr.push(String(d)));
  demo = {};
  // Read stdout until both the listening port and the demo credentials have been printed.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start: ${stderr.join('')}`)), 45_000);
    createInterface({ input: server.stdout }).on('line', (line) => {
      if (line.startsWith('{')) {
        const entry = JSON.parse(line);
        if (entry.msg === 'listening') baseUrl = `http://127.0.0.1:${entry.port}`;
      } else {
        const match = /^\s+(user_id|api_key|client_id|client_secret)\s+(\S+)$/.exec(line);
        if (match) demo[match[1]!] = match[2]!;
      }
      if (baseUrl && demo.client_secret) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}, 60_000);

afterAll(async () => {
  if (server.exitCode === null) server.kill('SIGKILL');
  await cleanupEnv(env);
});

async function admin(...args: string[]): Promise<{ code: number; json: Record<string, any> }> {
  try {
    const { stdout } = await run(TSX, ['src/cli/admin.ts', ...args, '--json'], {
      env: { ...process.env, ...env, ADMIN_URL: baseUrl },
    });
    return { code: 0, json: JSON.parse(stdout) };
  } catch (error) {
    const e = error as { code: number; stdout: string };
    return { code: e.code, json: JSON.parse(e.stdout) };
  }
}

function me(key: string) {
  return fetch(`${baseUrl}/channel/v1/channels/me`, { headers: { 'x-api-key': key } });
}

function meByToken(token: string) {
  return fetch(`${baseUrl}/channel/v1/channels/me`, { headers: { authorization: `Bearer ${token}` } });
}

function mint(clientId: string, clientSecret: string) {
  return fetch(`${baseUrl}/channel/v1/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });
}

describe('first start of an empty sandbox', () => {
  it('prints a demo credential that works at once', async () => {
    expect(demo.api_key).toMatch(/^ck_/);
    const res = await me(demo.api_key!);
    expect(res.status).toBe(200);
    expect((await res.json()).data).toMatchObject({ user_id: demo.user_id, name: 'Demo Channel' });
    const token = await fetch(`${baseUrl}/channel/v1/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: demo.client_id!, client_secret: demo.client_secret! }),
    });
    expect(token.status).toBe(200);
  });
});

describe('operator CLI against the running service', () => {
  let created: Record<string, any>;

  it('channel:create prints the new credentials as one JSON object', async () => {
    const { code, json } = await admin('channel:create', '--name', 'CLI Travel', '--company', 'CLI Co', '--tier', 'starter', '--balance', '500000', '--scopes', 'channels:read reservations:read');
    expect(code).toBe(0);
    expect(json).toEqual({
      user_id: expect.any(String),
      app_id: expect.any(String),
      api_key: expect.stringMatching(/^ck_/),
      client_id: expect.stringMatching(/^app_/),
      client_secret: expect.stringMatching(/^cs_/),
      scopes: ['reservations:read', 'channels:read'],
    });
    created = json;
    const res = await me(created.api_key);
    expect((await res.json()).data).toMatchObject({ name: 'CLI Travel', tier: 'starter' });
  });

  it('channel:show and channel:topup report the balance in KRW', async () => {
    const shown = await admin('channel:show', '--user-id', created.user_id);
    expect(shown.json).toMatchObject({ user_id: created.user_id, name: 'CLI Travel', balance: 500000 });
    expect(shown.json.apps[0]).toMatchObject({ app_id: created.app_id, status: 'active' });
    const topped = await admin('channel:topup', '--user-id', created.user_id, '--amount', '250000');
    expect(topped).toEqual({ code: 0, json: { user_id: created.user_id, amount: 250000, balance: 750000 } });
    expect((await admin('channel:show', '--user-id', created.user_id)).json.balance).toBe(750000);
  });

  it('channel:rate-limit sets the channel\'s rate_limit, which the next request is charged against', async () => {
    const set = await admin('channel:rate-limit', '--user-id', created.user_id, '--sandbox', '5');
    expect(set).toEqual({ code: 0, json: { user_id: created.user_id, rate_limit: { sandbox: 5, production: 600 } } });
    const res = await me(created.api_key);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('5');
    expect((await res.json()).data.rate_limit).toEqual({ sandbox: 5, production: 600 });
    const bad = await admin('channel:rate-limit', '--user-id', created.user_id, '--sandbox', 'lots');
    expect(bad.code).toBe(1);
    expect(bad.json.error.code).toBe('VALIDATION_ERROR');
    expect((await admin('channel:rate-limit', '--user-id', created.user_id)).json.error.code).toBe('VALIDATION_ERROR');
    expect((await admin('channel:rate-limit', '--user-id', created.user_id, '--sandbox', '1000')).json.rate_limit.sandbox).toBe(1000);
  });

  it('app:suspend refuses the app and revokes its tokens at once; app:resume restores the key, not the tokens', async () => {
    const token = await mint(created.client_id, created.client_secret);
    expect(token.status).toBe(200);
    const { access_token } = await token.json();
    expect((await meByToken(access_token)).status).toBe(200);
    const suspended = await admin('app:suspend', '--app-id', created.app_id);
    expect(suspended.json).toMatchObject({ status: 'suspended', revoked_tokens: 1 });
    expect((await me(created.api_key)).status).toBe(401);
    expect((await meByToken(access_token)).status).toBe(401);
    expect((await admin('app:resume', '--app-id', created.app_id)).json.status).toBe('active');
    expect((await me(created.api_key)).status).toBe(200);
    const stale = await meByToken(access_token);
    expect(stale.status).toBe(401);
    expect((await stale.json()).error.message).toMatch(/revoked/);
  });

  it('secret:rotate prints a new client secret once; the old secret and its tokens are refused, the new one mints', async () => {
    const before = await (await mint(created.client_id, created.client_secret)).json();
    expect((await meByToken(before.access_token)).status).toBe(200);
    const { code, json } = await admin('secret:rotate', '--app-id', created.app_id);
    expect(code).toBe(0);
    expect(json).toEqual({ app_id: created.app_id, client_id: created.client_id, client_secret: expect.stringMatching(/^cs_/), revoked_tokens: 1 });
    expect((await meByToken(before.access_token)).status).toBe(401);
    const old = await mint(created.client_id, created.client_secret);
    expect(old.status).toBe(401);
    expect((await old.json()).error).toBe('invalid_client');
    const fresh = await mint(created.client_id, json.client_secret);
    expect(fresh.status).toBe(200);
    expect((await meByToken((await fresh.json()).access_token)).status).toBe(200);
    // The secret is not kept anywhere the operator can read it again.
    expect(JSON.stringify((await admin('channel:show', '--user-id', created.user_id)).json)).not.toContain(json.client_secret);
    created.client_secret = json.client_secret;
    expect((await admin('secret:rotate')).code).toBe(2);
  });

  it('key:rotate issues a new key and revokes the old one', async () => {
    const { json } = await admin('key:rotate', '--app-id', created.app_id);
    expect(json.api_key).toMatch(/^ck_/);
    expect((await me(created.api_key)).status).toBe(401);
    expect((await me(json.api_key)).status).toBe(200);
    created.api_key = json.api_key;
  });

  it('app:ip-allow-list sets the list (normalized, no lock-out check), refuses a bad entry, and --ips "" clears it', async () => {
    const set = await admin('app:ip-allow-list', '--app-id', created.app_id, '--ips', '203.0.113.7, 198.51.100.0/24,::ffff:192.0.2.1');
    expect(set).toMatchObject({ code: 0, json: { app_id: created.app_id, ip_allow_list: ['203.0.113.7', '198.51.100.0/24', '192.0.2.1'] } });
    // The CLI calls from 127.0.0.1, outside the list: refused from the next request on.
    const refused = await me(created.api_key);
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.code).toBe('IP_NOT_ALLOWED');
    expect((await admin('channel:show', '--user-id', created.user_id)).json.apps[0].ip_allow_list).toEqual(['203.0.113.7', '198.51.100.0/24', '192.0.2.1']);
    const bad = await admin('app:ip-allow-list', '--app-id', created.app_id, '--ips', '10.0.0.1/8');
    expect(bad.code).toBe(1);
    expect(bad.json.error.code).toBe('VALIDATION_ERROR');
    expect((await admin('app:ip-allow-list', '--app-id', created.app_id)).code).toBe(2);
    const cleared = await admin('app:ip-allow-list', '--app-id', created.app_id, '--ips', '');
    expect(cleared).toMatchObject({ code: 0, json: { ip_allow_list: [] } });
    expect((await me(created.api_key)).status).toBe(200);
  });

  it('booking:status applies a property-reported status with its event; booking:sync runs the provider sync', async () => {
    const headers = { 'x-api-key': demo.api_key! };
    // The first property with a bookable rate that night (the simulator's stock depends on the date).
    let rate: { price_check_token: string } | undefined;
    for (let property = 3; !rate && property < 60; property++) {
      const search = await fetch(`${baseUrl}/channel/v1/search/availability/${property}?checkin=${day(45)}&checkout=${day(46)}&adults=2`, { headers });
      if (search.status !== 200) continue;
      rate = (await search.json()).data.room_types
        .flatMap((r: { rates: { price_check_token: string | null }[] }) => r.rates)
        .find((r: { price_check_token: string | null }) => r.price_check_token);
    }
    if (!rate) throw new Error('no property has a bookable rate that night');
    const checked = await (await fetch(`${baseUrl}/channel/v1/search/price-check?token=${encodeURIComponent(rate.price_check_token)}`, { headers })).json();
    const booked = await fetch(`${baseUrl}/channel/v1/bookings`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ book_token: checked.data.book_token, booker_name: 'CLI Guest' }),
    });
    expect(booked.status).toBe(201);
    const id = (await booked.json()).data.id;

    const moved = await admin('booking:status', '--id', id, '--to', 'checked_in');
    expect(moved).toMatchObject({ code: 0, json: { id, status: 'checked_in' } });
    const refused = await admin('booking:status', '--id', id, '--to', 'confirmed');
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe('INVALID_TRANSITION');
    const read = await fetch(`${baseUrl}/channel/v1/bookings/${id}`, { headers });
    expect((await read.json()).data.status).toBe('checked_in');

    const sync = await admin('booking:sync');
    expect(sync.code).toBe(0);
    expect(sync.json).toMatchObject({ expired: 0, failures: 0 });
  });

  it('reports errors as JSON with a non-zero exit code', async () => {
    const missing = await admin('channel:show', '--user-id', '00000000-0000-4000-8000-000000000000');
    expect(missing.code).toBe(1);
    expect(missing.json.error.code).toBe('NOT_FOUND');
    const invalid = await admin('channel:topup', '--user-id', created.user_id, '--amount', '12.5');
    expect(invalid.code).toBe(1);
    expect(invalid.json.error.code).toBe('VALIDATION_ERROR');
    const usage = await admin('channel:create');
    expect(usage.code).toBe(2);
    expect(usage.json.error.code).toBe('USAGE');
  });

  it('takes a command named after an Object.prototype member for an unknown command (issue 15, finding 8)', async () => {
    // The command table was a plain object: these found its inherited members and failed as CLI_ERROR.
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const result = await admin(name);
      expect(result, name).toEqual({ code: 2, json: { error: { code: 'USAGE', message: `unknown command ${name}` } } });
    }
  });

  it('the operator API refuses partner credentials and a wrong operator token', async () => {
    const asPartner = await fetch(`${baseUrl}/admin/v1/channels/${created.user_id}`, { headers: { 'x-api-key': created.api_key } });
    expect(asPartner.status).toBe(403);
    expect((await asPartner.json()).error.code).toBe('FORBIDDEN');
    const wrong = await fetch(`${baseUrl}/admin/v1/channels/${created.user_id}`, { headers: { authorization: 'Bearer adm_wrong' } });
    expect(wrong.status).toBe(401);
    const wrongCli = await run(TSX, ['src/cli/admin.ts', 'channel:show', '--user-id', created.user_id, '--json'], {
      env: { ...process.env, ...env, ADMIN_URL: baseUrl, ADMIN_TOKEN: 'adm_wrong-token-of-enough-length' },
    }).catch((e: { code: number; stdout: string }) => e);
    expect((wrongCli as { code: number }).code).toBe(1);
    expect(JSON.parse((wrongCli as { stdout: string }).stdout).error.code).toBe('UNAUTHORIZED');
  });
});

describe('graphql-ws on /graphql', () => {
  function wsClient(connectionParams: Record<string, string>) {
    return createClient({ url: `${baseUrl.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true });
  }

  it('authenticates with the connection_init payload and runs operations', async () => {
    const client = wsClient({ 'X-Api-Key': demo.api_key! });
    const result = await new Promise<any>((resolve, reject) => {
      client.subscribe({ query: '{ channel { userId name } }' }, { next: resolve, error: reject, complete: () => {} });
    });
    expect(result).toEqual({
      data: { channel: { userId: demo.user_id, name: 'Demo Channel' } },
      // The operation's charge against the demo channel's rate limit (60 per minute in the sandbox).
      extensions: { rateLimit: { cost: 1, limit: 60, remaining: expect.any(Number), reset: expect.any(Number) } },
    });
    await client.dispose();
  });

  it('closes a connection without a valid credential with 4401 and the reason', async () => {
    const client = wsClient({ 'X-Api-Key': 'ck_wrong' });
    const closed = await new Promise<{ code: number; reason: string }>((resolve) => {
      client.on('closed', (event) => resolve(event as { code: number; reason: string }));
      client.subscribe({ query: '{ channel { userId } }' }, { next: () => {}, error: () => {}, complete: () => {} });
    });
    expect(closed).toMatchObject({ code: 4401, reason: 'UNAUTHORIZED: The API key is not valid' });
    await client.dispose();
  });
});

describe('SIGTERM', () => {
  it('finishes in-flight work, stops, and exits 0', async () => {
    const inFlight = me(demo.api_key!);
    server.kill('SIGTERM');
    expect((await inFlight).status).toBe(200);
    expect(await exited).toBe(0);
    await expect(fetch(`${baseUrl}/healthz`)).rejects.toThrow();
  });
});
