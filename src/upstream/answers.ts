import { z } from 'zod';
import { CANCELLATION_POLICY_TYPES, MEAL_PLANS, PROVIDER_BOOKING_STATUSES } from '../services/kernel/index.js';

/**
 * The provider's answers, checked before use: an answer that does not fit the protocol is a
 * provider fault (502), never a crash deeper in the service. Unknown fields are dropped.
 */

const amount = z.int().nonnegative();
const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

const ratePlan = z.object({
  id: z.string(),
  roomtype_id: z.string(),
  name: z.string(),
  meal_plan: z.enum(MEAL_PLANS),
  refundable: z.boolean(),
  cancellation_policy: z.enum(CANCELLATION_POLICY_TYPES),
});

const roomType = z.object({
  id: z.string(),
  property_id: z.int(),
  name: z.string(),
  max_occupancy: z.int().positive(),
  bed_groups: z.array(z.object({ id: z.string(), description: z.string() })),
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
