import type { RequestContext } from '../../context.js';
import type { RoomOccupancy } from '../../upstream/protocol.js';
import { callOptions, ValidationError, type Currency } from '../kernel/index.js';
import { type Page, paginate } from './paging.js';
import type { SearchItem, SearchResults } from './results.js';
import { type FieldNames, SNAKE_NAMES, type SortBy, type StayInput, normalizeAmenities, normalizeStay, partySize } from './rules.js';

// ---------------------------------------------------------------------------------------------
// Multi-property search

export interface MultiSearchInput extends StayInput {
  currency?: Currency | undefined;
  propertyIds?: number[] | undefined;
  city?: string | undefined;
  starRatingMin?: number | undefined;
  /** Amenity codes every result must have (searchRules.amenities); repeated codes count once. */
  amenities?: string[] | undefined;
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
  /** The amenity filter, each code once, sorted; null: none. */
  amenities: string[] | null;
  priceMin: number | null;
  priceMax: number | null;
  sortBy: SortBy | null;
  page: number;
  perPage: number;
}

/**
 * Many properties in one provider call (`detail: lowest`), then filtered by price, sorted and
 * paged here. The provider's answer is shared by the searches that ask it the same thing for a
 * few seconds (availabilityCache.ts); names, cities, hero images and amenity codes come with it
 * (no content lookup per result). The amenity filter is the provider's (all listed codes).
 */
export async function searchAvailability(
  ctx: RequestContext,
  input: MultiSearchInput,
  names: FieldNames = SNAKE_NAMES,
): Promise<{ context: SearchContext; page: Page<SearchItem> }> {
  const { context, results } = await searchAll(ctx, input, names);
  return { context, page: paginate(results, context.page, context.perPage) };
}

/**
 * Every result of a search, in the order pages take them (GraphQL's connection pages them by
 * position: the same search reads the same answer in the same order, so a cursor is a place in
 * its results), read a page at a time.
 */
export async function searchAll(
  ctx: RequestContext,
  input: MultiSearchInput,
  names: FieldNames = SNAKE_NAMES,
): Promise<{ context: SearchContext; results: SearchResults }> {
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
    amenities: normalizeAmenities(input.amenities),
    priceMin: input.priceMin ?? null,
    priceMax: input.priceMax ?? null,
    sortBy: input.sortBy ?? null,
    page: input.page ?? 1,
    perPage: input.perPage ?? 20,
  };

  // The provider request is the cache's key: always built in this order, property ids sorted (the
  // results' order is ours, whatever the provider's), and nothing in it the provider is not sent.
  const results = await ctx.deps.searchCache.search(
    {
      checkin: stay.checkin,
      checkout: stay.checkout,
      occupancy: stay.occupancy,
      ...(context.propertyIds && { property_ids: [...context.propertyIds].sort((a, b) => a - b) }),
      ...(context.city && { city: context.city }),
      ...(context.starRatingMin !== null && { star_rating_min: context.starRatingMin }),
      // Sorted and de-duplicated (normalizeAmenities): equal filters are one key.
      ...(context.amenities && { amenities: context.amenities }),
      detail: 'lowest',
    },
    { nights: stay.nights, currency, sortBy: context.sortBy, priceMin: context.priceMin, priceMax: context.priceMax },
    callOptions(ctx),
  );
  return { context, results };
}
