import { z } from '@hono/zod-openapi';
import { CANCELLATION_POLICY_TYPES, amountToNumber, CURRENCIES } from '../../../src/services/kernel/index.js';
import {
  MAX_AMENITY_FILTER,
  searchRules,
  SORTS,
  type Page,
  type PriceCheckResult,
  type Pricing,
  type PropertyOffers,
  type RateOffer,
  type SearchContext,
  type SearchItem,
} from '../../../src/services/search/index.js';
import { intParam, listParam, numberParam, occupancyListParam, propertyIdListParam } from '../../params.js';
import { imageToWire, ImageWire, type WireOptions } from '../../wire/properties.js';

/**
 * The wire shapes of v1 search (docs/spec/channel-api.md §4.4) and their mappers. Amounts are numbers in the request currency's minor units (KRW has none); the channel is billed
 * in KRW, shown as billable amounts.
 */

export const Pagination = z
  .object({ total: z.int(), page: z.int(), per_page: z.int(), total_pages: z.int(), has_next: z.boolean() })
  .openapi('Pagination');

const Occupancy = z.object({ adults: z.int(), children_ages: z.array(z.int()) });

export const SearchContextWire = z
  .object({
    checkin: z.string(),
    checkout: z.string(),
    nights: z.int(),
    rooms: z.int(),
    adults: z.int(),
    children: z.int(),
    occupancy: z.array(Occupancy),
    currency: z.string(),
    property_id: z.array(z.int()).nullable(),
    city: z.string().nullable(),
    star_rating_min: z.number().nullable(),
    amenities: z.array(z.string()).nullable().openapi({ description: 'The amenity filter: each code once, sorted; null without one' }),
    price_min: z.number().nullable(),
    price_max: z.number().nullable(),
    sort_by: z.enum(SORTS).nullable(),
    page: z.int(),
    per_page: z.int(),
  })
  .openapi('SearchContext', { description: 'The request as the service understood it, defaults filled in' });

export const SearchItemWire = z
  .object({
    property_id: z.int(),
    name: z.string(),
    city: z.string(),
    star_rating: z.number(),
    // No .openapi() on the nullable: it would rewrite the shared Image component.
    hero_image: ImageWire.nullable(),
    amenities: z.array(z.string()).openapi({
      description: "The property's amenity codes (names and groups: GET /properties/{propertyId})",
      example: ['free_wifi', 'fitness_center', 'free_parking'],
    }),
    lowest_nightly_price: z.number().nullable().openapi({ description: 'Inclusive total / nights, request currency minor units' }),
    lowest_total_price: z.number().nullable().openapi({ description: 'Inclusive total for the stay and every room' }),
    currency: z.string(),
    available: z.boolean(),
  })
  .openapi('SearchItem', {
    description:
      "A property with its lowest price for the stay, its hero image (null when it has none) and amenity codes. The hero image's " +
      'caption is in the language served (Content-Language); its links are absolute, on this service.',
  });

export const PricingWire = z
  .object({
    request_currency: z.string(),
    billable_currency: z.string(),
    totals: z.object({ inclusive_amount: z.number(), exclusive_amount: z.number() }),
    billable_totals: z.object({ inclusive_amount: z.number(), exclusive_amount: z.number() }),
  })
  .openapi('Pricing');

export const CancellationPolicyWire = z
  .object({
    type: z.enum(CANCELLATION_POLICY_TYPES),
    free_cancellation_before: z.iso.datetime().nullable(),
  })
  .openapi('CancellationPolicy');

const NightWire = z.object({ date: z.string(), base_rate: z.number(), tax_and_service_fee: z.number() });

const RateWire = z
  .object({
    rateplan_id: z.string(),
    name: z.string(),
    meal_plan: z.string(),
    refundable: z.boolean(),
    available_rooms: z.int(),
    cancellation_policy: CancellationPolicyWire,
    pricing: PricingWire,
    nightly: z.array(NightWire).openapi({ description: 'Per night, for every room of the party' }),
    price_check_token: z.string().nullable().openapi({ description: 'Null when the rate cannot be booked for this party' }),
    expires_at: z.iso.datetime().nullable(),
  })
  .openapi('AvailabilityRate');

export const PropertyAvailabilityWire = z
  .object({
    property_id: z.int(),
    checkin: z.string(),
    checkout: z.string(),
    nights: z.int(),
    occupancy: z.array(Occupancy),
    currency: z.string(),
    room_types: z.array(
      z.object({
        roomtype_id: z.string(),
        name: z.string(),
        max_occupancy: z.int(),
        rates: z.array(RateWire),
      }),
    ),
  })
  .openapi('PropertyAvailability');

export const stayQuery = {
  checkin: searchRules.checkin.openapi({ example: '2026-12-24' }),
  checkout: searchRules.checkout.openapi({ example: '2026-12-26' }),
  adults: intParam(searchRules.adults).optional(),
  children: intParam(searchRules.children).optional(),
  rooms: intParam(searchRules.rooms).optional(),
  currency: searchRules.currency.optional().openapi({ enum: [...CURRENCIES], default: 'KRW' }),
};

export const MultiQuery = z.object({
  ...stayQuery,
  occupancy: occupancyListParam(searchRules.occupancy, 'Repeatable, one per room: <adults> or <adults>-<age>,<age>. Not with adults.').optional(),
  property_id: propertyIdListParam('One id, several comma-separated, or repeated (at most 100)').optional(),
  city: searchRules.city.optional(),
  star_rating_min: numberParam(searchRules.starRatingMin).optional(),
  amenities: listParam(searchRules.amenityCode, { commas: true })
    .pipe(searchRules.amenities)
    .optional()
    .openapi({
      description:
        `Only properties with every one of these amenity codes: comma-separated or repeated, at most ${MAX_AMENITY_FILTER} ` +
        '(a-z, 0-9 and _, 1 to 64 characters each; a code no property has matches nothing), e.g. amenities=free_wifi,outdoor_pool',
      type: 'array',
      items: { type: 'string', pattern: '^[a-z0-9_]{1,64}(,[a-z0-9_]{1,64})*$' },
      param: { style: 'form', explode: true },
    }),
  price_min: numberParam(searchRules.price).optional().openapi({ description: 'Per night, request currency' }),
  price_max: numberParam(searchRules.price).optional().openapi({ description: 'Per night, request currency' }),
  sort_by: searchRules.sortBy.optional().openapi({ description: 'Default: available first, then by property id' }),
  page: intParam(searchRules.page).optional().openapi({ default: 1 }),
  per_page: intParam(searchRules.perPage).optional().openapi({ default: 20 }),
});

export const PriceCheckWire = z
  .object({
    status: z.enum(['matched', 'price_changed', 'sold_out']),
    pricing: PricingWire.nullable(),
    cancellation_policy: CancellationPolicyWire.nullable(),
    book_token: z.string().nullable().openapi({ description: 'Single use; null when sold out' }),
    expires_at: z.iso.datetime().nullable().openapi({ description: 'When the book_token expires (30 minutes)' }),
  })
  .openapi('PriceCheck');

export function paginationToWire(page: Page<unknown>): z.infer<typeof Pagination> {
  return { total: page.total, page: page.page, per_page: page.perPage, total_pages: page.totalPages, has_next: page.hasNext };
}

export function contextToWire(s: SearchContext): z.infer<typeof SearchContextWire> {
  return {
    checkin: s.checkin,
    checkout: s.checkout,
    nights: s.nights,
    rooms: s.rooms,
    adults: s.adults,
    children: s.children,
    occupancy: s.occupancy,
    currency: s.currency,
    property_id: s.propertyIds,
    city: s.city,
    star_rating_min: s.starRatingMin,
    amenities: s.amenities,
    price_min: s.priceMin,
    price_max: s.priceMax,
    sort_by: s.sortBy,
    page: s.page,
    per_page: s.perPage,
  };
}

export function pricingToWire(p: Pricing): z.infer<typeof PricingWire> {
  return {
    request_currency: p.requestCurrency,
    billable_currency: p.billableCurrency,
    totals: { inclusive_amount: amountToNumber(p.inclusive), exclusive_amount: amountToNumber(p.exclusive) },
    billable_totals: { inclusive_amount: amountToNumber(p.billableInclusive), exclusive_amount: amountToNumber(p.billableExclusive) },
  };
}

function policyToWire(p: RateOffer['cancellationPolicy']): z.infer<typeof CancellationPolicyWire> {
  return { type: p.type, free_cancellation_before: p.freeCancellationBefore?.toISOString() ?? null };
}

export function rateToWire(r: RateOffer): z.infer<typeof RateWire> {
  return {
    rateplan_id: r.rateplanId,
    name: r.name,
    meal_plan: r.mealPlan,
    refundable: r.refundable,
    available_rooms: r.availableRooms,
    cancellation_policy: policyToWire(r.cancellationPolicy),
    pricing: pricingToWire(r.pricing),
    nightly: r.nightly.map((n) => ({ date: n.date, base_rate: amountToNumber(n.baseRate), tax_and_service_fee: amountToNumber(n.taxAndServiceFee) })),
    price_check_token: r.priceCheckToken,
    expires_at: r.expiresAt?.toISOString() ?? null,
  };
}

export function offersToWire(o: PropertyOffers): z.infer<typeof PropertyAvailabilityWire> {
  return {
    property_id: o.property.id,
    checkin: o.stay.checkin,
    checkout: o.stay.checkout,
    nights: o.stay.nights,
    occupancy: o.stay.occupancy,
    currency: o.currency,
    room_types: o.roomTypes.map((room) => ({
      roomtype_id: room.roomtypeId,
      name: room.name,
      max_occupancy: room.maxOccupancy,
      rates: room.rates.map(rateToWire),
    })),
  };
}

/** A search result, its hero image's caption in the served language and links on the service's origin. */
export function searchItemToWire(i: SearchItem, options: WireOptions): z.infer<typeof SearchItemWire> {
  return {
    property_id: i.propertyId,
    name: i.name,
    city: i.city,
    star_rating: i.starRating,
    hero_image: i.heroImage && imageToWire(i.propertyId, i.heroImage, options),
    amenities: [...i.amenityCodes],
    lowest_nightly_price: i.lowestNightlyPrice === null ? null : amountToNumber(i.lowestNightlyPrice),
    lowest_total_price: i.lowestTotalPrice === null ? null : amountToNumber(i.lowestTotalPrice),
    currency: i.currency,
    available: i.available,
  };
}

export function priceCheckToWire(result: PriceCheckResult): z.infer<typeof PriceCheckWire> {
  return {
    status: result.status,
    pricing: result.pricing && pricingToWire(result.pricing),
    cancellation_policy: result.cancellationPolicy && policyToWire(result.cancellationPolicy),
    book_token: result.bookToken,
    expires_at: result.expiresAt?.toISOString() ?? null,
  };
}
