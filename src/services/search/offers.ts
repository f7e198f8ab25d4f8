import type { RequestContext } from '../../context.js';
import type { UpstreamRate } from '../../upstream/protocol.js';
import { freeCancellationBefore } from './cancellation.js';
import { amountToNumber, callOptions, convertFromKrw, NotFoundError, principalOf, textIn, ValidationError, type Amount, type Currency } from '../kernel/index.js';
import { findRoomType, getProperty, type CancellationPolicyType, type Property, type RatePlan } from '../catalog/index.js';
import type { OfferClaims } from '../access/index.js';
import { DAY_MS, type FieldNames, PRICE_CHECK_TTL_SECONDS, SNAKE_NAMES, type Stay, type StayInput, normalizeStay } from './rules.js';

// ---------------------------------------------------------------------------------------------
// One property: rates with price-check tokens, and the detailed rates of GET /search/rates

export interface Pricing {
  requestCurrency: Currency;
  billableCurrency: 'KRW';
  /** In the request currency (minor units). */
  inclusive: Amount;
  exclusive: Amount;
  /** What the channel is billed, KRW. */
  billableInclusive: Amount;
  billableExclusive: Amount;
}

export interface NightLine {
  date: string;
  /** For all rooms of the party, in the request currency. */
  baseRate: Amount;
  taxAndServiceFee: Amount;
}

export interface RateOffer {
  rateplanId: string;
  roomtypeId: string;
  name: string;
  mealPlan: RatePlan['mealPlan'];
  refundable: boolean;
  cancellationPolicy: { type: CancellationPolicyType; freeCancellationBefore: Date | null };
  availableRooms: number;
  bookable: boolean;
  pricing: Pricing;
  nightly: NightLine[];
  /** Null when the rate cannot be booked for this party. */
  priceCheckToken: string | null;
  expiresAt: Date | null;
}

export interface RoomOffers {
  roomtypeId: string;
  name: string;
  maxOccupancy: number;
  /** In the request's language. */
  bedGroups: { id: string; description: string }[];
  rates: RateOffer[];
}

export interface PropertyOffers {
  property: Property;
  stay: Stay;
  currency: Currency;
  roomTypes: RoomOffers[];
}

export interface PropertySearchInput extends StayInput {
  propertyId: number;
  currency?: Currency | undefined;
  roomtypeId?: string | undefined;
  rateplanId?: string | undefined;
}

/**
 * GET /search/availability/{propertyId}: every rate that fits the party, each bookable one with a
 * signed price_check_token. `roomtype_id` narrows to one room type and, as the specification
 * says, to its first rate plan unless `rateplan_id` names another.
 */
export async function propertyAvailability(
  ctx: RequestContext,
  input: PropertySearchInput,
  options: { names?: FieldNames; withTokens: boolean } = { withTokens: true },
): Promise<PropertyOffers> {
  const stay = normalizeStay(input, ctx.deps.clock(), options.names ?? SNAKE_NAMES);
  const property = await getProperty(ctx, input.propertyId);
  const selected = selectRates(property, input.roomtypeId, input.rateplanId);
  const currency = input.currency ?? 'KRW';

  const { results } = await ctx.deps.upstream.availability(
    { checkin: stay.checkin, checkout: stay.checkout, occupancy: stay.occupancy, property_ids: [property.id], detail: 'rates' },
    callOptions(ctx),
  );
  return propertyOffers(ctx, { property, stay, currency, selected, rates: results[0]?.rates ?? [], withTokens: options.withTokens });
}

/**
 * One property's offers from the provider's rates (`detail: rates`) for a stay: by room type, in
 * catalog order, narrowed to the selected rate plans; tokens for the bookable ones when asked.
 */
export async function propertyOffers(
  ctx: RequestContext,
  input: { property: Property; stay: Stay; currency: Currency; selected: Set<string> | null; rates: UpstreamRate[]; withTokens: boolean },
): Promise<PropertyOffers> {
  const { property, stay, currency, selected } = input;
  const rates = new Map(input.rates.map((r) => [r.rateplan_id, r]));
  const roomTypes: RoomOffers[] = [];
  for (const room of property.roomTypes) {
    const offers: RateOffer[] = [];
    for (const plan of room.ratePlans) {
      const rate = rates.get(plan.id);
      if (!rate || (selected && !selected.has(plan.id))) continue;
      offers.push(await offer(ctx, property, plan, rate, stay, currency, input.withTokens));
    }
    if (offers.length) {
      const language = ctx.language;
      roomTypes.push({
        roomtypeId: room.id,
        name: textIn(room.name, language),
        maxOccupancy: room.maxOccupancy,
        bedGroups: room.bedGroups.map((b) => ({ id: b.id, description: textIn(b.description, language) })),
        rates: offers,
      });
    }
  }
  return { property, stay, currency, roomTypes };
}

/** The rate plans a request selects, or null for all; unknown ids are 404. */
export function selectRates(property: Property, roomtypeId?: string, rateplanId?: string): Set<string> | null {
  if (rateplanId !== undefined) {
    const rooms = roomtypeId === undefined ? property.roomTypes : [findRoomType(property, roomtypeId)];
    const plan = rooms.flatMap((r) => r.ratePlans).find((p) => p.id === rateplanId);
    if (!plan) throw new NotFoundError(`Rate plan ${rateplanId} was not found at property ${property.id}`);
    return new Set([plan.id]);
  }
  if (roomtypeId !== undefined) {
    const room = findRoomType(property, roomtypeId);
    return new Set(room.ratePlans.slice(0, 1).map((p) => p.id));
  }
  return null;
}

async function offer(
  ctx: RequestContext,
  property: Property,
  plan: RatePlan,
  rate: UpstreamRate,
  stay: Stay,
  currency: Currency,
  withToken: boolean,
): Promise<RateOffer> {
  const rooms = BigInt(stay.occupancy.length);
  const bookable = rate.available_rooms >= stay.occupancy.length;
  const pricing = pricingOf(rate, currency);
  let priceCheckToken: string | null = null;
  let expiresAt: Date | null = null;
  if (withToken && bookable) {
    const now = ctx.deps.clock();
    expiresAt = new Date(now.getTime() + PRICE_CHECK_TTL_SECONDS * 1000);
    priceCheckToken = await ctx.deps.tokens.sign('price_check', offerOf(ctx, property, plan, stay, pricing), {
      now,
      ttlSeconds: PRICE_CHECK_TTL_SECONDS,
    });
  }
  return {
    rateplanId: plan.id,
    roomtypeId: plan.roomtypeId,
    name: textIn(plan.name, ctx.language),
    mealPlan: plan.mealPlan,
    refundable: plan.refundable,
    cancellationPolicy: {
      type: plan.cancellationPolicy,
      freeCancellationBefore: freeCancellationBefore(plan.cancellationPolicy, stay.checkin, property.timezone),
    },
    availableRooms: rate.available_rooms,
    bookable,
    pricing,
    nightly: rate.nights.map((n) => ({
      date: n.date,
      baseRate: convertFromKrw(BigInt(n.base) * rooms, currency),
      taxAndServiceFee: convertFromKrw(BigInt(n.tax_and_fees) * rooms, currency),
    })),
    priceCheckToken,
    expiresAt,
  };
}

/** The offer a price-check token (v1, or a v2 link) stands for: the rate, the stay, the party, the KRW totals. */
export function offerOf(ctx: RequestContext, property: Property, plan: RatePlan, stay: Stay, pricing: Pricing): OfferClaims {
  return {
    channel_id: principalOf(ctx).channelId,
    property_id: property.id,
    roomtype_id: plan.roomtypeId,
    rateplan_id: plan.id,
    checkin: stay.checkin,
    checkout: stay.checkout,
    occupancy: stay.occupancy,
    currency: pricing.requestCurrency,
    total_inclusive: amountToNumber(pricing.billableInclusive),
    total_exclusive: amountToNumber(pricing.billableExclusive),
  };
}

/** A provider rate's totals: in the request currency, and in KRW as billed. */
export function pricingOf(rate: UpstreamRate, currency: Currency): Pricing {
  const billableInclusive = inclusive(rate);
  const billableExclusive = BigInt(rate.total_base);
  return {
    requestCurrency: currency,
    billableCurrency: 'KRW',
    inclusive: convertFromKrw(billableInclusive, currency),
    exclusive: convertFromKrw(billableExclusive, currency),
    billableInclusive,
    billableExclusive,
  };
}

export function inclusive(rate: UpstreamRate): Amount {
  return BigInt(rate.total_base) + BigInt(rate.total_tax_and_fees);
}

export function divideRounded(amount: Amount, by: number): Amount {
  const d = BigInt(by);
  return (2n * amount + d) / (2n * d);
}

export interface RatesInput {
  propertyId: number;
  checkin?: string | undefined;
  checkout?: string | undefined;
  adults?: number | undefined;
  currency?: Currency | undefined;
}

/**
 * GET /search/rates: the detailed rates of one property (nightly lines, every rate plan), the
 * second search step. Without dates: tomorrow in the property's time zone, one night; two adults.
 */
export async function searchRates(ctx: RequestContext, input: RatesInput, names: FieldNames = SNAKE_NAMES): Promise<PropertyOffers> {
  if ((input.checkin === undefined) !== (input.checkout === undefined)) {
    const missing = input.checkin === undefined ? names.checkin : names.checkout;
    throw new ValidationError([{ field: missing, reason: `give both ${names.checkin} and ${names.checkout}, or neither` }]);
  }
  let { checkin, checkout } = input;
  if (checkin === undefined || checkout === undefined) {
    const property = await getProperty(ctx, input.propertyId);
    const today = localDate(ctx.deps.clock(), property.timezone);
    checkin = addDays(today, 1);
    checkout = addDays(today, 2);
  }
  return propertyAvailability(
    ctx,
    { propertyId: input.propertyId, checkin, checkout, adults: input.adults ?? 2, currency: input.currency },
    { names, withTokens: false },
  );
}

export function localDate(at: Date, timezone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}
