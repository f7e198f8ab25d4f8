import { z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { InternalError, isDatabaseUnavailable, principalOf } from '../src/services/kernel/index.js';
import { claim, fingerprintOf, keyInFlight, requestLeaseMs, settle } from '../src/services/bookings/index.js';
import { meta } from './envelope.js';
import type { HttpEnv } from './env.js';

/** The Idempotency-Key header as the routes that take one (with idempotency()) document it. */
export const idempotencyHeader = z.object({
  'idempotency-key': z.string().optional().openapi({ description: 'Repeat a request safely: the first response is given again for 24 hours to the same key with the same method, path, query string and body; the same key with another request is 409 IDEMPOTENCY_KEY_REUSED' }),
});

/**
 * The query string as the fingerprint counts it: the parameters decoded (so `%2E` and `.` are the
 * same request), sorted by name, a repeated name's values in the order sent (a stable sort);
 * null when there are none. v2 carries its tokens here: `?token=X` and `?token=Y` are two
 * requests.
 */
export function canonicalQuery(url: string): [string, string][] | null {
  const pairs = [...new URL(url).searchParams];
  return pairs.length ? pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : null;
}

/**
 * The `Idempotency-Key` header on a REST route (docs/spec/DECISIONS.md). Runs after the credential and
 * scope checks: the first response (status below 500) is kept and given again, with fresh `meta`
 * and `Idempotent-Replayed: true`, to the same key with the same method, path, query string and
 * body. A request without a query string has the fingerprint it always had (method, path, body),
 * so keys stored before the query string counted still replay.
 */
export function idempotency(): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const key = c.req.header('idempotency-key');
    if (key === undefined) return next();
    const ctx = c.get('ctx');
    const { channelId } = principalOf(ctx);
    const text = await c.req.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON: the raw text is the fingerprint; the route's validation answers 400.
    }
    const query = canonicalQuery(c.req.url);
    const fingerprint = fingerprintOf(query ? [c.req.method, c.req.path, body, query] : [c.req.method, c.req.path, body]);
    // Held by this request from before the claim to after its answer is stored: a key this
    // instance owns that no request holds was left by one that died, and recovery frees it.
    const heldAs = keyInFlight(channelId, key);
    const release = ctx.deps.inFlight.hold([heldAs]);
    try {
      // A claim held longer than a request can take belongs to a process that stopped.
      const claimed = await claim(ctx.deps, channelId, key, fingerprint, requestLeaseMs(ctx.deps));
      if (claimed.kind === 'replay') {
        const stored = claimed.response.body as { body: Record<string, unknown>; location: string | null; meta: boolean };
        c.header('Idempotent-Replayed', 'true');
        if (stored.location) c.header('Location', stored.location);
        // v1 bodies carry `meta` (fresh on a replay); v2 success bodies have none.
        return c.json(stored.meta ? { ...stored.body, meta: meta(c) } : stored.body, claimed.response.status as ContentfulStatusCode);
      }
      try {
        await next();
      } catch (error) {
        await keep(ctx, heldAs, () => settle(ctx.deps, channelId, key, { status: InternalError.status, body: null }));
        throw error;
      }
      // Hono has already turned a thrown error into c.res, so both outcomes are here.
      const status = c.res.status;
      let stored: unknown = null;
      if (status < 500) {
        const { meta: sent, ...rest } = (await c.res.clone().json()) as Record<string, unknown>;
        stored = { body: rest, location: c.res.headers.get('location'), meta: sent !== undefined };
      }
      await keep(ctx, heldAs, () => settle(ctx.deps, channelId, key, { status, body: stored }));
    } finally {
      release();
    }
  };
}

/**
 * Stores a key's answer (or frees it). The answer was made and is sent whatever happens here: a
 * booking made is never answered 5xx because its key could not be written. If the database does
 * not take the write now, the recovery pass makes it once it does (InFlight.later).
 */
async function keep(ctx: HttpEnv['Variables']['ctx'], heldAs: string, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    ctx.logger.warn({ err: error }, 'Idempotency-Key answer not stored (database unreachable); the recovery pass stores it');
    ctx.deps.inFlight.later(heldAs, write);
  }
}
