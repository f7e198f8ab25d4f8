import type { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppDeps } from '../src/context.js';
import { ServiceUnavailableError } from '../src/services/kernel/index.js';
import type { HttpEnv } from './env.js';

/** The status /readyz answers while not ready (the shutdown gate's). */
const NOT_READY = new ServiceUnavailableError().status as ContentfulStatusCode;

/**
 * /healthz (the process answers) and /readyz (database, Redis and provider reachable, not shutting
 * down). Mounted before the shutdown gate, so a load balancer sees readiness drop to 503.
 */
export function healthRoutes(app: Hono<HttpEnv>, deps: AppDeps, shuttingDown: () => boolean): void {
  const { db, redis, upstream } = deps;
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const checks: Record<string, 'ok' | 'failing'> = { database: 'ok' };
    await db.ping().catch(() => (checks.database = 'failing'));
    if (redis) checks.redis = await redis.ping().then(() => 'ok' as const, () => 'failing' as const);
    checks.upstream = (await upstream.ping()) ? 'ok' : 'failing';
    const closing = shuttingDown();
    const ready = !closing && Object.values(checks).every((v) => v === 'ok');
    return c.json({ status: ready ? 'ready' : 'not_ready', checks, shutting_down: closing }, ready ? 200 : NOT_READY);
  });
}
