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
