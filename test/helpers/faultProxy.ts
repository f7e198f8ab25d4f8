import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { once } from 'node:events';

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
    hits.push({ method, path, action: typeof action === 'string' ? action : JSON.stringify(action), ...(traceparent ? { traceparent } : {}) });

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
