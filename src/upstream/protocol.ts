import type {
  AmenityGroup,
  CancellationPolicyType,
  ImageCategory,
  ImageSize,
  LocalizedText,
  MealPlan,
  ProviderBookingStatus,
  RoomView,
} from '../services/kernel/index.js';

/**
 * The wire protocol between the service and its inventory provider: JSON over HTTP, snake_case,
 * amounts as integers in KRW (the provider's currency). The bundled simulator serves it and the
 * undici client speaks it; a real provider is adapted to it at src/upstream/.
 *
 *   GET  /health                                   liveness
 *   GET  /properties?cursor=&limit=&updated_since=&include=rooms
 *                                                  pages of properties, by id
 *   GET  /properties/{id}                          one property with room types and rate plans
 *   GET  /images/{property_id}/{image_id}/{size}.png
 *                                                  an image at one of its advertised sizes (image/png)
 *   POST /properties/batch    {ids}                many properties in one call; unknown ids listed
 *   POST /availability        AvailabilityRequest  prices and stock for many properties at once
 *   POST /availability/batch  {items}              many availability searches, each with its own stay, in
 *                                                  one call; one answer per item, in order (see below)
 *   POST /price-check         PriceCheckRequest    re-prices one rate (prices move, stock runs out)
 *   POST /bookings            BookRequest          books one rate; idempotent on `reference`
 *   GET  /bookings/{reference}                     the provider's view of a booking
 *   POST /bookings/{reference}/cancel              cancels; idempotent
 *   POST /bookings/{reference}/change-quote  ChangeQuoteRequest
 *                                                  prices new dates for a booking (its own rooms count as free)
 *   POST /bookings/{reference}/modify        ModifyRequest
 *                                                  moves a booking to new dates; idempotent on `modification_id`
 *   POST /bookings/{reference}/modifications/{modification_id}/abort
 *                                                  undoes that change if it is the latest, and refuses it for
 *                                                  ever after (a late duplicate cannot apply); idempotent
 *
 * Errors: `{ "error": { "code", "message" } }` with 4xx/5xx. The header `X-Test-Scenario` forces
 * a sandbox outcome (see SCENARIOS).
 */

export const SCENARIOS = ['price_changed', 'sold_out', 'upstream_error', 'upstream_timeout', 'pending'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export type { CancellationPolicyType, MealPlan };

/**
 * Content texts come in every language the provider has them in, keyed by language tag
 * (`ko-KR`, `en-US`, `ja-JP`, `zh-CN`): `ko-KR` always, the others where translated. The service
 * picks one per request (src/services/kernel/language.ts).
 */
export type UpstreamText = LocalizedText;

/** An amenity: a stable code (`free_wifi`), its group and its name. */
export interface UpstreamAmenity {
  code: string;
  group: AmenityGroup;
  name: UpstreamText;
}

/** One size of an image, at `path` on the provider (GET, image/png). */
export interface UpstreamImageLink {
  size: ImageSize;
  width: number;
  height: number;
  /** The provider's path of this size: `/images/{property_id}/{image_id}/{size}.png`. */
  path: string;
}

export interface UpstreamImage {
  /** Unique within its property. */
  id: string;
  category: ImageCategory;
  /** The property's main image; exactly one image of a property is. */
  hero: boolean;
  caption: UpstreamText;
  /** One link per size of IMAGE_SIZES, smallest first. */
  links: UpstreamImageLink[];
}

export interface UpstreamRatePlan {
  id: string;
  roomtype_id: string;
  /** Says its cancellation policy and meal plan, e.g. en-US `Free cancellation, breakfast included`. */
  name: UpstreamText;
  meal_plan: MealPlan;
  refundable: boolean;
  cancellation_policy: CancellationPolicyType;
  /** What the rate includes besides the room (breakfast, free cancellation, ...). */
  amenities: UpstreamAmenity[];
}

export interface UpstreamOccupancy {
  /** Guests in all, children included. */
  max_total: number;
  max_adults: number;
  max_children: number;
  /** Who counts as a child and an infant, by age in years (inclusive). */
  age_categories: { category: 'adult' | 'child' | 'infant'; min_age: number; max_age: number | null }[];
}

export interface UpstreamRoomType {
  id: string;
  property_id: number;
  name: UpstreamText;
  /** = occupancy.max_total. */
  max_occupancy: number;
  occupancy: UpstreamOccupancy;
  bed_groups: { id: string; description: UpstreamText }[];
  descriptions: { overview: UpstreamText };
  /** Square metres. */
  area_sqm: number;
  views: RoomView[];
  amenities: UpstreamAmenity[];
  images: UpstreamImage[];
  rate_plans: UpstreamRatePlan[];
}

export interface UpstreamProperty {
  id: number;
  /** The property's own name, as it is spelled everywhere (not translated). */
  name: string;
  city: string;
  country: string;
  address: string;
  star_rating: number;
  latitude: number;
  longitude: number;
  timezone: string;
  updated_at: string;
  descriptions: {
    headline: UpstreamText;
    general: UpstreamText;
    location: UpstreamText;
    rooms: UpstreamText;
    dining: UpstreamText;
    amenities: UpstreamText;
  };
  amenities: UpstreamAmenity[];
  /** The hero first, then the gallery. */
  images: UpstreamImage[];
  checkin: {
    /** Local time, HH:MM. */
    begin_time: string;
    /** Local time, HH:MM; null when the desk is open around the clock. */
    end_time: string | null;
    min_age: number;
    instructions: UpstreamText;
  };
  checkout: { time: string };
  policies: { children: UpstreamText; pets: UpstreamText; extra_beds: UpstreamText; know_before_you_go: UpstreamText };
  /** E.164, e.g. +82-2-1234-5678. */
  phone: string;
  chain: { id: string; name: string } | null;
  brand: { id: string; name: string } | null;
  /** Languages the staff speak, as BCP 47 primary tags (`ko`, `en`, ...). */
  spoken_languages: string[];
  /** Guest reviews: score 0.0 to 10.0; null when the property has none yet. */
  review: { score: number; count: number } | null;
  /** Present on detail and batch answers, and on lists asked with include=rooms. */
  room_types?: UpstreamRoomType[];
}

export interface PropertyPage {
  properties: UpstreamProperty[];
  /** Pass back as `cursor` for the next page; null on the last. */
  next_cursor: string | null;
}

export interface PropertyBatch {
  properties: UpstreamProperty[];
  missing: number[];
}

/** One room of the party. */
export interface RoomOccupancy {
  adults: number;
  children_ages: number[];
}

export interface AvailabilityRequest {
  checkin: string;
  checkout: string;
  /** One entry per room; every room is of the same room type and rate plan. */
  occupancy: RoomOccupancy[];
  /** At most 1,000; when absent, every property (narrowed by city and stars). */
  property_ids?: number[];
  city?: string;
  star_rating_min?: number;
  /** Amenity codes every listed property has (all of them). */
  amenities?: string[];
  /** `lowest`: only the cheapest bookable rate per property; `rates`: every rate. */
  detail: 'lowest' | 'rates';
}

export interface NightPrice {
  date: string;
  /** Per room, KRW. */
  base: number;
  tax_and_fees: number;
}

export interface UpstreamRate {
  rateplan_id: string;
  roomtype_id: string;
  /** Rooms of this type free on every night of the stay. */
  available_rooms: number;
  /** Per room, per night. */
  nights: NightPrice[];
  /** For the whole party (every room, every night), KRW. */
  total_base: number;
  total_tax_and_fees: number;
}

export interface PropertyAvailability {
  property_id: number;
  /** Enough to list the property in results without a content lookup. */
  name: string;
  city: string;
  star_rating: number;
  /** The property's hero image, and its amenity codes, to show and filter results without a content lookup. */
  hero_image: UpstreamImage | null;
  amenity_codes: string[];
  /** True when some rate has enough rooms for the party. */
  available: boolean;
  /** `detail: rates`: every rate whose room fits each room's occupancy; `lowest`: the cheapest bookable one. */
  rates: UpstreamRate[];
}

export interface AvailabilityResponse {
  results: PropertyAvailability[];
}

/**
 * Several availability searches in one call, each with its own stay and party (a partner pricing
 * many properties for different dates). Every item names its properties: a batch never scans the
 * whole catalog. At most AVAILABILITY_BATCH_LIMIT items and 1,000 property ids in all.
 */
export interface AvailabilityBatchRequest {
  items: (AvailabilityRequest & { property_ids: number[] })[];
}

/** Items per availability batch the provider takes. */
export const AVAILABILITY_BATCH_LIMIT = 100;

/**
 * One answer per item, in the order of the request: the item's results, or why the provider
 * would not price that item (the other items are priced all the same).
 */
export interface AvailabilityBatchResponse {
  items: (AvailabilityResponse | UpstreamErrorBody)[];
}

export interface PriceCheckRequest {
  property_id: number;
  roomtype_id: string;
  rateplan_id: string;
  checkin: string;
  checkout: string;
  occupancy: RoomOccupancy[];
  /** The inclusive total (KRW) the caller was quoted. */
  expected_total: number;
}

export interface PriceCheckResponse {
  status: 'matched' | 'price_changed' | 'sold_out';
  /** Null when sold out. */
  rate: UpstreamRate | null;
}

export interface BookRequest {
  /** The caller's id for the booking; a repeated reference returns the first booking. */
  reference: string;
  property_id: number;
  roomtype_id: string;
  rateplan_id: string;
  checkin: string;
  checkout: string;
  occupancy: RoomOccupancy[];
  /** The inclusive total (KRW) agreed at price check; the provider refuses another price. */
  total: number;
  guest: { first_name: string | null; last_name: string | null; name: string };
}

export type UpstreamBookingStatus = ProviderBookingStatus;

export interface UpstreamBooking {
  reference: string;
  /** The provider's confirmation number. */
  confirmation_number: string;
  status: UpstreamBookingStatus;
  property_id: number;
  roomtype_id: string;
  rateplan_id: string;
  checkin: string;
  checkout: string;
  rooms: number;
  total: number;
  created_at: string;
  cancelled_at: string | null;
}

export interface UpstreamErrorBody {
  error: { code: string; message: string };
}

/** New dates for a booking, priced for its room type, rate plan and party. */
export interface ChangeQuoteRequest {
  checkin: string;
  checkout: string;
}

export interface ChangeQuoteResponse {
  /** `available`: every room of the booking is free on the new nights (its own rooms count as free). */
  status: 'available' | 'sold_out';
  /** The rate for the new stay, every room of the booking; null when sold out. */
  rate: UpstreamRate | null;
}

export interface ModifyRequest {
  /** The caller's id for this change; a repeated id that applied returns the booking as it is. */
  modification_id: string;
  checkin: string;
  checkout: string;
  /** The inclusive total (KRW) of the new stay as quoted; the provider refuses another price. */
  total: number;
}
