import type { RequestContext } from '../../context.js';
import type { RoomOccupancy } from '../../upstream/protocol.js';
import { callOptions, convertFromKrw, ValidationError, type Amount, type Currency } from '../kernel/index.js';
import { divideRounded, inclusive } from './offers.js';
import { type Page, paginate } from './paging.js';
import { type FieldNames, SNAKE_NAMES, type SortBy, type StayInput, normalizeStay, partySize } from './rules.js';

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
/**
 * Many properties in one provider call (`detail: lowest`), then filtered by price, sorted and
 * paged here. Property names come from the catalog in one batch (usually from its cache).
 */
export async function searchAvailability(
  ctx: RequestContext,
  input: MultiSearchInput,
  names: FieldNames = SNAKE_NAMES,
): Promise<{ context: SearchContext; page: Page<SearchItem> }> {
  const { context, items } = await searchAll(ctx, input, names);
  return { context, page: paginate(items, context.page, context.perPage) };
}

/**
 * Every result of a search, in the order pages take them (GraphQL's connection pages them by
 * position: a search is made afresh on each request, so a cursor is a place in its results).
 */
export async function searchAll(
  ctx: RequestContext,
  input: MultiSearchInput,
  names: FieldNames = SNAKE_NAMES,
): Promise<{ context: SearchContext; items: SearchItem[] }> {
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
  return { context, items };
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
