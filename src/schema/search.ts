import { z } from 'zod';
import { CURRENCIES } from '../services/kernel/index.js';
import {
  parseOccupancies,
  priceCheck,
  propertyAvailability,
  searchAvailability,
  searchRates,
  searchRules,
  SORTS,
  type FieldNames,
  type NightLine,
  type Page,
  type PriceCheckResult,
  type Pricing,
  type PropertyOffers,
  type RateOffer,
  type RoomOffers,
  type SearchContext,
  type SearchItem,
} from '../services/search/index.js';
import type { RoomOccupancy } from '../upstream/protocol.js';
import { builder } from './builder.js';
import { graphqlNames, STAY_FIELDS } from './errors.js';
import { CancellationPolicyType, MealPlan, PropertyRef } from './properties.js';
import { operationScopes } from '../services/access/index.js';

/** Availability search: the GraphQL twins of GET /search/availability[/{id}] and /search/rates. */

export const Currency = builder.enumType('SearchCurrency', { values: CURRENCIES });
const SortBy = builder.enumType('SortBy', { values: SORTS });
const PriceCheckStatus = builder.enumType('PriceCheckStatus', { values: ['matched', 'price_changed', 'sold_out'] as const });

/** Errors across fields name the GraphQL input fields. */
const NAMES: FieldNames = graphqlNames('input', STAY_FIELDS);

const RoomOccupancyRef = builder.objectRef<RoomOccupancy>('RoomOccupancy').implement({
  fields: (t) => ({ adults: t.exposeInt('adults'), childrenAges: t.exposeIntList('children_ages') }),
});

export const PaginationRef = builder.objectRef<Page<unknown>>('Pagination').implement({
  fields: (t) => ({
    total: t.exposeInt('total'),
    page: t.exposeInt('page'),
    perPage: t.exposeInt('perPage'),
    totalPages: t.exposeInt('totalPages'),
    hasNext: t.exposeBoolean('hasNext'),
  }),
});

const SearchContextRef = builder.objectRef<SearchContext>('SearchContext').implement({
  description: 'The request as the service understood it, defaults filled in',
  fields: (t) => ({
    checkin: t.exposeString('checkin'),
    checkout: t.exposeString('checkout'),
    nights: t.exposeInt('nights'),
    rooms: t.exposeInt('rooms'),
    adults: t.exposeInt('adults'),
    children: t.exposeInt('children'),
    occupancy: t.field({ type: [RoomOccupancyRef], resolve: (s) => s.occupancy }),
    currency: t.field({ type: Currency, resolve: (s) => s.currency }),
    propertyIds: t.exposeIntList('propertyIds', { nullable: true }),
    city: t.exposeString('city', { nullable: true }),
    starRatingMin: t.exposeFloat('starRatingMin', { nullable: true }),
    priceMin: t.exposeFloat('priceMin', { nullable: true }),
    priceMax: t.exposeFloat('priceMax', { nullable: true }),
    sortBy: t.field({ type: SortBy, nullable: true, resolve: (s) => s.sortBy }),
    page: t.exposeInt('page'),
    perPage: t.exposeInt('perPage'),
  }),
});

const SearchItemRef = builder.objectRef<SearchItem>('SearchItem').implement({
  fields: (t) => ({
    propertyId: t.exposeInt('propertyId'),
    name: t.exposeString('name'),
    city: t.exposeString('city'),
    starRating: t.exposeFloat('starRating'),
    lowestNightlyPrice: t.expose('lowestNightlyPrice', { type: 'Money', nullable: true, description: 'Inclusive total / nights' }),
    lowestTotalPrice: t.expose('lowestTotalPrice', { type: 'Money', nullable: true }),
    currency: t.field({ type: Currency, resolve: (i) => i.currency }),
    available: t.exposeBoolean('available'),
  }),
});

const SearchResult = builder
  .objectRef<{ context: SearchContext; page: Page<SearchItem> }>('AvailabilitySearchResult')
  .implement({
    fields: (t) => ({
      items: t.field({ type: [SearchItemRef], resolve: (r) => r.page.items }),
      searchContext: t.field({ type: SearchContextRef, resolve: (r) => r.context }),
      pagination: t.field({ type: PaginationRef, resolve: (r) => r.page }),
    }),
  });

export const PricingRef = builder.objectRef<Pricing>('Pricing').implement({
  description: 'Totals in the request currency, and what the channel is billed (KRW)',
  fields: (t) => ({
    requestCurrency: t.field({ type: Currency, resolve: (p) => p.requestCurrency }),
    billableCurrency: t.exposeString('billableCurrency'),
    inclusiveAmount: t.expose('inclusive', { type: 'Money' }),
    exclusiveAmount: t.expose('exclusive', { type: 'Money' }),
    billableInclusiveAmount: t.expose('billableInclusive', { type: 'Money' }),
    billableExclusiveAmount: t.expose('billableExclusive', { type: 'Money' }),
  }),
});

const NightRef = builder.objectRef<NightLine>('NightPrice').implement({
  fields: (t) => ({
    date: t.exposeString('date'),
    baseRate: t.expose('baseRate', { type: 'Money' }),
    taxAndServiceFee: t.expose('taxAndServiceFee', { type: 'Money' }),
  }),
});

export const PolicyRef = builder.objectRef<RateOffer['cancellationPolicy']>('CancellationPolicy').implement({
  fields: (t) => ({
    type: t.field({ type: CancellationPolicyType, resolve: (p) => p.type }),
    freeCancellationBefore: t.expose('freeCancellationBefore', { type: 'DateTime', nullable: true }),
  }),
});

const RateOfferRef = builder.objectRef<RateOffer>('RateOffer').implement({
  fields: (t) => ({
    rateplanId: t.exposeString('rateplanId'),
    name: t.exposeString('name'),
    mealPlan: t.field({ type: MealPlan, resolve: (r) => r.mealPlan }),
    refundable: t.exposeBoolean('refundable'),
    availableRooms: t.exposeInt('availableRooms'),
    cancellationPolicy: t.field({ type: PolicyRef, resolve: (r) => r.cancellationPolicy }),
    pricing: t.field({ type: PricingRef, resolve: (r) => r.pricing }),
    nightly: t.field({ type: [NightRef], resolve: (r) => r.nightly }),
    priceCheckToken: t.exposeString('priceCheckToken', { nullable: true, description: 'Null when not bookable for this party' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
  }),
});

const RoomOffersRef = builder.objectRef<RoomOffers>('RoomOffers').implement({
  fields: (t) => ({
    roomtypeId: t.exposeString('roomtypeId'),
    name: t.exposeString('name'),
    maxOccupancy: t.exposeInt('maxOccupancy'),
    rates: t.field({ type: [RateOfferRef], resolve: (r) => r.rates }),
  }),
});

export const PropertyOffersRef = builder.objectRef<PropertyOffers>('PropertyAvailability').implement({
  fields: (t) => ({
    property: t.field({ type: PropertyRef, resolve: (o) => o.property }),
    checkin: t.string({ resolve: (o) => o.stay.checkin }),
    checkout: t.string({ resolve: (o) => o.stay.checkout }),
    nights: t.int({ resolve: (o) => o.stay.nights }),
    occupancy: t.field({ type: [RoomOccupancyRef], resolve: (o) => o.stay.occupancy }),
    currency: t.field({ type: Currency, resolve: (o) => o.currency }),
    roomTypes: t.field({ type: [RoomOffersRef], resolve: (o) => o.roomTypes }),
  }),
});

const AvailabilityInput = builder.inputType('AvailabilitySearchInput', {
  fields: (t) => ({
    checkin: t.string({ required: true, description: 'YYYY-MM-DD' }),
    checkout: t.string({ required: true }),
    adults: t.int({ description: 'Not with occupancy' }),
    occupancy: t.stringList({ description: 'One per room: <adults> or <adults>-<age>,<age>' }),
    children: t.int(),
    rooms: t.int(),
    currency: t.field({ type: Currency }),
    propertyIds: t.intList(),
    city: t.string(),
    starRatingMin: t.float(),
    priceMin: t.float({ description: 'Per night, request currency' }),
    priceMax: t.float(),
    sortBy: t.field({ type: SortBy }),
    page: t.int(),
    perPage: t.int({ description: '1 to 100, default 20' }),
  }),
});

const PropertyAvailabilityInput = builder.inputType('PropertyAvailabilityInput', {
  fields: (t) => ({
    propertyId: t.int({ required: true }),
    checkin: t.string({ required: true }),
    checkout: t.string({ required: true }),
    adults: t.int({ required: true }),
    children: t.int(),
    childrenAges: t.intList(),
    rooms: t.int(),
    currency: t.field({ type: Currency }),
    roomtypeId: t.string(),
    rateplanId: t.string(),
  }),
});

const RatesInput = builder.inputType('RatesInput', {
  fields: (t) => ({
    propertyId: t.int({ required: true }),
    checkin: t.string(),
    checkout: t.string(),
    adults: t.int(),
    currency: t.field({ type: Currency }),
  }),
});

const r = searchRules;
const stayArgs = {
  checkin: r.checkin,
  checkout: r.checkout,
  children: r.children.nullish(),
  rooms: r.rooms.nullish(),
  currency: r.currency.nullish(),
};

const availabilityArgs = z.object({
  input: z.object({
    ...stayArgs,
    adults: r.adults.nullish(),
    occupancy: r.occupancyText.nullish(),
    propertyIds: r.propertyIds.nullish(),
    city: r.city.nullish(),
    starRatingMin: r.starRatingMin.nullish(),
    priceMin: r.price.nullish(),
    priceMax: r.price.nullish(),
    sortBy: r.sortBy.nullish(),
    page: r.page.nullish(),
    perPage: r.perPage.nullish(),
  }),
});

const propertyAvailabilityArgs = z.object({
  input: z.object({
    ...stayArgs,
    propertyId: r.propertyId,
    adults: r.adults,
    childrenAges: r.childrenAges.nullish(),
    roomtypeId: r.roomtypeId.nullish(),
    rateplanId: r.rateplanId.nullish(),
  }),
});

const ratesArgs = z.object({
  input: z.object({
    propertyId: r.propertyId,
    checkin: r.checkin.nullish(),
    checkout: r.checkout.nullish(),
    adults: r.adults.nullish(),
    currency: r.currency.nullish(),
  }),
});

/** GraphQL gives null for an absent optional field; the services take undefined. */
function defined<T extends object>(input: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, v ?? undefined])) as never;
}

const PriceCheckRef = builder.objectRef<PriceCheckResult>('PriceCheck').implement({
  fields: (t) => ({
    status: t.field({ type: PriceCheckStatus, resolve: (r) => r.status }),
    pricing: t.field({ type: PricingRef, nullable: true, resolve: (r) => r.pricing }),
    cancellationPolicy: t.field({ type: PolicyRef, nullable: true, resolve: (r) => r.cancellationPolicy }),
    bookToken: t.exposeString('bookToken', { nullable: true, description: 'Single use; null when sold out' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.queryFields((t) => ({
  priceCheck: t.field({
    type: PriceCheckRef,
    description: 'Re-verifies a rate and issues a book token (REST: GET /channel/v1/search/price-check)',
    authScopes: operationScopes('search.priceCheck'),
    args: { token: t.arg.string({ required: true }) },
    validate: { schema: z.object({ token: z.string().min(1).max(4096) }) },
    resolve: (_root, args, ctx) => priceCheck(ctx, args.token),
  }),
  availability: t.field({
    type: SearchResult,
    description: 'Availability and lowest prices of many properties (REST: GET /channel/v1/search/availability)',
    authScopes: operationScopes('search.availability'),
    args: { input: t.arg({ type: AvailabilityInput, required: true }) },
    validate: { schema: availabilityArgs },
    resolve: (_root, { input }, ctx) => {
      const values = defined(input);
      return searchAvailability(
        ctx,
        { ...values, occupancy: values.occupancy && parseOccupancies(values.occupancy) },
        NAMES,
      );
    },
  }),
  propertyAvailability: t.field({
    type: PropertyOffersRef,
    description: 'Rates of one property with price-check tokens (REST: GET /channel/v1/search/availability/{propertyId})',
    authScopes: operationScopes('search.propertyAvailability'),
    args: { input: t.arg({ type: PropertyAvailabilityInput, required: true }) },
    validate: { schema: propertyAvailabilityArgs },
    resolve: (_root, { input }, ctx) => propertyAvailability(ctx, defined(input), { names: NAMES, withTokens: true }),
  }),
  rates: t.field({
    type: PropertyOffersRef,
    description: 'Detailed rates of one property (REST: GET /channel/v1/search/rates)',
    authScopes: operationScopes('search.rates'),
    args: { input: t.arg({ type: RatesInput, required: true }) },
    validate: { schema: ratesArgs },
    resolve: (_root, { input }, ctx) => searchRates(ctx, defined(input), NAMES),
  }),
}));
