import type { PropertyAvailability } from '../../upstream/protocol.js';
import { convertFromKrw, type Amount, type Currency } from '../kernel/index.js';
import { toImage, type Image } from '../catalog/index.js';
import { divideRounded, inclusive } from './offers.js';
import type { SortBy } from './rules.js';
import type { PositionalList } from './paging.js';

/**
 * The results of a multi-property search, read from one provider answer (`detail: lowest`) that
 * many requests share (availabilityCache.ts). The answer is read once into compact rows; each
 * currency's items and each order a request asks for are made once, on first use, and kept with
 * the answer; a request then reads its page by position, filtering by price as it goes, without
 * copying or sorting the answer again.
 */

export interface SearchItem {
  propertyId: number;
  name: string;
  city: string;
  starRating: number;
  /** The property's hero image, from the provider's answer (captions in every language: the surface picks one). */
  heroImage: Image | null;
  /** The property's amenity codes, from the provider's answer. */
  amenityCodes: readonly string[];
  /** Inclusive total divided by the nights, in the request currency's minor units; null when unavailable. */
  lowestNightlyPrice: Amount | null;
  lowestTotalPrice: Amount | null;
  currency: Currency;
  available: boolean;
}

/** A search's results as pages read them: how many there are, and the items between two positions. */
export type SearchResults = PositionalList<SearchItem>;

/** How a request reads an answer: its currency, its order and its price filters (nightly, request currency). */
export interface ResultsView {
  currency: Currency;
  sortBy: SortBy | null;
  priceMin: number | null;
  priceMax: number | null;
}

/** A property of the answer: the KRW total of its cheapest bookable rate, or null. */
interface Row {
  propertyId: number;
  name: string;
  city: string;
  starRating: number;
  heroImage: Image | null;
  amenityCodes: readonly string[];
  total: Amount | null;
}

/** Items in one order, with their nightly prices as numbers (NaN: none) for the price filters. */
interface Ordered {
  items: readonly SearchItem[];
  nightly: Float64Array;
}

/**
 * Estimated heap bytes, for the cache's memory bound: a row (object, name and city strings), an
 * item of one currency (object and two bigints), a place in one order (pointer and number).
 * Measured with the simulator's answers (500 properties: 76 KB of rows, 72 KB more for a currency
 * and one order), rounded up. A row's hero image and amenity codes are counted by their size
 * (contentBytes): an image object, its caption's strings, its links and their paths; the codes'
 * array (their strings are shared: sharedCode). With the simulator's content, an answer of 500
 * properties read in one currency and order holds about 520 KB measured, 580 KB estimated (a
 * hero image about 650 bytes a row, its codes about 80).
 */
const BYTES = { answer: 256, row: 160, item: 130, ordered: 16, image: 200, link: 80, codes: 24, string: 24 } as const;

/** Estimated heap bytes of a row's hero image and amenity codes (two bytes a character: captions are often not Latin-1). */
function contentBytes(image: Image | null, codes: readonly string[]): number {
  let bytes = BYTES.codes + codes.length * 8;
  // A shared code is held once for all answers; one past the bound is the row's own.
  for (const code of codes) if (CODES.get(code) !== code) bytes += BYTES.string + code.length;
  if (image) {
    bytes += BYTES.image;
    for (const text of Object.values(image.caption)) bytes += BYTES.string + 2 * (text?.length ?? 0);
    for (const link of image.links) bytes += BYTES.link + BYTES.string + link.providerPath.length;
  }
  return bytes;
}

/**
 * Amenity codes are few (the simulator has 31) and every row of every answer repeats about ten
 * of them: rows point at one string per code instead of each holding copies (JSON.parse makes
 * new ones for every answer). Measured: 110 KB less for an answer of 500 properties. Bounded, in
 * case a provider's codes are not few: past the bound, codes are kept as they come.
 */
const CODES = new Map<string, string>();
const MAX_SHARED_CODES = 4096;

function sharedCode(code: string): string {
  const kept = CODES.get(code);
  if (kept !== undefined) return kept;
  if (CODES.size < MAX_SHARED_CODES) CODES.set(code, code);
  return code;
}

export class SearchAnswer {
  private readonly rows: readonly Row[];
  private readonly items = new Map<Currency, readonly SearchItem[]>();
  private readonly orders = new Map<string, Ordered>();
  /** Estimated heap bytes held: the rows and every currency and order made so far. */
  bytes: number;

  constructor(
    results: readonly PropertyAvailability[],
    /** Nights of the stay searched (the answer's key fixes them). */
    private readonly nights: number,
  ) {
    this.rows = results.map((r) => {
      const rate = r.available ? r.rates[0] : undefined;
      return {
        propertyId: r.property_id,
        name: r.name,
        city: r.city,
        starRating: r.star_rating,
        // Shared by every item of every currency read from this answer: nobody may change them.
        heroImage: r.hero_image && deepFreeze(toImage(r.hero_image)),
        amenityCodes: Object.freeze(r.amenity_codes.map(sharedCode)),
        total: rate ? inclusive(rate) : null,
      };
    });
    this.bytes = BYTES.answer;
    for (const row of this.rows) this.bytes += BYTES.row + contentBytes(row.heroImage, row.amenityCodes);
  }

  /** The results as `view` reads them. */
  results(view: ResultsView): SearchResults {
    const { items, nightly } = this.ordered(view.currency, view.sortBy);
    if (view.priceMin === null && view.priceMax === null) {
      return { length: items.length, slice: (start, end) => items.slice(start, end) };
    }
    // Nightly prices within the bounds; NaN (unavailable) never is.
    const min = view.priceMin ?? 0;
    const max = view.priceMax ?? Number.POSITIVE_INFINITY;
    let length = 0;
    for (const price of nightly) if (price >= min && price <= max) length++;
    return {
      length,
      slice(start, end) {
        const page: SearchItem[] = [];
        for (let i = 0, position = 0; i < items.length && position < end; i++) {
          const price = nightly[i]!;
          if (!(price >= min && price <= max)) continue;
          if (position >= start) page.push(items[i]!);
          position++;
        }
        return page;
      },
    };
  }

  private ordered(currency: Currency, sortBy: SortBy | null): Ordered {
    const key = `${currency}:${sortBy ?? ''}`;
    let ordered = this.orders.get(key);
    if (!ordered) {
      const items = [...this.itemsIn(currency)].sort(comparator(sortBy));
      const nightly = Float64Array.from(items, (i) => (i.lowestNightlyPrice === null ? Number.NaN : Number(i.lowestNightlyPrice)));
      ordered = { items, nightly };
      this.orders.set(key, ordered);
      this.bytes += items.length * BYTES.ordered;
    }
    return ordered;
  }

  private itemsIn(currency: Currency): readonly SearchItem[] {
    let items = this.items.get(currency);
    if (!items) {
      items = this.rows.map((row) => {
        const total = row.total === null ? null : convertFromKrw(row.total, currency);
        // Shared by every request reading this answer: nobody may change it.
        return Object.freeze({
          propertyId: row.propertyId,
          name: row.name,
          city: row.city,
          starRating: row.starRating,
          heroImage: row.heroImage,
          amenityCodes: row.amenityCodes,
          lowestNightlyPrice: total === null ? null : divideRounded(total, this.nights),
          lowestTotalPrice: total,
          currency,
          available: total !== null,
        });
      });
      this.items.set(currency, items);
      this.bytes += items.length * BYTES.item;
    }
    return items;
  }
}

function deepFreeze(image: Image): Image {
  for (const link of image.links) Object.freeze(link);
  Object.freeze(image.links);
  Object.freeze(image.caption);
  return Object.freeze(image);
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
