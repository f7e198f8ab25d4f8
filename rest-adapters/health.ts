import type { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppDeps } from '../src/context.js';
import { ServiceUnavailableError } from '../src/services/kernel/index.js';
import type { HttpEnv } from './env.js';

/** The status /readyz answers while not ready (the shutdown gate's). */
const NOT_READY = new ServiceUnavailableError().status as ContentfulStatusCode;

/**
 * How long /readyz waits for each check (all at once): a dependency that does not answer by then
 * is `failing`, so the answer comes within about a second whatever the dependencies do (a frozen
 * PostgreSQL or Redis holds a ping forever).
 */
export const READY_CHECK_MS = 700;

type Check = 'ok' | 'failing';

/** `ok` when `probe` resolves (to anything but false) within READY_CHECK_MS, else `failing`. */
function check(probe: () => Promise<unknown>): Promise<Check> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Check>((resolve) => (timer = setTimeout(() => resolve('failing'), READY_CHECK_MS)));
  const answer = probe().then(
    (value): Check => (value === false ? 'failing' : 'ok'),
    (): Check => 'failing',
  );
  return Promise.race([answer, late]).finally(() => clearTimeout(timer));
}

/**
 * /healthz (the process answers) and /readyz (database, Redis and provider reachable, not shutting
 * down). Mounted before the shutdown gate, so a load balancer sees readiness drop to 503.
 */
export function healthRoutes(app: Hono<HttpEnv>, deps: AppDeps, shuttingDown: () => boolean): void {
  const { db, redis, upstream } = deps;
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const [database, redisCheck, upstreamCheck] = await Promise.all([
      check(() => db.ping()),
      redis ? check(() => redis.ping()) : undefined,
      check(() => upstream.ping()),
    ]);
    const checks: Record<string, Check> = { database, ...(redisCheck && { redis: redisCheck }), upstream: upstreamCheck };
    const closing = shuttingDown();
    const ready = !closing && Object.values(checks).every((v) => v === 'ok');
    return c.json({ status: ready ? 'ready' : 'not_ready', checks, shutting_down: closing }, ready ? 200 : NOT_READY);
  });
}
