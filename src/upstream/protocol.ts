import type { CancellationPolicyType, MealPlan, ProviderBookingStatus } from '../services/kernel/index.js';

/**
 * The wire protocol between the service and its inventory provider: JSON over HTTP, snake_case,
 * amounts as integers in KRW (the provider's currency). The bundled simulator serves it and the
 * undici client speaks it; a real provider is adapted to it at src/upstream/.
 *
 *   GET  /health                                   liveness
 *   GET  /properties?cursor=&limit=&updated_since=&include=rooms
 *                                                  pages of properties, by id
 *   GET  /properties/{id}                          one property with room types and rate plans
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

export interface UpstreamRatePlan {
  id: string;
  roomtype_id: string;
  name: string;
  meal_plan: MealPlan;
  refundable: boolean;
  cancellation_policy: CancellationPolicyType;
}

export interface UpstreamRoomType {
  id: string;
  property_id: number;
  name: string;
  max_occupancy: number;
  bed_groups: { id: string; description: string }[];
  rate_plans: UpstreamRatePlan[];
}

export interface UpstreamProperty {
  id: number;
  name: string;
  city: string;
  country: string;
  address: string;
  star_rating: number;
  latitude: number;
  longitude: number;
  timezone: string;
  updated_at: string;
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
