import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { HttpEnv } from '../env.js';
import { servedIn } from '../language.js';
import { heroImage, imageHref, type Amenity, type Image, type PropertySummary, type RatePlan, type RoomType } from '../../src/services/catalog/index.js';
import {
  AMENITY_GROUPS,
  CANCELLATION_POLICY_TYPES,
  IMAGE_CATEGORIES,
  IMAGE_SIZES,
  IMAGE_WIDTHS,
  MEAL_PLANS,
  ROOM_VIEWS,
  textIn,
  type ImageSize,
  type Language,
} from '../../src/services/kernel/index.js';

/**
 * The one wire mapping of property content (docs/spec/channel-api.md §4.3, §9; shapes in docs/spec/DECISIONS.md), for every
 * REST surface: v1 properties and content files (rest-adapters/v1/properties.ts, content.ts) and
 * v2 content (rest-adapters/v2/content.ts, the same shapes with string ids).
 *
 * Texts are plain strings in the served language (textIn: a missing translation is the ko-KR
 * text, field by field, never empty); image links are absolute on the service's own origin
 * (imageHref: the public image route), never the provider's address.
 */

/** What a mapping needs besides the content: the language served and the service's public origin (ctx.publicOrigin). */
export interface WireOptions {
  readonly language: Language;
  readonly origin: string;
}

/**
 * A content route's WireOptions: the request's language (negotiated from Accept-Language, and
 * named in the answer: servedIn sets Content-Language and Vary) and the service's public origin.
 */
export function wireOptions(c: Context<HttpEnv>): WireOptions {
  return { language: servedIn(c), origin: c.get('ctx').publicOrigin };
}

// ---- examples (one property, consistent across the schemas) ----

const EXAMPLE_ORIGIN = 'https://api.example.com';
const exampleLinks = (propertyId: number, imageId: string) =>
  Object.fromEntries(
    IMAGE_SIZES.map((size) => [
      size,
      { href: imageHref(EXAMPLE_ORIGIN, propertyId, imageId, size), width: IMAGE_WIDTHS[size], height: Math.round((IMAGE_WIDTHS[size] * 2) / 3) },
    ]),
  ) as Record<ImageSize, { href: string; width: number; height: number }>;

const AMENITY_EXAMPLE = { code: 'free_wifi', group: 'internet', name: 'Free Wi-Fi' } as const;
const IMAGE_EXAMPLE = {
  id: 'p1-i1',
  category: 'exterior',
  hero: true,
  caption: 'The hotel entrance at dusk',
  links: exampleLinks(1, 'p1-i1'),
} as const;
const ROOM_IMAGE_EXAMPLE = { id: 'p1-r1-i1', category: 'room', hero: false, caption: 'Deluxe Double Room', links: exampleLinks(1, 'p1-r1-i1') } as const;
/** An example rate plan, for the documents. */
export const RATE_PLAN_EXAMPLE = {
  id: '1-r1-p1',
  roomtype_id: '1-r1',
  name: 'Free cancellation, breakfast included',
  meal_plan: 'breakfast',
  refundable: true,
  cancellation_policy: 'flexible',
  amenities: [
    { code: 'breakfast_included', group: 'general', name: 'Breakfast included' },
    { code: 'free_cancellation', group: 'general', name: 'Free cancellation' },
  ],
} as const;

/** An example property (its id of a version's type), for the documents. */
export function propertyExample<I>(id: I) {
  return {
    id,
    name: 'Hanok Stay Seoul',
    city: 'Seoul',
    country: 'KR',
    address: '12 Bukchon-ro, Jongno-gu, Seoul',
    star_rating: 4.5,
    latitude: 37.5826,
    longitude: 126.9831,
    timezone: 'Asia/Seoul',
    updated_at: '2026-10-01T09:30:00.000Z',
    descriptions: {
      headline: 'A quiet hanok hotel steps from Gyeongbokgung Palace',
      general: 'Traditional wooden rooms around a courtyard, with modern bathrooms and underfloor heating.',
      location: 'In Bukchon Hanok Village, a 7-minute walk from Anguk station (line 3).',
      rooms: '24 rooms, each with a rain shower, a minibar and free Wi-Fi.',
      dining: 'Korean breakfast is served in the courtyard from 07:00 to 10:00.',
      amenities: 'A rooftop terrace, a small fitness room and a 24-hour front desk.',
    },
    amenities: [AMENITY_EXAMPLE, { code: 'fitness_center', group: 'wellness', name: 'Fitness center' }],
    images: [IMAGE_EXAMPLE],
    checkin: { begin_time: '15:00', end_time: '23:00', min_age: 19, instructions: 'Show the booking confirmation and a photo ID at the front desk.' },
    checkout: { time: '11:00' },
    policies: {
      children: 'Children of any age are welcome; under 7 stay free using existing beds.',
      pets: 'Pets are not allowed.',
      extra_beds: 'An extra bed costs KRW 30,000 per night, on request.',
      know_before_you_go: 'The courtyard is quiet after 22:00.',
    },
    phone: '+82-2-1234-5678',
    chain: { id: 'c1', name: 'Hanok Hotels' },
    brand: { id: 'b1', name: 'Hanok Stay' },
    spoken_languages: ['ko', 'en', 'ja'],
    review: { score: 8.9, count: 1204 },
  };
}

/** An example room type (its property id of a version's type), for the documents. */
export function roomTypeExample<I>(propertyId: I) {
  return {
    id: '1-r1',
    property_id: propertyId,
    name: 'Deluxe Double Room',
    max_occupancy: 3,
    bed_groups: [{ id: 'b1', description: '1 queen bed' }],
    occupancy: {
      max_total: 3,
      max_adults: 2,
      max_children: 1,
      age_categories: [
        { category: 'adult', min_age: 13, max_age: null },
        { category: 'child', min_age: 2, max_age: 12 },
        { category: 'infant', min_age: 0, max_age: 1 },
      ],
    },
    descriptions: { overview: 'A bright room facing the courtyard, with a queen bed and a rain shower.' },
    area: { square_meters: 28 },
    views: ['courtyard'],
    amenities: [AMENITY_EXAMPLE, { code: 'air_conditioning', group: 'general', name: 'Air conditioning' }],
    images: [ROOM_IMAGE_EXAMPLE],
  };
}

// ---- schemas ----

export const AmenityWire = z
  .object({
    code: z.string().openapi({ description: 'Stable code (filters and files use it)', example: 'free_wifi' }),
    group: z.enum(AMENITY_GROUPS),
    name: z.string().openapi({ description: 'In the served language' }),
  })
  .openapi('Amenity', { example: AMENITY_EXAMPLE });

export const ImageLinkWire = z
  .object({
    href: z.url().openapi({ description: "Absolute, on this service's public image route (no credential needed)" }),
    width: z.int().openapi({ description: 'Pixels' }),
    height: z.int().openapi({ description: 'Pixels (width × 2 / 3, rounded)' }),
  })
  .openapi('ImageLink', { example: IMAGE_EXAMPLE.links.medium });

export const ImageWire = z
  .object({
    id: z.string(),
    category: z.enum(IMAGE_CATEGORIES),
    hero: z.boolean().openapi({ description: "The property's main image (one per property)" }),
    caption: z.string().openapi({ description: 'In the served language' }),
    links: z
      .object(Object.fromEntries(IMAGE_SIZES.map((s) => [s, ImageLinkWire])) as Record<ImageSize, typeof ImageLinkWire>)
      .openapi({ description: `One link per size: ${IMAGE_SIZES.map((s) => `${s} ${IMAGE_WIDTHS[s]} px wide`).join(', ')}` }),
  })
  .openapi('Image', { example: IMAGE_EXAMPLE });

const named = z.object({ id: z.string(), name: z.string() });
const time = (example: string) => z.string().openapi({ description: 'Local time, HH:MM', example });

/** The property shape, with the id type of a version: v1 integers, v2 strings (docs/spec/channel-api.md §9). */
export function propertyWireWith<I extends z.ZodType>(id: I) {
  return z.object({
    id,
    name: z.string(),
    city: z.string(),
    country: z.string().openapi({ description: 'ISO 3166-1 alpha-2', example: 'KR' }),
    address: z.string(),
    star_rating: z.number().openapi({ example: 4.5 }),
    latitude: z.number(),
    longitude: z.number(),
    timezone: z.string().openapi({ example: 'Asia/Seoul' }),
    updated_at: z.iso.datetime(),
    descriptions: z.object({
      headline: z.string(),
      general: z.string(),
      location: z.string(),
      rooms: z.string(),
      dining: z.string(),
      amenities: z.string(),
    }),
    amenities: z.array(AmenityWire),
    images: z.array(ImageWire).openapi({ description: 'The hero first, then the gallery' }),
    checkin: z.object({
      begin_time: time('15:00'),
      end_time: time('23:00').nullable().openapi({ description: 'Local time, HH:MM; null: the desk is open around the clock' }),
      min_age: z.int().openapi({ description: 'Minimum age of the guest checking in' }),
      instructions: z.string(),
    }),
    checkout: z.object({ time: time('11:00') }),
    policies: z.object({ children: z.string(), pets: z.string(), extra_beds: z.string(), know_before_you_go: z.string() }),
    phone: z.string().openapi({ example: '+82-2-1234-5678' }),
    chain: named.nullable().openapi({ description: 'null: the property belongs to no chain' }),
    brand: named.nullable().openapi({ description: 'null: the property has no brand' }),
    spoken_languages: z.array(z.string()).openapi({ description: 'BCP 47 primary tags of the languages the staff speak', example: ['ko', 'en'] }),
    review: z
      .object({ score: z.number().openapi({ description: '0.0 to 10.0' }), count: z.int() })
      .nullable()
      .openapi({ description: 'Guest reviews; null when the property has none yet' }),
  });
}

export const PropertyWire = propertyWireWith(z.int()).openapi('Property', { example: propertyExample(1) });

/** The room type shape, with the property id type of a version. */
export function roomTypeWireWith<I extends z.ZodType>(propertyId: I) {
  return z.object({
    id: z.string(),
    property_id: propertyId,
    name: z.string(),
    max_occupancy: z.int().openapi({ description: '= occupancy.max_total' }),
    bed_groups: z.array(z.object({ id: z.string(), description: z.string() })),
    occupancy: z.object({
      max_total: z.int().openapi({ description: 'Guests in all, children included' }),
      max_adults: z.int(),
      max_children: z.int(),
      age_categories: z
        .array(z.object({ category: z.enum(['adult', 'child', 'infant']), min_age: z.int(), max_age: z.int().nullable().openapi({ description: 'Inclusive; null: no upper bound' }) }))
        .openapi({ description: 'Who counts as an adult, a child and an infant, by age in years' }),
    }),
    descriptions: z.object({ overview: z.string() }),
    area: z.object({ square_meters: z.number() }),
    views: z.array(z.enum(ROOM_VIEWS)),
    amenities: z.array(AmenityWire),
    images: z.array(ImageWire),
  });
}

export const RoomTypeWire = roomTypeWireWith(z.int()).openapi('RoomType', { example: roomTypeExample(1) });

export const RatePlanWire = z
  .object({
    id: z.string(),
    roomtype_id: z.string(),
    name: z.string().openapi({ description: 'Names its cancellation policy and meal plan, in the served language' }),
    meal_plan: z.enum(MEAL_PLANS),
    refundable: z.boolean(),
    cancellation_policy: z.enum(CANCELLATION_POLICY_TYPES),
    amenities: z.array(AmenityWire).openapi({ description: 'Included with the rate (breakfast, free cancellation, ...)' }),
  })
  .openapi('RatePlan', { example: RATE_PLAN_EXAMPLE });

// ---- mapping ----

export function amenityToWire(a: Amenity, language: Language): z.infer<typeof AmenityWire> {
  return { code: a.code, group: a.group, name: textIn(a.name, language) };
}

/** An image of property `propertyId` (its own or one of its room types'), its links on the service's origin. */
export function imageToWire(propertyId: number, image: Image, { language, origin }: WireOptions): z.infer<typeof ImageWire> {
  const links = {} as z.infer<typeof ImageWire>['links'];
  for (const l of image.links) links[l.size] = { href: imageHref(origin, propertyId, image.id, l.size), width: l.width, height: l.height };
  return { id: image.id, category: image.category, hero: image.hero, caption: textIn(image.caption, language), links };
}

export function propertyToWire(p: PropertySummary, options: WireOptions): z.infer<typeof PropertyWire> {
  const { language } = options;
  const d = p.descriptions;
  return {
    id: p.id,
    name: p.name,
    city: p.city,
    country: p.country,
    address: p.address,
    star_rating: p.starRating,
    latitude: p.latitude,
    longitude: p.longitude,
    timezone: p.timezone,
    updated_at: p.updatedAt.toISOString(),
    descriptions: {
      headline: textIn(d.headline, language),
      general: textIn(d.general, language),
      location: textIn(d.location, language),
      rooms: textIn(d.rooms, language),
      dining: textIn(d.dining, language),
      amenities: textIn(d.amenities, language),
    },
    amenities: p.amenities.map((a) => amenityToWire(a, language)),
    images: p.images.map((i) => imageToWire(p.id, i, options)),
    checkin: {
      begin_time: p.checkin.beginTime,
      end_time: p.checkin.endTime,
      min_age: p.checkin.minAge,
      instructions: textIn(p.checkin.instructions, language),
    },
    checkout: { time: p.checkout.time },
    policies: {
      children: textIn(p.policies.children, language),
      pets: textIn(p.policies.pets, language),
      extra_beds: textIn(p.policies.extraBeds, language),
      know_before_you_go: textIn(p.policies.knowBeforeYouGo, language),
    },
    phone: p.phone,
    chain: p.chain && { id: p.chain.id, name: p.chain.name },
    brand: p.brand && { id: p.brand.id, name: p.brand.name },
    spoken_languages: p.spokenLanguages,
    review: p.review && { score: p.review.score, count: p.review.count },
  };
}

export function roomTypeToWire(r: RoomType, options: WireOptions): z.infer<typeof RoomTypeWire> {
  const { language } = options;
  const o = r.occupancy;
  return {
    id: r.id,
    property_id: r.propertyId,
    name: textIn(r.name, language),
    max_occupancy: r.maxOccupancy,
    bed_groups: r.bedGroups.map((b) => ({ id: b.id, description: textIn(b.description, language) })),
    occupancy: {
      max_total: o.maxTotal,
      max_adults: o.maxAdults,
      max_children: o.maxChildren,
      age_categories: o.ageCategories.map((a) => ({ category: a.category, min_age: a.minAge, max_age: a.maxAge })),
    },
    descriptions: { overview: textIn(r.descriptions.overview, language) },
    area: { square_meters: r.areaSqm },
    views: r.views,
    amenities: r.amenities.map((a) => amenityToWire(a, language)),
    images: r.images.map((i) => imageToWire(r.propertyId, i, options)),
  };
}

export function ratePlanToWire(p: RatePlan, { language }: Pick<WireOptions, 'language'>): z.infer<typeof RatePlanWire> {
  return {
    id: p.id,
    roomtype_id: p.roomtypeId,
    name: textIn(p.name, language),
    meal_plan: p.mealPlan,
    refundable: p.refundable,
    cancellation_policy: p.cancellationPolicy,
    amenities: p.amenities.map((a) => amenityToWire(a, language)),
  };
}

/**
 * The hero image's link for files and lists that carry one URL: its `large` size (1280 px wide,
 * the largest advertised; the other sizes are the same link ending in /medium.png, /thumbnail.png),
 * else its largest link; null when the property has no image.
 */
export function heroImageUrl(p: Pick<PropertySummary, 'id' | 'images'>, origin: string): string | null {
  const hero = heroImage(p);
  const link = hero?.links.find((l) => l.size === 'large') ?? hero?.links.at(-1);
  return hero && link ? imageHref(origin, p.id, hero.id, link.size) : null;
}
