import { z } from 'zod';
import {
  callOptions,
  principalOf,
  NotFoundError,
  ValidationError,
  type FieldIssue,
  amountToNumber,
  convertFromKrw,
  currencySchema,
  type Amount,
  type Currency,
} from '../kernel/index.js';
import type { RequestContext } from '../../context.js';
import type { RoomOccupancy, UpstreamRate } from '../../upstream/protocol.js';
import { freeCancellationBefore } from './cancellation.js';
import { findRoomType, getProperty, type CancellationPolicyType, type Property, type RatePlan } from '../catalog/properties.js';
import type { OfferClaims } from '../access/index.js';

/**
 * Availability search (spec §4.4), one service for REST v1, v2 and GraphQL. Field rules are zod
 * schemas the adapters compose; rules across fields live in the normalize functions, which name
 * fields as the caller's surface spells them.
 */

const DAY_MS = 86_400_000;
export const MAX_NIGHTS = 30;
export const MAX_ROOMS = 8;
/** How long a price_check_token stays valid (DECISIONS.md: 30 minutes). */
export const PRICE_CHECK_TTL_SECONDS = 30 * 60;

const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'a date as YYYY-MM-DD', abort: true })
  .refine((v) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v), 'not a calendar date');

function parseOccupancy(value: string): RoomOccupancy {
  const [adults, ages] = value.split('-');
  return { adults: Number(adults), children_ages: ages ? ages.split(',').map(Number) : [] };
}

/** One room's party: `<adults>` or `<adults>-<age>,<age>` (the v2 occupancy form), checked. */
export const occupancyText = z
  .string()
  .regex(/^\d{1,2}(-\d{1,2}(,\d{1,2})*)?$/, { message: 'occupancy as <adults> or <adults>-<age>,<age>', abort: true })
  .superRefine((value, ctx) => {
    const room = parseOccupancy(value);
    if (room.adults < 1 || room.adults > 8) ctx.addIssue({ code: 'custom', message: 'adults per room must be 1 to 8' });
    if (room.children_ages.length > 6) ctx.addIssue({ code: 'custom', message: 'at most 6 children per room' });
    if (room.children_ages.some((a) => a > 17)) ctx.addIssue({ code: 'custom', message: 'child ages are 0 to 17' });
  });

/** The same, parsed into a room's party. */
export const occupancyString = occupancyText.transform(parseOccupancy);

/** Occupancy strings already checked by occupancyText. */
export function parseOccupancies(values: string[]): RoomOccupancy[] {
  return values.map(parseOccupancy);
}

export const SORTS = ['price_asc', 'price_desc', 'star_rating'] as const;
export type SortBy = (typeof SORTS)[number];

/** Per-field rules, shared by every surface. */
export const searchRules = {
  checkin: isoDate,
  checkout: isoDate,
  adults: z.int().min(1).max(MAX_ROOMS * 8),
  children: z.int().min(0).max(MAX_ROOMS * 6),
  childrenAges: z.array(z.int().min(0).max(17)).max(MAX_ROOMS * 6),
  rooms: z.int().min(1).max(MAX_ROOMS),
  occupancy: z.array(occupancyString).min(1).max(MAX_ROOMS),
  /** The same rule typed as text: a GraphQL argument validator must output the argument's own type. */
  occupancyText: z.array(occupancyText).min(1).max(MAX_ROOMS),
  currency: currencySchema,
  propertyIds: z.array(z.int().positive().max(2_147_483_647)).min(1).max(100),
  propertyId: z.int().positive().max(2_147_483_647),
  city: z.string().trim().min(1).max(100),
  starRatingMin: z.number().min(0).max(5),
  price: z.number().min(0).max(1e15),
  sortBy: z.enum(SORTS),
  page: z.int().min(1).max(10_000),
  perPage: z.int().min(1).max(100),
  roomtypeId: z.string().min(1).max(100),
  rateplanId: z.string().min(1).max(100),
};

/** Names of fields as a surface spells them, for errors raised across fields. */
export type FieldNames = Record<'checkin' | 'checkout' | 'adults' | 'occupancy' | 'children' | 'childrenAges' | 'rooms' | 'priceMin' | 'priceMax', string>;

export const SNAKE_NAMES: FieldNames = {
  checkin: 'checkin',
  checkout: 'checkout',
  adults: 'adults',
  occupancy: 'occupancy',
  children: 'children',
  childrenAges: 'children_ages',
  rooms: 'rooms',
  priceMin: 'price_min',
  priceMax: 'price_max',
};

export interface StayInput {
  checkin: string;
  checkout: string;
  adults?: number | undefined;
  occupancy?: RoomOccupancy[] | undefined;
  children?: number | undefined;
  childrenAges?: number[] | undefined;
  rooms?: number | undefined;
}

export interface Stay {
  checkin: string;
  checkout: string;
  nights: number;
  /** One entry per room. */
  occupancy: RoomOccupancy[];
}

/** A child whose age was not given is taken as this age (docs/decisions.md). */
export const ASSUMED_CHILD_AGE = 8;

/**
 * Dates and party, checked across fields: checkout after checkin, at most 30 nights, not in the
 * past; `adults` (with `children` and `rooms`, spread over the rooms) or `occupancy` per room.
 */
export function normalizeStay(input: StayInput, now: Date, names: FieldNames): Stay {
  const issues: FieldIssue[] = [];
  const checkin = Date.parse(`${input.checkin}T00:00:00Z`);
  const checkout = Date.parse(`${input.checkout}T00:00:00Z`);
  const nights = Math.round((checkout - checkin) / DAY_MS);
  // "Today" anywhere on earth: the date at UTC-12 is the earliest one still current.
  const earliest = new Date(now.getTime() - 12 * 3_600_000).toISOString().slice(0, 10);
  if (input.checkin < earliest) issues.push({ field: names.checkin, reason: 'must not be in the past' });
  if (checkin > now.getTime() + 500 * DAY_MS) issues.push({ field: names.checkin, reason: 'must be within 500 days' });
  if (nights < 1) issues.push({ field: names.checkout, reason: 'must be after checkin' });
  else if (nights > MAX_NIGHTS) issues.push({ field: names.checkout, reason: `a stay is at most ${MAX_NIGHTS} nights` });

  let occupancy: RoomOccupancy[] = [];
  if (input.occupancy !== undefined) {
    if (input.adults !== undefined) issues.push({ field: names.adults, reason: `cannot be combined with ${names.occupancy}` });
    if (input.children !== undefined || input.childrenAges !== undefined) {
      issues.push({ field: names.children, reason: `children go in ${names.occupancy} (<adults>-<age>,<age>)` });
    }
    if (input.rooms !== undefined && input.rooms !== input.occupancy.length) {
      issues.push({ field: names.rooms, reason: `must equal the number of ${names.occupancy} values (${input.occupancy.length})` });
    }
    occupancy = input.occupancy;
  } else if (input.adults === undefined) {
    issues.push({ field: names.adults, reason: `give ${names.adults} or ${names.occupancy}` });
  } else {
    const rooms = input.rooms ?? 1;
    const ages = input.childrenAges;
    const children = input.children ?? ages?.length ?? 0;
    if (ages !== undefined && ages.length !== children) {
      issues.push({ field: names.childrenAges, reason: `give one age per child (${children})` });
    }
    if (input.adults < rooms) issues.push({ field: names.adults, reason: `every room needs an adult (${rooms} rooms)` });
    else occupancy = spread(input.adults, ages ?? Array<number>(children).fill(ASSUMED_CHILD_AGE), rooms);
    if (occupancy.some((r) => r.adults > 8 || r.children_ages.length > 6)) {
      issues.push({ field: names.rooms, reason: 'at most 8 adults and 6 children per room; ask for more rooms' });
    }
  }
  if (issues.length) throw new ValidationError(issues);
  return { checkin: input.checkin, checkout: input.checkout, nights, occupancy };
}

/** Adults and children spread over rooms as evenly as possible, the larger shares first. */
function spread(adults: number, childAges: number[], rooms: number): RoomOccupancy[] {
  return Array.from({ length: rooms }, (_, i) => ({
    adults: Math.floor(adults / rooms) + (i < adults % rooms ? 1 : 0),
    children_ages: childAges.filter((_, c) => c % rooms === i),
  }));
}

export function partySize(occupancy: RoomOccupancy[]): { adults: number; children: number } {
  return {
    adults: occupancy.reduce((n, r) => n + r.adults, 0),
    children: occupancy.reduce((n, r) => n + r.children_ages.length, 0),
  };
}

// ---------------------------------------------------------------------------------------------
// Multi-property search

export interface MultiSearchInput extends StayInput {
  currency?: Currency | undefined;
  propertyIds?: number[] | undefined;
  city?: string | undefined;
  starRatingMin?: number | undefined;
  priceMin?: number | undefined;
  priceMax?: number | undefined;
  sortBy?: SortBy | undefined;
  page?: number | undefined;
  perPage?: number | undefined;
}

export interface SearchContext {
  checkin: string;
  checkout: string;
  nights: number;
  rooms: number;
  adults: number;
  children: number;
  occupancy: RoomOccupancy[];
  currency: Currency;
  propertyIds: number[] | null;
  city: string | null;
  starRatingMin: number | null;
  priceMin: number | null;
  priceMax: number | null;
  sortBy: SortBy | null;
  page: number;
  perPage: number;
}

export interface SearchItem {
  propertyId: number;
  name: string;
  city: string;
  starRating: number;
  /** Inclusive total divided by the nights, in the request currency's minor units; null when unavailable. */
  lowestNightlyPrice: Amount | null;
  lowestTotalPrice: Amount | null;
  currency: Currency;
  available: boolean;
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  perPage: number;
  totalPages: number;
  hasNext: boolean;
}

export function paginate<T>(all: T[], page: number, perPage: number): Page<T> {
  return pageOf(all.slice((page - 1) * perPage, page * perPage), all.length, page, perPage);
}

/** One page of `total` items (search results, bookings), with the spec's pagination figures. */
export function pageOf<T>(items: T[], total: number, page: number, perPage: number): Page<T> {
  const totalPages = Math.ceil(total / perPage);
  return { items, total, page, perPage, totalPages, hasNext: page < totalPages };
}

/**
 * Many properties in one provider call (`detail: lowest`), then filtered by price, sorted and
 * paged here. Property names come from the catalog in one batch (usually from its cache).
 */
export async function searchAvailability(
  ctx: RequestContext,
  input: MultiSearchInput,
  names: FieldNames = SNAKE_NAMES,
): Promise<{ context: SearchContext; page: Page<SearchItem> }> {
  const stay = normalizeStay(input, ctx.deps.clock(), names);
  if (input.priceMin !== undefined && input.priceMax !== undefined && input.priceMin > input.priceMax) {
    throw new ValidationError([{ field: names.priceMax, reason: `must not be below ${names.priceMin}` }]);
  }
  const currency = input.currency ?? 'KRW';
  const party = partySize(stay.occupancy);
  const context: SearchContext = {
    checkin: stay.checkin,
    checkout: stay.checkout,
    nights: stay.nights,
    rooms: stay.occupancy.length,
    adults: party.adults,
    children: party.children,
    occupancy: stay.occupancy,
    currency,
    propertyIds: input.propertyIds ? [...new Set(input.propertyIds)] : null,
    city: input.city ?? null,
    starRatingMin: input.starRatingMin ?? null,
    priceMin: input.priceMin ?? null,
    priceMax: input.priceMax ?? null,
    sortBy: input.sortBy ?? null,
    page: input.page ?? 1,
    perPage: input.perPage ?? 20,
  };

  const { results } = await ctx.deps.upstream.availability(
    {
      checkin: stay.checkin,
      checkout: stay.checkout,
      occupancy: stay.occupancy,
      ...(context.propertyIds && { property_ids: context.propertyIds }),
      ...(context.city && { city: context.city }),
      ...(context.starRatingMin !== null && { star_rating_min: context.starRatingMin }),
      detail: 'lowest',
    },
    callOptions(ctx),
  );

  let items: SearchItem[] = results.map((r) => {
    const rate = r.available ? r.rates[0] : undefined;
    const total = rate ? convertFromKrw(inclusive(rate), currency) : null;
    return {
      propertyId: r.property_id,
      name: r.name,
      city: r.city,
      starRating: r.star_rating,
      lowestNightlyPrice: total === null ? null : divideRounded(total, stay.nights),
      lowestTotalPrice: total,
      currency,
      available: rate !== undefined,
    };
  });

  if (context.priceMin !== null || context.priceMax !== null) {
    const min = context.priceMin ?? 0;
    const max = context.priceMax ?? Number.POSITIVE_INFINITY;
    items = items.filter((i) => i.lowestNightlyPrice !== null && Number(i.lowestNightlyPrice) >= min && Number(i.lowestNightlyPrice) <= max);
  }
  items.sort(comparator(context.sortBy));
  return { context, page: paginate(items, context.page, context.perPage) };
}

/** Available first; then the requested order; property id breaks ties so pages are stable. */
function comparator(sortBy: SortBy | null): (a: SearchItem, b: SearchItem) => number {
  return (a, b) => {
    if (a.available !== b.available) return a.available ? -1 : 1;
    let order = 0;
    if (sortBy === 'price_asc' || sortBy === 'price_desc') {
      const diff = (a.lowestNightlyPrice ?? 0n) - (b.lowestNightlyPrice ?? 0n);
      order = diff === 0n ? 0 : (diff < 0n ? -1 : 1) * (sortBy === 'price_asc' ? 1 : -1);
    } else if (sortBy === 'star_rating') {
      order = b.starRating - a.starRating;
    }
    return order || a.propertyId - b.propertyId;
  };
}

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
  bedGroups: Property['roomTypes'][number]['bedGroups'];
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
      roomTypes.push({ roomtypeId: room.id, name: room.name, maxOccupancy: room.maxOccupancy, bedGroups: room.bedGroups, rates: offers });
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
    name: plan.name,
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

function divideRounded(amount: Amount, by: number): Amount {
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

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}
