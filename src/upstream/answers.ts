import { z } from 'zod';
import {
  AMENITY_GROUPS,
  CANCELLATION_POLICY_TYPES,
  IMAGE_CATEGORIES,
  IMAGE_SIZES,
  LANGUAGES,
  MEAL_PLANS,
  PROVIDER_BOOKING_STATUSES,
  ROOM_VIEWS,
  type LocalizedText,
} from '../services/kernel/index.js';

/**
 * The provider's answers, checked before use: an answer that does not fit the protocol is a
 * provider fault (502), never a crash deeper in the service. Unknown fields are dropped.
 */

const amount = z.int().nonnegative();
const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/**
 * A text in the provider's languages: `ko-KR` always (not empty); another language where it is
 * translated. An empty or non-text translation, or a language the service does not serve, is
 * dropped, so the default language stands in for it (never an empty string).
 */
const text = z
  .record(z.string(), z.unknown())
  .transform((value) => {
    const out: Record<string, string> = {};
    for (const language of LANGUAGES) {
      const t = value[language];
      if (typeof t === 'string' && t.trim() !== '') out[language] = t;
    }
    return out;
  })
  .pipe(z.object({ 'ko-KR': z.string() }).catchall(z.string()))
  .transform((value) => value as LocalizedText);

const amenity = z.object({ code: z.string().regex(/^[a-z0-9_]{1,64}$/), group: z.enum(AMENITY_GROUPS), name: text });

/** Only paths of the provider's own image route: the service fetches nothing else. */
export const IMAGE_PATH = /^\/images\/\d{1,9}\/[A-Za-z0-9_-]{1,64}\/[a-z]{1,16}\.png$/;
const imagePath = z.string().regex(IMAGE_PATH);

const image = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  category: z.enum(IMAGE_CATEGORIES),
  hero: z.boolean(),
  caption: text,
  links: z.array(z.object({ size: z.enum(IMAGE_SIZES), width: z.int().positive(), height: z.int().positive(), path: imagePath })),
});

const time = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/);

const ratePlan = z.object({
  id: z.string(),
  roomtype_id: z.string(),
  name: text,
  meal_plan: z.enum(MEAL_PLANS),
  refundable: z.boolean(),
  cancellation_policy: z.enum(CANCELLATION_POLICY_TYPES),
  amenities: z.array(amenity),
});

const roomType = z.object({
  id: z.string(),
  property_id: z.int(),
  name: text,
  max_occupancy: z.int().positive(),
  occupancy: z.object({
    max_total: z.int().positive(),
    max_adults: z.int().positive(),
    max_children: z.int().nonnegative(),
    age_categories: z.array(
      z.object({ category: z.enum(['adult', 'child', 'infant']), min_age: z.int().nonnegative(), max_age: z.int().nonnegative().nullable() }),
    ),
  }),
  bed_groups: z.array(z.object({ id: z.string(), description: text })),
  descriptions: z.object({ overview: text }),
  area_sqm: z.number().positive(),
  views: z.array(z.enum(ROOM_VIEWS)),
  amenities: z.array(amenity),
  images: z.array(image),
  rate_plans: z.array(ratePlan),
});

const property = z.object({
  id: z.int().positive(),
  name: z.string(),
  city: z.string(),
  country: z.string(),
  address: z.string(),
  star_rating: z.number(),
  latitude: z.number(),
  longitude: z.number(),
  timezone: z.string(),
  updated_at: z.iso.datetime({ offset: true }),
  descriptions: z.object({ headline: text, general: text, location: text, rooms: text, dining: text, amenities: text }),
  amenities: z.array(amenity),
  images: z.array(image),
  checkin: z.object({ begin_time: time, end_time: time.nullable(), min_age: z.int().nonnegative(), instructions: text }),
  checkout: z.object({ time }),
  policies: z.object({ children: text, pets: text, extra_beds: text, know_before_you_go: text }),
  phone: z.string(),
  chain: z.object({ id: z.string(), name: z.string() }).nullable(),
  brand: z.object({ id: z.string(), name: z.string() }).nullable(),
  spoken_languages: z.array(z.string()),
  review: z.object({ score: z.number().min(0).max(10), count: z.int().nonnegative() }).nullable(),
  room_types: z.array(roomType).optional(),
});

const rate = z.object({
  rateplan_id: z.string(),
  roomtype_id: z.string(),
  available_rooms: z.int().nonnegative(),
  nights: z.array(z.object({ date, base: amount, tax_and_fees: amount })),
  total_base: amount,
  total_tax_and_fees: amount,
});

const availability = z.object({
  results: z.array(
    z.object({
      property_id: z.int().positive(),
      name: z.string(),
      city: z.string(),
      star_rating: z.number(),
      hero_image: image.nullable(),
      amenity_codes: z.array(z.string()),
      available: z.boolean(),
      rates: z.array(rate),
    }),
  ),
});

const error = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

export const answers = {
  property,
  propertyPage: z.object({ properties: z.array(property), next_cursor: z.string().nullable() }),
  propertyBatch: z.object({ properties: z.array(property), missing: z.array(z.int()) }),
  availability,
  /** One answer per item asked, in order: an answer of another length does not fit the protocol. */
  availabilityBatch: (items: number) => z.object({ items: z.array(z.union([availability, error])).length(items) }),
  priceCheck: z.object({ status: z.enum(['matched', 'price_changed', 'sold_out']), rate: rate.nullable() }),
  booking: z.object({
    reference: z.string(),
    confirmation_number: z.string(),
    status: z.enum(PROVIDER_BOOKING_STATUSES),
    property_id: z.int(),
    roomtype_id: z.string(),
    rateplan_id: z.string(),
    checkin: date,
    checkout: date,
    rooms: z.int().positive(),
    total: amount,
    created_at: z.string(),
    cancelled_at: z.string().nullable(),
  }),
  error: z.object({ error: z.object({ code: z.string(), message: z.string() }) }),
  changeQuote: z.object({ status: z.enum(['available', 'sold_out']), rate: rate.nullable() }),
};
