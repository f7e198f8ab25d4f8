import { z } from '@hono/zod-openapi';
import type { PropertySummary, RatePlan, RoomType } from '../../src/services/catalog/index.js';
import { CANCELLATION_POLICY_TYPES, MEAL_PLANS } from '../../src/services/kernel/index.js';

/**
 * The one wire mapping of property content (docs/spec/channel-api.md §4.3, §9; shapes in docs/spec/DECISIONS.md), for every
 * REST surface: v1 properties and content files (rest-adapters/v1/properties.ts, content.ts) and
 * v2 content (rest-adapters/v2/content.ts, the same shapes with string ids).
 */

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
  });
}

export const PropertyWire = propertyWireWith(z.int()).openapi('Property');

/** The room type shape, with the property id type of a version. */
export function roomTypeWireWith<I extends z.ZodType>(propertyId: I) {
  return z.object({
    id: z.string(),
    property_id: propertyId,
    name: z.string(),
    max_occupancy: z.int(),
    bed_groups: z.array(z.object({ id: z.string(), description: z.string() })),
  });
}

export const RoomTypeWire = roomTypeWireWith(z.int()).openapi('RoomType');

export const RatePlanWire = z
  .object({
    id: z.string(),
    roomtype_id: z.string(),
    name: z.string(),
    meal_plan: z.enum(MEAL_PLANS),
    refundable: z.boolean(),
    cancellation_policy: z.enum(CANCELLATION_POLICY_TYPES),
  })
  .openapi('RatePlan');

export function propertyToWire(p: PropertySummary): z.infer<typeof PropertyWire> {
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
  };
}

export function roomTypeToWire(r: RoomType): z.infer<typeof RoomTypeWire> {
  return { id: r.id, property_id: r.propertyId, name: r.name, max_occupancy: r.maxOccupancy, bed_groups: r.bedGroups };
}

export function ratePlanToWire(p: RatePlan): z.infer<typeof RatePlanWire> {
  return {
    id: p.id,
    roomtype_id: p.roomtypeId,
    name: p.name,
    meal_plan: p.mealPlan,
    refundable: p.refundable,
    cancellation_policy: p.cancellationPolicy,
  };
}
