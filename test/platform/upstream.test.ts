import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { day } from '../helpers/flow.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * The service against a provider it reaches over HTTP: the simulator run standalone (its own
 * process), stopped and started again; a provider that hangs; one that fails now and then.
 */

const SEARCH = `/channel/v1/search/availability?checkin=${day(30)}&checkout=${day(31)}&adults=2&property_id=1,2,3`;

async function freePort(): Promise<number> {
  const server = createTcpServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

function startStandalone(port: number): Promise<ChildProcess> {
  const child = spawn('node_modules/.bin/tsx', ['src/simulator/main.ts'], {
    env: { ...process.env, SIMULATOR_PORT: String(port), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('simulator listening')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
  });
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

describe('a standalone provider that stops and comes back', () => {
  let port: number;
  let child: ChildProcess;
  let restarted: RunningSimulator | undefined;
  let t: TestService;
  let key: Record<string, string>;

  beforeAll(async () => {
    port = await freePort();
    child = await startStandalone(port);
    // No caches: every request below must reach the provider (the search cache has its own tests).
    t = await startTestService({
      UPSTREAM_URL: `http://127.0.0.1:${port}`,
      UPSTREAM_BREAKER_THRESHOLD: '3',
      UPSTREAM_BREAKER_COOLDOWN_MS: '700',
      CONTENT_CACHE_SIZE: '0',
      SEARCH_CACHE_TTL_MS: '0',
    });
    key = apiKey(await t.channel());
  }, 60_000);
  afterAll(async () => {
    child.kill('SIGTERM');
    await restarted?.close();
    await t.close();
  });

  it('serves content and search from it', async () => {
    expect((await t.request('/channel/v1/properties/1', { headers: key })).status).toBe(200);
    expect((await t.request(SEARCH, { headers: key })).status).toBe(200);
    const ready = await t.request('/readyz');
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { upstream: 'ok' } });
  });

  it('answers 502 UPSTREAM_ERROR when it is gone, then fails fast once the circuit opens; /readyz says so', async () => {
    child.kill('SIGTERM');
    await once(child, 'exit');
    for (let i = 0; i < 3; i++) {
      const res = await t.request('/channel/v1/properties/1', { headers: key });
      expect(res.status).toBe(502);
      const body = await res.json();
      expect(body.error.code).toBe('UPSTREAM_ERROR');
      expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
    }
    expect(t.service.deps.upstream.circuit).toBe('open');
    const callsBefore = t.service.deps.upstream.calls;
    const { value: res, ms } = await timed(() => t.request(SEARCH, { headers: key }));
    expect(res.status).toBe(502);
    expect((await res.json()).error).toMatchObject({ code: 'UPSTREAM_ERROR', message: expect.stringMatching(/unavailable/) });
    expect(t.service.deps.upstream.calls).toBe(callsBefore); // not even tried
    expect(ms).toBeLessThan(100);

    const ready = await t.request('/readyz');
    expect(ready.status).toBe(503);
    expect((await ready.json()).checks.upstream).toBe('failing');
  });

  it('recovers when it comes back, after the cool-down', async () => {
    restarted = await startSimulator({ port, host: '127.0.0.1' });
    await new Promise((r) => setTimeout(r, 800));
    const res = await t.request('/channel/v1/properties/2', { headers: key });
    expect(res.status).toBe(200);
    expect(t.service.deps.upstream.circuit).toBe('closed');
    expect((await t.request('/readyz')).status).toBe(200);
  });
});

describe('a provider that accepts connections and never answers', () => {
  let tcp: TcpServer;
  const sockets = new Set<Socket>();
  let t: TestService;
  let key: Record<string, string>;

  beforeAll(async () => {
    tcp = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    tcp.listen(0, '127.0.0.1');
    await once(tcp, 'listening');
    const { port } = tcp.address() as { port: number };
    t = await startTestService({
      UPSTREAM_URL: `http://127.0.0.1:${port}`,
      UPSTREAM_CONTENT_TIMEOUT_MS: '300',
      UPSTREAM_SEARCH_TIMEOUT_MS: '400',
      UPSTREAM_BREAKER_THRESHOLD: '2',
    });
    key = apiKey(await t.channel());
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    tcp.close();
    await t.close();
  });

  it('gives 502 after the deadline instead of hanging, then fails fast', async () => {
    const first = await timed(() => t.request('/channel/v1/properties/1', { headers: key }));
    expect(first.value.status).toBe(502);
    expect(first.ms).toBeGreaterThanOrEqual(290);
    expect(first.ms).toBeLessThan(2_000);
    const second = await timed(() => t.request(SEARCH, { headers: key }));
    expect(second.value.status).toBe(502);
    expect(second.ms).toBeLessThan(2_000);
    const third = await timed(() => t.request(SEARCH, { headers: key }));
    expect(third.value.status).toBe(502);
    expect(third.ms).toBeLessThan(100);
  });
});

describe('a provider that fails now and then', () => {
  let simulator: RunningSimulator;
  let flaky: Server;
  let failuresLeft = 0;
  let malformed = false;
  let t: TestService;
  let key: Record<string, string>;

  beforeAll(async () => {
    simulator = await startSimulator({ port: 0 });
    // In front of the simulator: answers 503, or drops the connection, while failuresLeft > 0.
    flaky = createServer(async (req, res) => {
      if (malformed) {
        // Well-formed JSON that does not fit the protocol.
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"results":5,"properties":[{"id":"x"}],"missing":[]}');
        return;
      }
      if (failuresLeft > 0) {
        failuresLeft--;
        if (failuresLeft % 2 === 0) req.socket.destroy();
        else res.writeHead(503).end('{"error":{"code":"internal_error","message":"busy"}}');
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const answer = await fetch(simulator.url + req.url, {
        method: req.method,
        headers: { 'content-type': 'application/json' },
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
    });
    flaky.listen(0, '127.0.0.1');
    await once(flaky, 'listening');
    const { port } = flaky.address() as { port: number };
    // No caches: every request below must reach the provider (the search cache has its own tests).
    t = await startTestService({ UPSTREAM_URL: `http://127.0.0.1:${port}`, CONTENT_CACHE_SIZE: '0', SEARCH_CACHE_TTL_MS: '0' });
    key = apiKey(await t.channel());
  });
  afterAll(async () => {
    flaky.closeAllConnections();
    flaky.close();
    await simulator.close();
    await t.close();
  });

  it('retries reads with back-off: one or two failures do not reach the partner', async () => {
    failuresLeft = 1;
    expect((await t.request('/channel/v1/properties/5', { headers: key })).status).toBe(200);
    failuresLeft = 2;
    expect((await t.request(SEARCH, { headers: key })).status).toBe(200);
    expect(failuresLeft).toBe(0);
  });

  it('gives up after the retries: 502 in the envelope', async () => {
    failuresLeft = 3;
    const res = await t.request('/channel/v1/properties/5', { headers: key });
    expect(res.status).toBe(502);
    expect((await res.json()).error.code).toBe('UPSTREAM_ERROR');
    expect(failuresLeft).toBe(0);
    // The provider is back: the next call goes through.
    expect((await t.request('/channel/v1/properties/5', { headers: key })).status).toBe(200);
  });

  it('an answer that does not fit the protocol is a 502, not a crash', async () => {
    malformed = true;
    try {
      for (const path of ['/channel/v1/properties/6', SEARCH]) {
        const res = await t.request(path, { headers: key });
        expect(res.status).toBe(502);
        expect((await res.json()).error.code).toBe('UPSTREAM_ERROR');
      }
    } finally {
      malformed = false;
    }
  });
});

describe('sandbox scenarios (X-Test-Scenario)', () => {
  let t: TestService;
  let production: TestService;
  let key: Record<string, string>;
  let productionKey: Record<string, string>;

  beforeAll(async () => {
    t = await startTestService({ UPSTREAM_SEARCH_TIMEOUT_MS: '400', UPSTREAM_BREAKER_THRESHOLD: '2' });
    key = apiKey(await t.channel());
    production = await startTestService({ CHANNEL_ENV: 'production' });
    productionKey = apiKey(await production.channel());
  });
  afterAll(async () => {
    await t.close();
    await production.close();
  });

  const scenario = (name: string) => ({ ...key, 'x-test-scenario': name });

  it('upstream_error: 502 UPSTREAM_ERROR', async () => {
    const res = await t.request(SEARCH, { headers: scenario('upstream_error') });
    expect(res.status).toBe(502);
    expect((await res.json()).error.code).toBe('UPSTREAM_ERROR');
  });

  it('upstream_timeout: 502 once the search deadline has passed', async () => {
    const { value: res, ms } = await timed(() => t.request(SEARCH, { headers: scenario('upstream_timeout') }));
    expect(res.status).toBe(502);
    expect(ms).toBeGreaterThanOrEqual(390);
    expect(ms).toBeLessThan(2_000);
  });

  it('forced failures do not open the circuit for everyone else', async () => {
    for (let i = 0; i < 4; i++) expect((await t.request(SEARCH, { headers: scenario('upstream_error') })).status).toBe(502);
    expect(t.service.deps.upstream.circuit).toBe('closed');
    expect((await t.request(SEARCH, { headers: key })).status).toBe(200);
  });

  it('sold_out: every property unavailable, no price_check_token', async () => {
    const many = await (await t.request(SEARCH, { headers: scenario('sold_out') })).json();
    expect(many.data).toHaveLength(3);
    expect(many.data.every((i: { available: boolean; lowest_total_price: unknown }) => !i.available && i.lowest_total_price === null)).toBe(true);
    const one = await (await t.request(`/channel/v1/search/availability/1?checkin=${day(30)}&checkout=${day(31)}&adults=1`, { headers: scenario('sold_out') })).json();
    const rates = one.data.room_types.flatMap((r: { rates: unknown[] }) => r.rates);
    expect(rates.length).toBeGreaterThan(0);
    expect(rates.every((r: { available_rooms: number; price_check_token: unknown }) => r.available_rooms === 0 && r.price_check_token === null)).toBe(true);
  });

  it('an unknown scenario is ignored', async () => {
    expect((await t.request(SEARCH, { headers: scenario('meteor_strike') })).status).toBe(200);
  });

  it('production ignores the header', async () => {
    const res = await production.request(SEARCH, { headers: { ...productionKey, 'x-test-scenario': 'upstream_error' } });
    expect(res.status).toBe(200);
  });
});
