import { z } from 'zod';
import type { RoomOccupancy } from '../../upstream/protocol.js';
import { currencySchema, ValidationError, type FieldIssue } from '../kernel/index.js';

/**
 * Availability search (docs/spec/channel-api.md §4.4), one service for REST v1, v2 and GraphQL. Field rules are zod
 * schemas the adapters compose; rules across fields live in the normalize functions, which name
 * fields as the caller's surface spells them.
 */

export const DAY_MS = 86_400_000;
export const MAX_NIGHTS = 30;
export const MAX_ROOMS = 8;
/** How long a price_check_token stays valid (docs/spec/DECISIONS.md: 30 minutes). */
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

/** Amenity codes a search may require at once. */
export const MAX_AMENITY_FILTER = 20;

/** An amenity code as the provider spells it (`free_wifi`): lower-case letters, digits and `_`. */
const amenityCode = z.string().regex(/^[a-z0-9_]{1,64}$/, 'an amenity code: a-z, 0-9 and _, 1 to 64 characters');

/**
 * The amenity filter as the provider is sent it and the search cache keys it: each code once, in
 * code order (`a,b` and `b,a,b` are one search); null when there is no filter (an empty list too).
 */
export function normalizeAmenities(codes: readonly string[] | undefined | null): string[] | null {
  if (!codes?.length) return null;
  return [...new Set(codes)].sort();
}
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
  /** Amenity codes every result must have (all of them); at most MAX_AMENITY_FILTER. */
  amenityCode,
  amenities: z.array(amenityCode).max(MAX_AMENITY_FILTER),
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
