/**
 * Enumerations written once. zod schemas, GraphQL enums and OpenAPI documents derive from these
 * tuples, so their values and their order are the same everywhere.
 */

/** The cancellation policy kinds of a rate plan, from most to least lenient. */
export const CANCELLATION_POLICY_TYPES = ['flexible', 'moderate', 'strict', 'non_refundable'] as const;
export type CancellationPolicyType = (typeof CANCELLATION_POLICY_TYPES)[number];

/** The meal plans of a rate plan. */
export const MEAL_PLANS = ['room_only', 'breakfast', 'half_board', 'full_board'] as const;
export type MealPlan = (typeof MEAL_PLANS)[number];

/**
 * The statuses of a booking a partner can see, in the order of docs/spec/channel-api.md §2.2.
 * Every booking status is one of these or an internal one (`processing`, `void`;
 * services/bookings/states.ts).
 */
export const VISIBLE_BOOKING_STATUSES = [
  'pending',
  'confirmed',
  'cancelling',
  'cancelled',
  'completed',
  'failed',
  'checked_in',
  'checked_out',
  'no_show',
] as const;
export type VisibleBookingStatus = (typeof VISIBLE_BOOKING_STATUSES)[number];

/** The statuses the provider reports for a booking (its answers and the simulator), a subset of the visible ones. */
export const PROVIDER_BOOKING_STATUSES = [
  'confirmed',
  'pending',
  'cancelled',
  'failed',
  'checked_in',
  'checked_out',
  'no_show',
] as const satisfies readonly VisibleBookingStatus[];
export type ProviderBookingStatus = (typeof PROVIDER_BOOKING_STATUSES)[number];

/**
 * The languages content is served in (docs/decisions.md, "Content and languages"). The first is
 * the default and the fallback: a text the provider has not translated is served in it, field by
 * field, and every text has it.
 */
export const LANGUAGES = ['ko-KR', 'en-US', 'ja-JP', 'zh-CN'] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'ko-KR';

/** The groups a property's amenities fall into. */
export const AMENITY_GROUPS = ['general', 'internet', 'parking', 'wellness', 'family', 'accessibility'] as const;
export type AmenityGroup = (typeof AMENITY_GROUPS)[number];

/** What an image shows. */
export const IMAGE_CATEGORIES = ['exterior', 'lobby', 'room', 'bathroom', 'dining', 'pool', 'fitness', 'spa', 'view'] as const;
export type ImageCategory = (typeof IMAGE_CATEGORIES)[number];

/**
 * The sizes every image is held at, smallest first, with their pixel widths (3:2, height =
 * width × 2 / 3). The provider advertises each image at each of them.
 */
export const IMAGE_SIZES = ['thumbnail', 'medium', 'large'] as const;
export type ImageSize = (typeof IMAGE_SIZES)[number];
export const IMAGE_WIDTHS: Readonly<Record<ImageSize, number>> = { thumbnail: 200, medium: 640, large: 1280 };

/** What a room's windows look onto. */
export const ROOM_VIEWS = ['city', 'sea', 'mountain', 'garden', 'river', 'courtyard', 'pool'] as const;
export type RoomView = (typeof ROOM_VIEWS)[number];
