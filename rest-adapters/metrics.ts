import type { Hono } from 'hono';
import type { AppDeps } from '../src/context.js';
import { operatorOnly } from './admin/operator.js';
import type { HttpEnv } from './env.js';

/**
 * GET /metrics: the Prometheus text exposition of this instance (src/metrics). Served to loopback
 * callers; elsewhere only with METRICS_ALLOW_REMOTE=true and the operator token; partner
 * credentials are refused (the operator check of rest-adapters/admin/operator.ts).
 */
export function metricsRoutes(app: Hono<HttpEnv>, deps: AppDeps): void {
  const rule = { name: 'GET /metrics', allowRemote: deps.config.metrics.allowRemote, remoteSetting: 'METRICS_ALLOW_REMOTE', loopbackOpen: true };
  app.get('/metrics', operatorOnly(deps, rule), async (c) => {
    const text = await deps.metrics.scrape();
    return c.body(text, 200, { 'content-type': deps.metrics.contentType, 'cache-control': 'no-store' });
  });
}
