import { callOptions, principalOf, type RequestContext } from '../context.js';
import { freeCancellationBefore } from './cancellation.js';
import { InvalidTokenError, TokenExpiredError } from './errors.js';
import { amountToNumber } from './money.js';
import { findRoomType, getProperty, type CancellationPolicyType } from './properties.js';
import { pricingOf, type Pricing } from './search.js';
import { offerClaims, TokenError, type OfferClaims } from './tokens.js';

/**
 * GET /search/price-check (spec §3.2, §4.4): re-verifies a price_check_token's offer with the
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
  // A rate the provider no longer has cannot be booked: the same answer as sold out.
  if (!checked || checked.status === 'sold_out' || !checked.rate) {
    return { status: 'sold_out', pricing: null, cancellationPolicy: null, bookToken: null, expiresAt: null };
  }

  const property = await getProperty(ctx, offer.property_id);
  const plan = findRoomType(property, offer.roomtype_id).ratePlans.find((p) => p.id === offer.rateplan_id);
  if (!plan) return { status: 'sold_out', pricing: null, cancellationPolicy: null, bookToken: null, expiresAt: null };

  const pricing = pricingOf(checked.rate, offer.currency);
  const expiresAt = new Date(now.getTime() + BOOK_TOKEN_TTL_SECONDS * 1000);
  const bookToken = await ctx.deps.tokens.sign(
    'book',
    {
      ...stripRegistered(offer),
      total_inclusive: amountToNumber(pricing.billableInclusive),
      total_exclusive: amountToNumber(pricing.billableExclusive),
      cancellation_policy: plan.cancellationPolicy,
    },
    { now, ttlSeconds: BOOK_TOKEN_TTL_SECONDS },
  );
  return {
    status: checked.status,
    pricing,
    cancellationPolicy: {
      type: plan.cancellationPolicy,
      freeCancellationBefore: freeCancellationBefore(plan.cancellationPolicy, offer.checkin, property.timezone),
    },
    bookToken,
    expiresAt,
  };
}

/** The offer without the JWT's own claims, to sign into a new token. */
function stripRegistered(offer: OfferClaims & { jti?: string; exp?: number; iat?: number }): OfferClaims {
  const { jti: _jti, exp: _exp, iat: _iat, ...rest } = offer;
  return rest;
}
