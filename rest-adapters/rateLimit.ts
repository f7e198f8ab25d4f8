import type { Context, MiddlewareHandler } from 'hono';
import type { AppDeps, RequestContext } from '../src/context.js';
import type { RateLimitSurface } from '../src/metrics/index.js';
import { RateLimitError } from '../src/services/kernel/index.js';
import { batchCost, rateLimitHeaders, type RateDecision } from '../src/services/access/index.js';
import type { HttpEnv } from './env.js';

/**
 * The API's rate limit at the edge of each transport (docs/spec/channel-api.md §8, docs/spec/DECISIONS.md "Errors"): every
 * request with a valid credential is charged to its channel, REST 1 point, GraphQL its
 * documentCost (src/graphql/rateLimit.ts), and answered with X-RateLimit-Limit, -Remaining and -Reset (seconds until the
 * window resets); past the limit, 429 RATE_LIMIT_EXCEEDED with Retry-After. A request without a
 * valid credential is never charged: it is refused with 401 (REST) or UNAUTHORIZED (GraphQL)
 * before it costs anything. POST /oauth/token keeps its own per-address limit. A batch costs one
 * point per item (chargeItems).
 */

/** The latest charge of each REST request, so its response reports what was charged last. */
const decisions = new WeakMap<RequestContext, RateDecision>();

function setHeaders(c: Context<HttpEnv>, decision: RateDecision): void {
  for (const [name, value] of Object.entries(rateLimitHeaders(decision))) c.header(name, value);
}

/**
 * REST (v1 and v2): 1 point per request, mounted in each router right after its credential check
 * (so a refused credential is never charged, and the principal is the one the route sees).
 */
export function restRateLimit(deps: AppDeps, surface: RateLimitSurface): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const ctx = c.get('ctx');
    const principal = ctx?.principal;
    if (!principal) return next();
    const decision = await deps.limiters.api.charge(principal.channelId, 1);
    decisions.set(ctx, decision);
    setHeaders(c, decision);
    if (!decision.allowed) {
      deps.metrics.rateLimited(surface);
      throw new RateLimitError(decision.resetSeconds);
    }
    await next();
    // A batch refused for its items (chargeItems) is a refusal of this surface too.
    if (c.error instanceof RateLimitError) deps.metrics.rateLimited(surface);
    // The adapters' error handlers build their own responses; the headers go on whatever came out.
    for (const [name, value] of Object.entries(rateLimitHeaders(decisions.get(ctx) ?? decision))) c.res.headers.set(name, value);
  };
}

/**
 * A request that does the work of `items` requests (a batch) costs batchCost(items) points: the
 * 1 point the edge took, and the rest here, once the route has found the request valid and before
 * it does any work. A batch that does not fit in what is left of the window is refused whole
 * (429; the extra points are not kept, the request's own point is, as for any request the route
 * refuses), and the X-RateLimit-* headers report this charge.
 */
export async function chargeItems(c: Context<HttpEnv>, items: number): Promise<void> {
  const ctx = c.get('ctx');
  const extra = batchCost(items) - 1;
  if (!ctx.principal || extra <= 0) return;
  const decision = await ctx.deps.limiters.api.charge(ctx.principal.channelId, extra);
  decisions.set(ctx, decision);
  setHeaders(c, decision);
  if (decision.allowed) return;
  const cost = batchCost(items);
  const message =
    cost > decision.limit
      ? `This batch costs ${cost} points, more than this channel's limit of ${decision.limit} per window; send fewer items`
      : `Rate limit exceeded: this batch costs ${cost} points (1 per item) and ${decision.remaining} are left; send at most ${decision.remaining} items, or retry in ${decision.resetSeconds} s`;
  throw new RateLimitError(decision.resetSeconds, message, { cost, limit: decision.limit });
}
