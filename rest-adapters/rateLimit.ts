import type { MiddlewareHandler } from 'hono';
import type { AppDeps } from '../src/context.js';
import { RateLimitError } from '../src/services/errors.js';
import { rateLimitHeaders } from '../src/services/rateLimits.js';
import type { HttpEnv } from './http.js';

/**
 * The API's rate limit at the edge of each transport (spec §8, DECISIONS.md "Errors"): every
 * request with a valid credential is charged to its channel, REST 1 point, GraphQL its
 * documentCost (src/graphqlRateLimit.ts), and answered with X-RateLimit-Limit, -Remaining and -Reset (seconds until the
 * window resets); past the limit, 429 RATE_LIMIT_EXCEEDED with Retry-After. A request without a
 * valid credential is never charged: it is refused with 401 (REST) or UNAUTHORIZED (GraphQL)
 * before it costs anything. POST /oauth/token keeps its own per-address limit.
 */

/**
 * REST (v1 and v2): 1 point per request, mounted in each router right after its credential check
 * (so a refused credential is never charged, and the principal is the one the route sees).
 */
export function restRateLimit(deps: AppDeps): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const principal = c.get('ctx')?.principal;
    if (!principal) return next();
    const decision = await deps.limiters.api.charge(principal.channelId, 1);
    const headers = rateLimitHeaders(decision);
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    if (!decision.allowed) throw new RateLimitError(decision.resetSeconds);
    await next();
    // The adapters' error handlers build their own responses; the headers go on whatever came out.
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  };
}
