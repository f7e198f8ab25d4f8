import { z } from 'zod';
import { CURRENCIES } from '../services/kernel/index.js';
import {
  batchRates,
  parseOccupancies,
  priceCheck,
  propertyAvailability,
  searchAll,
  searchRates,
  searchRules,
  SORTS,
  type FieldNames,
  type NightLine,
  type PriceCheckResult,
  type Pricing,
  type PropertyOffers,
  type RateOffer,
  type RoomOffers,
  type SearchContext,
  type SearchItem,
} from '../services/search/index.js';
import type { RoomOccupancy } from '../upstream/protocol.js';
import type { RequestContext } from '../context.js';
import { builder } from './builder.js';
import { arrayConnection, countOf, forwardConnectionArgs } from './connections.js';
import { serviceEnum } from './enums.js';
import { graphqlNames, STAY_FIELDS } from './errors.js';
import { CancellationPolicyType, MealPlan, PropertyRef } from './properties.js';
import { operationScopes } from '../services/access/index.js';
import { INSTANCE_COST, type InstanceCost } from '../graphql/costField.js';

/**
 * Availability search: the GraphQL twins of GET /search/availability[/{id}] and /search/rates,
 * the price check, and a property's availability as an edge of the property (batched: the
 * availability of a page of properties is one provider round trip, as batch rates make it).
 */

export const Currency = builder.enumType('SearchCurrency', { values: CURRENCIES });
const SortBy = serviceEnum('SortBy', SORTS);
const PriceCheckStatus = serviceEnum('PriceCheckStatus', ['matched', 'price_changed', 'sold_out'] as const);

/** Errors across fields name the GraphQL input fields. */
const NAMES: FieldNames = graphqlNames('input', STAY_FIELDS);

const RoomOccupancyRef = builder.objectRef<RoomOccupancy>('RoomOccupancy').implement({
  fields: (t) => ({ adults: t.exposeInt('adults'), childrenAges: t.exposeIntList('children_ages') }),
});

const SearchContextRef = builder.objectRef<SearchContext>('SearchContext').implement({
  description: 'The request as the service understood it, defaults filled in',
  fields: (t) => ({
    checkin: t.expose('checkin', { type: 'Date' }),
    checkout: t.expose('checkout', { type: 'Date' }),
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
  }),
});

const SearchItemRef = builder.objectRef<SearchItem>('SearchItem').implement({
  description: 'A property of a search with its lowest price for the stay',
  fields: (t) => ({
    propertyId: t.exposeInt('propertyId'),
    property: t.field({
      type: PropertyRef,
      nullable: true,
      description: 'The property with its content (scope properties:read), batched with every other lookup of the request',
      authScopes: operationScopes('property.read'),
      resolve: (i, _args, ctx) => ctx.loaders.property.load(i.propertyId),
    }),
    name: t.exposeString('name'),
    city: t.exposeString('city'),
    starRating: t.exposeFloat('starRating'),
    lowestNightlyPrice: t.expose('lowestNightlyPrice', { type: 'Money', nullable: true, description: 'Inclusive total / nights' }),
    lowestTotalPrice: t.expose('lowestTotalPrice', { type: 'Money', nullable: true }),
    currency: t.field({ type: Currency, resolve: (i) => i.currency }),
    available: t.exposeBoolean('available'),
  }),
});

const SearchItemConnection = builder.connectionObject({
  type: SearchItemRef,
  name: 'SearchItemConnection',
  description:
    'The properties of a search, available first, then in the order asked for: a page of them (by position: the pages ' +
    'of one search read the same provider answer while it is kept, a few seconds), with the search as the service ' +
    'understood it',
  fields: (t) => ({
    searchContext: t.field({
      type: SearchContextRef,
      resolve: (c) => (c as unknown as { searchContext: SearchContext }).searchContext,
    }),
    totalCount: t.int({
      description: 'Properties the search found (after the price filters)',
      resolve: (c) => countOf(c),
    }),
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
    date: t.expose('date', { type: 'Date' }),
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
    property: t.field({
      type: PropertyRef,
      nullable: true,
      description: 'The property with its content (scope properties:read, as its REST read)',
      authScopes: operationScopes('property.read'),
      resolve: (o) => o.property,
    }),
    checkin: t.field({ type: 'Date', resolve: (o) => o.stay.checkin }),
    checkout: t.field({ type: 'Date', resolve: (o) => o.stay.checkout }),
    nights: t.int({ resolve: (o) => o.stay.nights }),
    occupancy: t.field({ type: [RoomOccupancyRef], resolve: (o) => o.stay.occupancy }),
    currency: t.field({ type: Currency, resolve: (o) => o.currency }),
    roomTypes: t.field({ type: [RoomOffersRef], resolve: (o) => o.roomTypes }),
  }),
});

const AvailabilityInput = builder.inputType('AvailabilitySearchInput', {
  description: 'A search of many properties (REST: the query of GET /channel/v1/search/availability); pages with first/after',
  fields: (t) => ({
    checkin: t.field({ type: 'Date', required: true }),
    checkout: t.field({ type: 'Date', required: true }),
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
  }),
});

const PropertyAvailabilityInput = builder.inputType('PropertyAvailabilityInput', {
  fields: (t) => ({
    propertyId: t.int({ required: true }),
    checkin: t.field({ type: 'Date', required: true }),
    checkout: t.field({ type: 'Date', required: true }),
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
    checkin: t.field({ type: 'Date' }),
    checkout: t.field({ type: 'Date' }),
    adults: t.int(),
    currency: t.field({ type: Currency }),
  }),
});

type InputFields = Parameters<Parameters<typeof builder.inputType>[1]['fields']>[0];

/** The fields of a stay to price: StayInput's, and with a propertyId each item of batch rates (BatchRatesItemInput). */
export const stayInputFields = (t: InputFields) => ({
  checkin: t.field({ type: 'Date', required: true }),
  checkout: t.field({ type: 'Date', required: true }),
  adults: t.int({ description: 'Adults in all rooms; not with occupancy' }),
  children: t.int(),
  childrenAges: t.intList({ description: 'One age per child; a child without one counts as 8' }),
  rooms: t.int(),
  occupancy: t.stringList({ description: 'One per room: <adults> or <adults>-<age>,<age>' }),
  roomtypeId: t.string({ description: 'Only this room type' }),
  rateplanId: t.string({ description: 'Only this rate plan' }),
});

/** The rules of those fields (GraphQL gives null for what is absent). */
export const stayInputRules = {
  checkin: searchRules.checkin,
  checkout: searchRules.checkout,
  adults: searchRules.adults.nullish(),
  children: searchRules.children.nullish(),
  childrenAges: searchRules.childrenAges.nullish(),
  rooms: searchRules.rooms.nullish(),
  occupancy: searchRules.occupancyText.nullish(),
  roomtypeId: searchRules.roomtypeId.nullish(),
  rateplanId: searchRules.rateplanId.nullish(),
};

const StayInput = builder.inputType('StayInput', {
  description: 'A stay and party to price, as propertyAvailability takes them without the property',
  fields: (t) => ({ ...stayInputFields(t), currency: t.field({ type: Currency, description: 'Default KRW' }) }),
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
  }),
  ...forwardConnectionArgs,
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
    type: SearchItemConnection,
    description:
      'Availability and lowest prices of many properties, page by page (first/after, forward; REST: GET ' +
      '/channel/v1/search/availability)',
    authScopes: operationScopes('search.availability'),
    args: {
      input: t.arg({ type: AvailabilityInput, required: true }),
      first: t.arg.int({ description: 'Properties after `after`: 0 to 100, default 20' }),
      after: t.arg.string({ description: 'The endCursor (or an edge cursor) of the page before' }),
    },
    validate: { schema: availabilityArgs },
    resolve: async (_root, { input, ...page }, ctx) => {
      const values = defined(input);
      const { context, results } = await searchAll(ctx, { ...values, occupancy: values.occupancy && parseOccupancies(values.occupancy) }, NAMES);
      return { ...(await arrayConnection(page, results)), searchContext: context };
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

// ---------------------------------------------------------------------------------------------
// A property's availability, as an edge of the property

/** The rules of a stay: batch rates' item without its property. */
const stayArgument = z.object({ stay: z.object({ ...stayInputRules, currency: r.currency.nullish() }) });

/** Errors across the stay's fields name the argument: `stay.checkout`. */
const STAY_NAMES: FieldNames = graphqlNames('stay', STAY_FIELDS);

/**
 * The availability of these properties for one stay: one provider round trip for all of them
 * (batch rates' service), each property's result or its own error.
 */
async function availabilityOf(ctx: RequestContext, ids: readonly number[], args: z.infer<typeof stayArgument>) {
  const { occupancy, currency, ...rest } = defined(args.stay);
  const stay = { ...rest, occupancy: occupancy && parseOccupancies(occupancy) };
  const items = ids.map((propertyId) => ({ ok: true as const, input: { ...stay, propertyId } }));
  const results = await batchRates(ctx, { currency, items }, () => STAY_NAMES);
  return results.map((result) => (result.status === 'ok' ? result.offers : result.error));
}

builder.objectField(PropertyRef, 'availability', (t) =>
  t.loadable({
    type: PropertyOffersRef,
    nullable: true,
    description:
      'The rates of this property for a stay, each bookable one with its price-check token (REST: GET ' +
      '/channel/v1/search/availability/{propertyId}); scope search:availability. The availability of every property ' +
      'of a page for the same stay is one provider round trip; each costs 1 rate-limit point, as a batch rates item',
    authScopes: operationScopes('search.propertyAvailability'),
    args: { stay: t.arg({ type: StayInput, required: true }) },
    validate: { schema: stayArgument },
    extensions: { [INSTANCE_COST]: { points: 1 } satisfies InstanceCost },
    byPath: true,
    load: (ids: number[], ctx: RequestContext, args) => availabilityOf(ctx, ids, args),
    resolve: (p) => p.id,
  }),
);

