import { createServer, type Server } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { once } from 'node:events';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { startSimulator } from '../../src/simulator/server.js';
import { day } from './flow.js';
import { apiKey, startTestService, type TestService } from './service.js';

/**
 * An HTTP proxy in front of a provider (the simulator) whose behaviour a test sets per request:
 * forward, fail, drop the connection, hang, forward and then lose the answer, forward late, or
 * forward with a sandbox scenario the service itself would not send (production ignores
 * X-Test-Scenario, so the proxy adds it on the provider's side of the wire).
 */

export type ProxyAction =
  /** Pass the request on and its answer back. */
  | 'forward'
  /** Answer 503 without passing the request on (the provider failed; nothing done). */
  | 'fail'
  /** Close the connection without passing the request on (unreachable; nothing done). */
  | 'drop'
  /** Never answer and never pass the request on (until the caller gives up). */
  | 'hang'
  /** Pass the request on (the provider acts on it), then close the connection: the answer is lost. */
  | 'forward-then-drop'
  /**
   * Pass the request on after `delayMs` (whether or not the caller is still waiting: a request that
   * reached the provider late), with an optional scenario header added; `thenDrop` loses the answer.
   */
  | { forward: true; delayMs?: number; scenario?: string; thenDrop?: boolean };

export interface ProxyRequest {
  method: string;
  /** Path and query, as received. */
  path: string;
}

export interface ProxyHit extends ProxyRequest {
  action: string;
  /** The W3C trace context the caller sent, if any. */
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}

export interface FaultProxy {
  url: string;
  /** Decides what happens to each request; `heal()` sets it back to forwarding everything. */
  rule: (req: ProxyRequest) => ProxyAction;
  /** Every request received, with what was done to it. */
  readonly hits: ProxyHit[];
  /** Requests passed on to the provider whose answer has not come back yet (late deliveries included). */
  inFlight(): number;
  /** Resolves once nothing is in flight (late deliveries have reached the provider and returned). */
  settled(): Promise<void>;
  heal(): void;
  close(): Promise<void>;
}

const FORWARD = () => 'forward' as const;

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const sockets = new Set<Socket>();
  const hits: ProxyHit[] = [];
  let pending = 0;
  let waiters: (() => void)[] = [];
  const done = () => {
    pending--;
    if (pending === 0) {
      for (const w of waiters) w();
      waiters = [];
    }
  };

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const action = proxy.rule({ method, path });
    const traceparent = req.headers.traceparent as string | undefined;
    const tracestate = req.headers.tracestate as string | undefined;
    hits.push({ method, path, action: typeof action === 'string' ? action : JSON.stringify(action), ...(traceparent ? { traceparent } : {}), ...(tracestate ? { tracestate } : {}) });

    if (action === 'fail') {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"code":"internal_error","message":"proxy: forced failure"}}');
      return;
    }
    if (action === 'drop') {
      req.socket.destroy();
      return;
    }
    if (action === 'hang') return; // the socket stays open until the caller leaves or close()

    const options = action === 'forward' ? {} : action === 'forward-then-drop' ? { thenDrop: true } : action;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body.length) headers['content-type'] = 'application/json';
    const scenario = (options as { scenario?: string }).scenario ?? (req.headers['x-test-scenario'] as string | undefined);
    if (scenario) headers['x-test-scenario'] = scenario;

    pending++;
    try {
      const delayMs = (options as { delayMs?: number }).delayMs;
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      let answer: Response;
      try {
        answer = await fetch(target + path, { method, headers, body: body.length ? body : undefined });
      } catch {
        req.socket.destroy();
        return;
      }
      const text = Buffer.from(await answer.arrayBuffer());
      if ((options as { thenDrop?: boolean }).thenDrop || req.socket.destroyed) {
        req.socket.destroy();
        return;
      }
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
    } finally {
      done();
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };

  const proxy: FaultProxy = {
    url: `http://127.0.0.1:${port}`,
    rule: FORWARD,
    hits,
    inFlight: () => pending,
    settled: () => (pending === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
    heal() {
      proxy.rule = FORWARD;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}

/** Matches the provider's booking routes: POST /bookings and POST /bookings/{ref}/cancel. */
export const isBook = (r: ProxyRequest) => r.method === 'POST' && r.path === '/bookings';
export const isCancel = (r: ProxyRequest) => r.method === 'POST' && /^\/bookings\/[^/]+\/cancel$/.test(r.path);

/**
 * A TCP proxy in front of a server (PostgreSQL, Redis) that a test makes unreachable: `down()`
 * stops listening and cuts every connection (new ones are refused, as from a server restarting);
 * `freeze()` keeps every connection open but passes no byte either way, and holds new ones (a
 * stopped process, SIGSTOP); `cut()` ends the connections open now and keeps accepting;
 * `up()` and `thaw()` undo. Point the service's DATABASE_URL or REDIS_URL at `host:port`.
 */
export interface TcpProxy {
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string;
  /** Connections open now. */
  connections(): number;
  down(): Promise<void>;
  up(): Promise<void>;
  freeze(): void;
  thaw(): void;
  cut(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; server: Socket }>();
  let frozen = false;
  const server = createNetServer((client) => {
    const upstream = connect(target.port, target.host);
    const pair = { client, server: upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    // Each side's bytes go to the other unless frozen; paused sockets keep what arrives.
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      from.on('data', (chunk) => {
        if (!to.write(chunk)) from.pause();
      });
      to.on('drain', () => {
        if (!frozen) from.resume();
      });
      if (frozen) from.pause();
    }
  });
  server.on('error', () => {});
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const { port } = server.address() as AddressInfo;
  const cut = () => {
    for (const pair of [...pairs]) {
      pair.client.destroy();
      pair.server.destroy();
    }
    pairs.clear();
  };
  return {
    port,
    through(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    connections: () => pairs.size,
    async down() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        cut();
      });
    },
    async up() {
      // The same port again (nothing else binds it in the meantime on a test machine).
      if (!server.listening) await listen(port);
    },
    freeze() {
      frozen = true;
      for (const pair of pairs) {
        pair.client.pause();
        pair.server.pause();
      }
    },
    thaw() {
      frozen = false;
      for (const pair of pairs) {
        pair.client.resume();
        pair.server.resume();
      }
    },
    cut,
    async close() {
      cut();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A service whose provider (a simulator of its own) answers through a fault proxy, with a partner that searches. */
export interface BreakerRig {
  t: TestService;
  proxy: FaultProxy;
  /** The partner's availability search of property 1, which asks the provider every time. */
  search(): Promise<Response>;
  close(): Promise<void>;
}

/**
 * For tests of which breaker opens: the provider behind a fault proxy, the breakers opening after
 * 3 failures for a minute, and no search cache (an open partners' breaker would show in `search`).
 */
export async function startBreakerRig(partnerName: string): Promise<BreakerRig> {
  const simulator = await startSimulator({ port: 0, host: '127.0.0.1' });
  const proxy = await startFaultProxy(simulator.url);
  const t = await startTestService({ UPSTREAM_URL: proxy.url, UPSTREAM_BREAKER_THRESHOLD: '3', UPSTREAM_BREAKER_COOLDOWN_MS: '60000', SEARCH_CACHE_TTL_MS: '0' });
  const partner: IssuedCredentials = await t.channel({ name: partnerName });
  return {
    t,
    proxy,
    search: () => t.request(`/channel/v1/search/availability/1?checkin=${day(30)}&checkout=${day(32)}&adults=2`, { headers: apiKey(partner) }),
    close: async () => {
      await t.close();
      await proxy.close();
      await simulator.close();
    },
  };
}
