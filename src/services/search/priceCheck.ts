import { amountToNumber, callOptions, InvalidTokenError, principalOf, TokenExpiredError } from '../kernel/index.js';
import type { RequestContext } from '../../context.js';
import { freeCancellationBefore } from './cancellation.js';
import type { UpstreamRate } from '../../upstream/protocol.js';
import { findRoomType, getProperty, type CancellationPolicyType, type Property, type RatePlan } from '../catalog/index.js';
import { pricingOf, type Pricing } from './offers.js';
import { offerClaims, TokenError, type OfferClaims } from '../access/index.js';

/**
 * GET /search/price-check (docs/spec/channel-api.md §3.2, §4.4): re-verifies a price_check_token's offer with the
 * provider and, unless it sold out, issues a single-use book_token carrying the inclusive amount
 * that will be charged (the latest price when it moved).
 */

/** How long a book_token stays valid after the price check (as v2's book link: 30 minutes). */
export const BOOK_TOKEN_TTL_SECONDS = 30 * 60;

export interface PriceCheckResult {
  status: 'matched' | 'price_changed' | 'sold_out';
  pricing: Pricing | null;
  cancellationPolicy: { type: CancellationPolicyType; freeCancellationBefore: Date | null } | null;
  bookToken: string | null;
  expiresAt: Date | null;
}

export async function priceCheck(ctx: RequestContext, token: string): Promise<PriceCheckResult> {
  const channelId = principalOf(ctx).channelId;
  const now = ctx.deps.clock();
  let offer: OfferClaims;
  try {
    offer = await ctx.deps.tokens.verify('price_check', token, offerClaims, { now, channelId });
  } catch (error) {
    if (!(error instanceof TokenError)) throw error;
    if (error.reason === 'expired') throw new TokenExpiredError();
    // Malformed, altered, of another kind or another channel's: all the same to the caller.
    throw new InvalidTokenError();
  }

  const repriced = await repriceOffer(ctx, offer);
  if (repriced.status === 'sold_out') {
    return { status: 'sold_out', pricing: null, cancellationPolicy: null, bookToken: null, expiresAt: null };
  }
  const { pricing, plan, property } = repriced;
  const expiresAt = new Date(now.getTime() + BOOK_TOKEN_TTL_SECONDS * 1000);
  const bookToken = await ctx.deps.tokens.sign('book', bookClaims(offer, repriced), { now, ttlSeconds: BOOK_TOKEN_TTL_SECONDS });
  return {
    status: repriced.status,
    pricing,
    cancellationPolicy: {
      type: plan.cancellationPolicy,
      freeCancellationBefore: freeCancellationBefore(plan.cancellationPolicy, offer.checkin, property.timezone),
    },
    bookToken,
    expiresAt,
  };
}

/** What the provider says of an offer now: its latest rate and pricing, or sold out. */
export type Repriced =
  | { status: 'sold_out' }
  | { status: 'matched' | 'price_changed'; rate: UpstreamRate; pricing: Pricing; plan: RatePlan; property: Property };

/**
 * The shared step of every price check (v1 and v2): asks the provider to re-price the offer a
 * verified token stands for. A rate the provider no longer has, or one the catalog no longer
 * lists, cannot be booked: the same answer as sold out.
 */
export async function repriceOffer(ctx: RequestContext, offer: OfferClaims): Promise<Repriced> {
  const checked = await ctx.deps.upstream.priceCheck(
    {
      property_id: offer.property_id,
      roomtype_id: offer.roomtype_id,
      rateplan_id: offer.rateplan_id,
      checkin: offer.checkin,
      checkout: offer.checkout,
      occupancy: offer.occupancy,
      expected_total: offer.total_inclusive,
    },
    callOptions(ctx),
  );
  if (!checked || checked.status === 'sold_out' || !checked.rate) return { status: 'sold_out' };

  const property = await getProperty(ctx, offer.property_id);
  const plan = findRoomType(property, offer.roomtype_id).ratePlans.find((p) => p.id === offer.rateplan_id);
  if (!plan) return { status: 'sold_out' };
  return { status: checked.status, rate: checked.rate, pricing: pricingOf(checked.rate, offer.currency), plan, property };
}

/**
 * The claims of a book token for a re-priced offer: the offer (and, for v2, its path context)
 * with the latest KRW totals, which are what the booking charges, and the rate's policy.
 */
export function bookClaims<T extends OfferClaims>(
  offer: T & { jti?: string; exp?: number | undefined; iat?: number },
  repriced: Extract<Repriced, { pricing: Pricing }>,
): T {
  return {
    ...stripRegistered(offer),
    total_inclusive: amountToNumber(repriced.pricing.billableInclusive),
    total_exclusive: amountToNumber(repriced.pricing.billableExclusive),
    cancellation_policy: repriced.plan.cancellationPolicy,
  };
}

/** The offer without the JWT's own claims, to sign into a new token. */
function stripRegistered<T extends OfferClaims>(offer: T & { jti?: string; exp?: number | undefined; iat?: number }): T {
  const { jti: _jti, exp: _exp, iat: _iat, ...rest } = offer;
  return rest as unknown as T;
}
