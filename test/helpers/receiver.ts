import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver on 127.0.0.1 for tests: records every request it gets (raw body bytes,
 * headers, arrival time) and answers as `respond` says: a status code, 'hang' (reads the request,
 * never answers; the connection stays open until the client gives up or the receiver closes),
 * 'trickle' (sends 200 headers at once, then a byte every 100 ms, never ending the body), or a
 * status with a body of its own.
 */

export interface ReceivedRequest {
  path: string;
  /** Lower-cased header names, as node gives them. */
  headers: Record<string, string>;
  /** The body exactly as it came. */
  raw: Buffer;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  webhookId: string;
  /** performance.now() when the whole request had arrived. */
  at: number;
}

export type Answer = number | 'hang' | 'trickle' | { status: number; body: string | Buffer };

export interface Receiver {
  readonly port: number;
  /** http://127.0.0.1:PORT + path. */
  url(path?: string): string;
  readonly requests: ReceivedRequest[];
  /** How to answer a request; `nth` counts earlier requests with the same webhook-id (0 for the first). */
  respond: (request: ReceivedRequest, nth: number) => Answer;
  /** Requests to a path (all when omitted). */
  on(path?: string): ReceivedRequest[];
  /** Requests with this webhook-id. */
  byId(id: string): ReceivedRequest[];
  /** Resolves when `predicate` holds (checked on each request and every 20 ms), rejects after `timeoutMs`. */
  waitFor(predicate: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Ends the hanging responses with this status (they are answered, then the connection closes). */
  release(status?: number): void;
  close(): Promise<void>;
}

export async function startReceiver(respond: Receiver['respond'] = () => 200): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  const waiters = new Set<() => void>();

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = raw.toString('utf8');
      let json: ReceivedRequest['json'];
      try {
        json = JSON.parse(body);
      } catch {
        json = { type: '(not json)', timestamp: '', data: {} };
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const entry: ReceivedRequest = {
        path: req.url ?? '/',
        headers,
        raw,
        body,
        json,
        webhookId: headers['webhook-id'] ?? '',
        at: performance.now(),
      };
      const nth = requests.filter((r) => r.webhookId === entry.webhookId).length;
      requests.push(entry);
      for (const wake of [...waiters]) wake();
      let answer: Answer;
      try {
        answer = receiver.respond(entry, nth);
      } catch {
        answer = 500;
      }
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if (answer === 'trickle') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => res.write('.'), 100);
        timers.add(timer);
        res.on('close', () => {
          clearInterval(timer);
          timers.delete(timer);
        });
        return;
      }
      if (typeof answer === 'object') {
        res.writeHead(answer.status, { 'content-type': 'application/octet-stream' });
        res.end(answer.body);
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' });
      res.end(answer >= 200 && answer < 300 ? 'ok' : `status ${answer}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const receiver: Receiver = {
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    requests,
    respond,
    on: (path) => (path === undefined ? requests : requests.filter((r) => r.path === path)),
    byId: (id) => requests.filter((r) => r.webhookId === id),
    waitFor(predicate, timeoutMs = 10_000, what = 'condition') {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!predicate()) return;
          finish();
          resolve();
        };
        const poll = setInterval(check, 20);
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`receiver: timed out after ${timeoutMs} ms waiting for ${what} (${requests.length} requests so far)`));
        }, timeoutMs);
        const finish = () => {
          clearInterval(poll);
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    release(status = 200) {
      for (const res of [...hanging]) {
        hanging.delete(res);
        if (!res.destroyed) {
          res.writeHead(status, { connection: 'close' });
          res.end();
        }
      }
    },
    async close() {
      for (const timer of timers) clearInterval(timer);
      for (const res of hanging) res.destroy();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
  return receiver;
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `fn` until it returns a truthy value (returned), or fails after `timeoutMs`. */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs = 10_000, what = 'condition', everyMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
