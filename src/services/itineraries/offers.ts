import {
  amountToNumber,
  callOptions,
  convertFromKrw,
  ForbiddenError,
  InvalidTokenError,
  principalOf,
  textIn,
  TokenExpiredError,
  type Amount,
  type Currency,
  type Language,
} from '../kernel/index.js';
import type { RequestContext } from '../../context.js';
import type { RoomOccupancy, UpstreamRate } from '../../upstream/protocol.js';
import {
  BOOK_TOKEN_TTL_SECONDS,
  bookClaims,
  checkinInstant,
  freeCancellationBefore,
  normalizeStay,
  offerOf,
  parseOccupancies,
  PENALTY_PERCENT,
  PRICE_CHECK_TTL_SECONDS,
  pricingOf,
  repriceOffer,
  type FieldNames,
  type Stay,
} from '../search/index.js';
import type { CancellationPolicyType, MealPlan, Property, RatePlan } from '../catalog/index.js';
import { TokenError } from '../access/index.js';
import { v2OfferClaims, v2RateId, v2RoomId, type V2OfferClaims } from './ids.js';

/**
 * Steps 1 and 2 of the v2 flow (docs/spec/channel-api.md §4.6, §2.9, §3.2, §7; docs/spec/DECISIONS.md "v2 details"):
 * availability of several properties with a price-check link per bookable rate and bed group,
 * and the price check behind that link, which answers with a book link. The caller follows the
 * links as given; every link carries a signed token with its context (v2OfferClaims).
 *
 * These build the v2 wire shapes themselves (snake_case, amounts as numbers in the request
 * currency's minor units, as v1): v2 is a REST-only generation and the booking steps reuse
 * occupancyPricing, cancelPenalties and stepLink from here. Links are returned as the step they
 * lead to and its token (StepLink); the REST adapter spells method and href
 * (rest-adapters/v2/links.ts).
 */

/** The v2 spelling of the search fields, for errors raised across fields. */
export const V2_NAMES: FieldNames = {
  checkin: 'checkin',
  checkout: 'checkout',
  adults: 'occupancy',
  occupancy: 'occupancy',
  children: 'occupancy',
  childrenAges: 'occupancy',
  rooms: 'occupancy',
  priceMin: 'price_min',
  priceMax: 'price_max',
};

// ---------------------------------------------------------------------------------------------
// Shared v2 structures

/** docs/spec/channel-api.md §2.9: the next step of the flow a link leads to (its path parameters, if any). */
export type V2Step =
  | { step: 'price_check'; propertyId: number; roomId: string; rateId: string }
  | { step: 'book' }
  | { step: 'retrieve' }
  | { step: 'cancel' };

/** A link to the next step: the step, its signed token and when it lapses (null: never, retrieve). */
export type StepLink = V2Step & { token: string; expires: Date | null };

export function stepLink(to: V2Step, token: string, expires: Date | null): StepLink {
  return { ...to, token, expires };
}

export interface PriceLine {
  type: 'base_rate' | 'tax_and_service_fee';
  currency: Currency;
  value: number;
}

export interface MoneyValue {
  currency: string;
  value: number;
}

/** One room's price for the stay (one entry of `occupancy_pricing`). */
export interface OccupancyPrice {
  /** Per night, in stay order: the base rate and the tax and service fee of one room. */
  nightly: PriceLine[][];
  totals: {
    inclusive: { request_currency: MoneyValue; billable_currency: MoneyValue };
    exclusive: { request_currency: MoneyValue; billable_currency: MoneyValue };
  };
}

/** A room's party as an occupancy key: `<adults>` or `<adults>-<age>,<age>`, no leading zeros. */
export function occupancyKey(room: RoomOccupancy): string {
  return room.children_ages.length ? `${room.adults}-${room.children_ages.join(',')}` : String(room.adults);
}

/**
 * `occupancy_pricing`: one entry per distinct occupancy of the request, each the price of one room
 * (the provider prices per room, so every room of a rate costs the same). Two identical rooms
 * share one key; the totals signed into the link token are for every room.
 */
export function occupancyPricing(rate: Pick<UpstreamRate, 'nights'>, occupancy: RoomOccupancy[], currency: Currency): Record<string, OccupancyPrice> {
  const base = rate.nights.reduce((sum, n) => sum + BigInt(n.base), 0n);
  const taxes = rate.nights.reduce((sum, n) => sum + BigInt(n.tax_and_fees), 0n);
  const money = (krw: Amount) => ({
    request_currency: { currency, value: amountToNumber(convertFromKrw(krw, currency)) },
    billable_currency: { currency: 'KRW', value: amountToNumber(krw) },
  });
  const price: OccupancyPrice = {
    nightly: rate.nights.map((n) => [
      { type: 'base_rate', currency, value: amountToNumber(convertFromKrw(BigInt(n.base), currency)) },
      { type: 'tax_and_service_fee', currency, value: amountToNumber(convertFromKrw(BigInt(n.tax_and_fees), currency)) },
    ]),
    totals: { inclusive: money(base + taxes), exclusive: money(base) },
  };
  const pricing: Record<string, OccupancyPrice> = {};
  for (const room of occupancy) pricing[occupancyKey(room)] = structuredClone(price);
  return pricing;
}

/**
 * A penalty window (Rapid-like): cancelling between `start` and `end` costs `percent` of the
 * total, which is `amount` in `currency` for the rooms the total covers. No window, no penalty.
 */
export interface CancelPenalty {
  start: string;
  end: string;
  percent: number;
  amount: number;
  currency: Currency;
}

/**
 * `cancel_penalties` of a policy (docs/spec/channel-api.md §2.6, docs/spec/DECISIONS.md: deadlines from 15:00 local on the
 * check-in date): one window from the end of free cancellation (for non_refundable, from `now`)
 * to 15:00 local on the check-in date. The amount is the fee the cancellation rule charges on
 * `totalKrw` (src/services/search/cancellation.ts: rounded down), shown in the request currency.
 */
export function cancelPenalties(
  policy: CancellationPolicyType,
  stay: { checkin: string; timezone: string },
  totalKrw: Amount,
  currency: Currency,
  now: Date,
): CancelPenalty[] {
  const percent = PENALTY_PERCENT[policy];
  const start = freeCancellationBefore(policy, stay.checkin, stay.timezone) ?? now;
  const end = checkinInstant(stay.checkin, stay.timezone);
  const fee = (totalKrw * BigInt(percent)) / 100n;
  return [
    {
      start: start.toISOString(),
      end: (end > start ? end : start).toISOString(),
      percent,
      amount: amountToNumber(convertFromKrw(fee, currency)),
      currency,
    },
  ];
}

/** `amenities` of a rate, keyed by id as Rapid does: what the rate plan includes (its meal plan and the like), named in `language`. */
export function rateAmenities(plan: Pick<RatePlan, 'amenities'>, language: Language): Record<string, { id: string; name: string }> {
  return Object.fromEntries(plan.amenities.map((a) => [a.code, { id: a.code, name: textIn(a.name, language) }]));
}

// ---------------------------------------------------------------------------------------------
// Step 1: availability

export interface V2AvailabilityInput {
  checkin: string;
  checkout: string;
  /** One per room, already checked by occupancyText. */
  occupancies: string[];
  propertyIds: number[];
  currency: Currency;
  /** The language of names and descriptions (the `language` parameter; an unsupported one falls back to the default). */
  language: Language;
}

export interface V2BedGroup {
  id: string;
  description: string;
  /** `price_check` only when the rate can be booked for the whole party. */
  links: { price_check?: StepLink };
}

export interface V2Rate {
  id: string;
  status: 'available' | 'sold_out';
  available_rooms: number;
  refundable: boolean;
  occupancy_pricing: Record<string, OccupancyPrice>;
  bed_groups: Record<string, V2BedGroup>;
  cancel_penalties: CancelPenalty[];
  amenities: Record<string, { id: string; name: string }>;
  promotions: null;
  deposits: never[];
}

export interface V2Room {
  id: string;
  room_name: string;
  rates: V2Rate[];
}

export interface V2PropertyAvailability {
  property_id: string;
  /** `available` when some rate has enough rooms for the whole party. */
  status: 'available' | 'unavailable';
  rooms: V2Room[];
}

/**
 * GET /api/channel/v2/properties/availability: one provider call (`detail: rates`) for every
 * property asked, then one object per property the provider knows, in the order asked (unknown
 * ids are left out, as a multi-property search does). Every rate whose room fits each room of
 * the party is listed; only those with enough rooms free carry price-check links, one per bed
 * group, valid 30 minutes.
 */
export async function v2Availability(ctx: RequestContext, input: V2AvailabilityInput): Promise<V2PropertyAvailability[]> {
  const now = ctx.deps.clock();
  const occupancy = parseOccupancies(input.occupancies);
  const stay = normalizeStay({ checkin: input.checkin, checkout: input.checkout, occupancy }, now, V2_NAMES);
  const propertyIds = [...new Set(input.propertyIds)];

  const [{ results }, properties] = await Promise.all([
    ctx.deps.upstream.availability(
      { checkin: stay.checkin, checkout: stay.checkout, occupancy: stay.occupancy, property_ids: propertyIds, detail: 'rates' },
      callOptions(ctx),
    ),
    Promise.all(propertyIds.map((id) => ctx.loaders.property.load(id))),
  ]);
  const byId = new Map(results.map((r) => [r.property_id, r]));
  const expires = new Date(now.getTime() + PRICE_CHECK_TTL_SECONDS * 1000);

  const answer: V2PropertyAvailability[] = [];
  for (const [i, id] of propertyIds.entries()) {
    const property = properties[i];
    const result = byId.get(id);
    if (!result || !property) continue;
    const rates = new Map(result.rates.map((r) => [r.rateplan_id, r]));
    const rooms: V2Room[] = [];
    for (const room of property.roomTypes) {
      const offers = await Promise.all(
        room.ratePlans.flatMap((plan) => {
          const rate = rates.get(plan.id);
          return rate ? [v2Rate(ctx, { property, plan, rate, stay, currency: input.currency, now, expires, language: input.language })] : [];
        }),
      );
      if (offers.length) rooms.push({ id: v2RoomId(property.id, room.id), room_name: textIn(room.name, input.language), rates: offers });
    }
    const available = rooms.some((r) => r.rates.some((rate) => rate.status === 'available'));
    answer.push({ property_id: String(property.id), status: available ? 'available' : 'unavailable', rooms });
  }
  return answer;
}

async function v2Rate(
  ctx: RequestContext,
  o: { property: Property; plan: RatePlan; rate: UpstreamRate; stay: Stay; currency: Currency; now: Date; expires: Date; language: Language },
): Promise<V2Rate> {
  const { property, plan, rate, stay, currency, now } = o;
  const bookable = rate.available_rooms >= stay.occupancy.length;
  const pricing = pricingOf(rate, currency);
  const roomId = v2RoomId(property.id, plan.roomtypeId);
  const rateId = v2RateId(property.id, plan.roomtypeId, plan.id);
  const room = property.roomTypes.find((r) => r.id === plan.roomtypeId);

  const bedGroups: Record<string, V2BedGroup> = {};
  const signed = (room?.bedGroups ?? []).map(async (bed) => {
    const links: V2BedGroup['links'] = {};
    if (bookable) {
      const claims: V2OfferClaims = { ...offerOf(ctx, property, plan, stay, pricing), room_id: roomId, rate_id: rateId, bed_group_id: bed.id };
      const token = await ctx.deps.tokens.sign('v2_price_check', claims, { now, ttlSeconds: PRICE_CHECK_TTL_SECONDS });
      links.price_check = stepLink({ step: 'price_check', propertyId: property.id, roomId, rateId }, token, o.expires);
    }
    return { id: bed.id, description: textIn(bed.description, o.language), links };
  });
  for (const bed of await Promise.all(signed)) bedGroups[bed.id] = bed;

  return {
    id: rateId,
    status: bookable ? 'available' : 'sold_out',
    available_rooms: rate.available_rooms,
    refundable: plan.refundable,
    occupancy_pricing: occupancyPricing(rate, stay.occupancy, currency),
    bed_groups: bedGroups,
    cancel_penalties: cancelPenalties(plan.cancellationPolicy, { checkin: stay.checkin, timezone: property.timezone }, pricing.billableInclusive, currency, now),
    amenities: rateAmenities(plan, o.language),
    promotions: null,
    deposits: [],
  };
}

// ---------------------------------------------------------------------------------------------
// Step 2: price check

export interface V2PriceCheckInput {
  propertyId: string;
  roomId: string;
  rateId: string;
  token: string;
}

export type V2PriceCheckResult =
  | {
      status: 'matched' | 'price_changed';
      /** The latest prices, one room per occupancy key (as step 1). */
      occupancy_pricing: Record<string, OccupancyPrice>;
      refundable: boolean;
      cancel_penalties: CancelPenalty[];
      links: { book: StepLink };
    }
  | {
      /** The rooms were taken since step 1 (or the rate is gone): no book link; restart at step 1. */
      status: 'sold_out';
      occupancy_pricing: null;
      refundable: null;
      cancel_penalties: null;
      links: Record<string, never>;
    };

/** The claims of a verified v2 link token, or the v2 token error (docs/spec/channel-api.md §7). */
export async function verifyV2Token(ctx: RequestContext, kind: 'v2_price_check' | 'v2_book', token: string) {
  try {
    return await ctx.deps.tokens.verify(kind, token, v2OfferClaims, { now: ctx.deps.clock(), channelId: principalOf(ctx).channelId });
  } catch (error) {
    if (!(error instanceof TokenError)) throw error;
    if (error.reason === 'expired') throw new TokenExpiredError('The link has expired; restart at step 1 (availability)');
    // Malformed, altered, of another kind or another channel's: all the same to the caller.
    throw new InvalidTokenError('The token is not valid; restart at step 1 (availability)');
  }
}

/**
 * GET /api/channel/v2/properties/{propertyId}/rooms/{roomId}/rates/{rateId}?token=: the path must
 * be the token's (403 FORBIDDEN otherwise); the offer is re-priced with the provider (the same
 * step as v1's price check) and, unless it sold out, answered with a book link whose token
 * carries the latest KRW totals and the rate's cancellation policy, valid 30 minutes.
 */
export async function v2PriceCheck(ctx: RequestContext, input: V2PriceCheckInput): Promise<V2PriceCheckResult> {
  const offer = await verifyV2Token(ctx, 'v2_price_check', input.token);
  if (input.propertyId !== String(offer.property_id) || input.roomId !== offer.room_id || input.rateId !== offer.rate_id) {
    throw new ForbiddenError('The path does not match the token; call the href as given');
  }

  const repriced = await repriceOffer(ctx, offer);
  if (repriced.status === 'sold_out') {
    return { status: 'sold_out', occupancy_pricing: null, refundable: null, cancel_penalties: null, links: {} };
  }
  const now = ctx.deps.clock();
  const expires = new Date(now.getTime() + BOOK_TOKEN_TTL_SECONDS * 1000);
  const token = await ctx.deps.tokens.sign('v2_book', bookClaims(offer, repriced), { now, ttlSeconds: BOOK_TOKEN_TTL_SECONDS });
  return {
    status: repriced.status,
    occupancy_pricing: occupancyPricing(repriced.rate, offer.occupancy, offer.currency),
    refundable: repriced.plan.refundable,
    cancel_penalties: cancelPenalties(
      repriced.plan.cancellationPolicy,
      { checkin: offer.checkin, timezone: repriced.property.timezone },
      repriced.pricing.billableInclusive,
      offer.currency,
      now,
    ),
    links: { book: stepLink({ step: 'book' }, token, expires) },
  };
}
