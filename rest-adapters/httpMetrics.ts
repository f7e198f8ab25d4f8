import type { ServerResponse } from 'node:http';
import type { Metrics } from '../src/metrics/index.js';
import { exchangeOf } from './http.js';

const STARTED = Symbol('metricsStarted');
type Timed = ServerResponse & { [STARTED]?: number };

/**
 * The HTTP request histogram, recorded by the front (front.ts) when the answer is over: `close`
 * comes after the last byte, or when the client went away first (then 499, as no status was
 * sent). The route is the template that answered (Exchange.route), `unmatched` when none did.
 * One listener function per front (`on`, not `once`, which wraps it anew per request), nothing
 * made per request but the start time.
 */
export function httpMetrics(metrics: Metrics): (res: ServerResponse) => void {
  function onClose(this: Timed): void {
    const ex = exchangeOf(this.req);
    const status = this.writableFinished || this.headersSent ? this.statusCode : 499;
    metrics.httpRequest(this.req.method ?? 'GET', ex?.route, status, (performance.now() - (this[STARTED] ?? 0)) / 1000);
  }
  return (res) => {
    (res as Timed)[STARTED] = performance.now();
    res.on('close', onClose);
  };
}
