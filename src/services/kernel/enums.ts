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
