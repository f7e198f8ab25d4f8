import type { ServerResponse } from 'node:http';
import type { Metrics } from '../src/metrics/index.js';
import { exchangeOf } from './http.js';

const STARTED = Symbol('metricsStarted');
type Timed = ServerResponse & { [STARTED]?: number };

/**
 * The HTTP request histogram, recorded by the front (front.ts) when the answer is over: `close`
 * comes after the last byte, or when the client went away first (then 499, as no status was
 * sent). The route is the template that answered (Exchange.route), `unmatched` when none did.
 * `start` marks a request's arrival; `closed` is called by the front's close hook with the
 * response as `this` (one function per front: nothing is made per request but the start time).
 */
export function httpMetrics(metrics: Metrics): { start(res: ServerResponse): void; closed(this: ServerResponse): void } {
  return {
    start(res) {
      (res as Timed)[STARTED] = performance.now();
    },
    closed(this: Timed) {
      const ex = exchangeOf(this.req);
      const status = this.writableFinished || this.headersSent ? this.statusCode : 499;
      metrics.httpRequest(this.req.method ?? 'GET', ex?.route, status, (performance.now() - (this[STARTED] ?? 0)) / 1000);
    },
  };
}
