import { GraphQLError } from 'graphql';
import type { RequestContext } from '../context.js';
import type { RateDecision } from '../services/access/index.js';
import { RateLimitError } from '../services/kernel/index.js';
import { errorExtensions } from './errors.js';

/**
 * What GraphQL operations are charged to the channel's rate limit, and the refusals when a charge
 * does not fit: the part of src/graphql/rateLimit.ts that the schema's subscription resolver uses
 * too (each event a live subscription executes is charged: chargeEvent), without the cost walk.
 */

export interface Charge {
  cost: number;
  decision: RateDecision;
}

/** What each request (HTTP) or operation (graphql-ws) was charged, by its request context. */
const charges = new WeakMap<RequestContext, Charge>();

export type ChargeSurface = 'graphql' | 'graphql_ws';

/**
 * Charges an operation's cost to the caller's channel, once per request context. Null when the
 * context has no caller (nothing is charged) or was charged already.
 */
export async function charge(ctx: RequestContext | undefined, cost: () => number, surface: ChargeSurface = 'graphql'): Promise<Charge | null> {
  if (!ctx?.principal || charges.has(ctx)) return null;
  const points = cost();
  const decision = await ctx.deps.limiters.api.charge(ctx.principal.channelId, points);
  const charged = { cost: points, decision };
  charges.set(ctx, charged);
  if (!decision.allowed) ctx.deps.metrics.rateLimited(surface);
  return charged;
}

export function chargeOf(ctx: RequestContext | undefined): Charge | undefined {
  return ctx ? charges.get(ctx) : undefined;
}

/**
 * The refusal of a request or operation whose channel this instance knows has no point left in
 * its window (ChannelRateLimits.spentUntilReset), recorded as its charge (so nothing charges it
 * again); null when the channel may still have points. Made before anything is parsed.
 */
export function spentRefusal(ctx: RequestContext | undefined, surface: ChargeSurface): Charge | null {
  if (!ctx?.principal || charges.has(ctx)) return null;
  const decision = ctx.deps.limiters.api.spentUntilReset(ctx.principal.channelId);
  if (!decision) return null;
  const charged = { cost: 1, decision };
  charges.set(ctx, charged);
  ctx.deps.metrics.rateLimited(surface);
  return charged;
}

/**
 * graphql-ws: the one execution that the subscribers of a shared subscription share
 * (src/graphql/multiplex.ts) is no operation of its own: it carries the charge of the subscription
 * that started it, so it is not charged again when it starts (its events are: chargeEvent).
 */
export function shareCharge(shared: RequestContext, from: RequestContext): void {
  const charged = charges.get(from);
  if (charged) charges.set(shared, charged);
}

/** `extensions.rateLimit` of a GraphQL response. */
export function rateLimitExtension({ cost, decision }: Charge) {
  return { cost, limit: decision.limit, remaining: decision.remaining, reset: decision.resetSeconds };
}

/**
 * The refusal of an operation. With `http`, Yoga makes the response a 429 with Retry-After (and
 * leaves `extensions.http` out of the body); graphql-ws has no status to set.
 */
export function rateLimitError(charged: Charge, http: boolean): GraphQLError {
  const refusal = rateLimitRefusal(charged);
  return new GraphQLError(refusal.message, { extensions: errorExtensions(refusal, http && {}) });
}

/** The kernel error of a refused charge: RATE_LIMIT_EXCEEDED with retry_after, cost and limit, and Retry-After. */
export function rateLimitRefusal({ cost, decision }: Charge): RateLimitError {
  const retryAfter = decision.resetSeconds;
  const message =
    cost > decision.limit
      ? `This operation costs ${cost} points, more than this channel's limit of ${decision.limit} per window; ask for fewer items`
      : `Rate limit exceeded: this operation costs ${cost} points and ${decision.remaining} are left; retry in ${retryAfter} s`;
  return new RateLimitError(retryAfter, message, { cost, limit: decision.limit });
}

/** The request context Yoga and graphql-ws carry in the GraphQL context (GraphQLServerContext). */
export function requestContextOf(context: unknown): RequestContext | undefined {
  return (context as { ctx?: RequestContext } | null | undefined)?.ctx;
}

/**
 * Charges the execution of one event of a live subscription (`context`: its GraphQL context) the
 * points its subscription was charged when it subscribed (the document's cost: what the same
 * selection costs as a query), before the selection runs. One execution per SSE subscription; a
 * shared graphql-ws execution (multiplex.ts) is charged once for all its subscribers. Throws the
 * RateLimitError the event is answered with when the channel's points do not cover it (nothing of
 * its selection runs then; the subscription goes on). Nothing is charged for a subscription that
 * was not (no caller).
 */
export async function chargeEvent(context: unknown, event: { id: string; booking: { id: string } }): Promise<void> {
  const ctx = requestContextOf(context);
  const subscribed = chargeOf(ctx);
  if (!ctx?.principal || !subscribed) return;
  const { cost } = subscribed;
  const decision = await ctx.deps.limiters.api.charge(ctx.principal.channelId, cost);
  if (decision.allowed) return;
  ctx.deps.metrics.rateLimited(ctx.sharing ? 'graphql_ws' : 'graphql');
  throw new RateLimitError(
    decision.resetSeconds,
    `Rate limit exceeded: this subscription's selection costs ${cost} points per event and ${decision.remaining} are left; ` +
      `event ${event.id} of booking ${event.booking.id} was not sent (read it with the booking's events); the next events are sent once points are back, in ${decision.resetSeconds} s`,
    { cost, limit: decision.limit, event_id: event.id, booking_id: event.booking.id },
  );
}
