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
 *   POST /price-check         PriceCheckRequest    re-prices one rate (prices move, stock runs out)
 *   POST /bookings            BookRequest          books one rate; idempotent on `reference`
 *   GET  /bookings/{reference}                     the provider's view of a booking
 *   POST /bookings/{reference}/cancel              cancels; idempotent
 *
 * Errors: `{ "error": { "code", "message" } }` with 4xx/5xx. The header `X-Test-Scenario` forces
 * a sandbox outcome (see SCENARIOS).
 */

export const SCENARIOS = ['price_changed', 'sold_out', 'upstream_error', 'upstream_timeout', 'pending'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export type CancellationPolicyType = 'flexible' | 'moderate' | 'strict' | 'non_refundable';
export type MealPlan = 'room_only' | 'breakfast' | 'half_board' | 'full_board';

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

export type UpstreamBookingStatus = 'confirmed' | 'pending' | 'cancelled' | 'failed' | 'checked_in' | 'checked_out' | 'no_show';

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
