import { OpenAPIHono, z } from '@hono/zod-openapi';
import { getProperty, ratePlansOf, type Property, type PropertySummary, type RatePlan, type RoomType } from '../../src/services/catalog/index.js';
import { callOptions } from '../../src/services/kernel/index.js';
import { dataEnvelope, errorResponses, meta, ok } from '../envelope.js';
import type { HttpEnv } from '../env.js';
import { scopedRoute } from '../routing.js';
import { idParam } from '../params.js';
import { started, streamResponse } from '../stream.js';

/** Property content (spec §4.3; shapes in DECISIONS.md). */

/** The property shape, with the id type of a version: v1 integers, v2 strings (spec §9). */
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
    meal_plan: z.enum(['room_only', 'breakfast', 'half_board', 'full_board']),
    refundable: z.boolean(),
    cancellation_policy: z.enum(['flexible', 'moderate', 'strict', 'non_refundable']),
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

const PropertyPath = z.object({ id: idParam.openapi({ param: { name: 'id', in: 'path' }, type: 'integer', example: 1 }) });

const listRoute = scopedRoute('properties.list', {
  method: 'get',
  path: '/properties',
  tags: ['Content'],
  summary: 'Every property of the catalog',
  description: 'Takes no parameters (any sent are ignored). The list is streamed in id order.',
  responses: {
    200: { description: 'The properties', content: { 'application/json': { schema: dataEnvelope(z.array(PropertyWire)) } } },
    ...errorResponses(502),
  },
});

const detailRoute = scopedRoute('property.read', {
  method: 'get',
  path: '/properties/{id}',
  tags: ['Content'],
  summary: 'One property',
  request: { params: PropertyPath },
  responses: {
    200: { description: 'The property', content: { 'application/json': { schema: dataEnvelope(PropertyWire) } } },
    ...errorResponses(400, 404, 502),
  },
});

const roomTypesRoute = scopedRoute('property.roomTypes', {
  method: 'get',
  path: '/properties/{id}/roomtypes',
  tags: ['Content'],
  summary: 'Room types of a property',
  request: { params: PropertyPath },
  responses: {
    200: { description: 'The room types', content: { 'application/json': { schema: dataEnvelope(z.array(RoomTypeWire)) } } },
    ...errorResponses(400, 404, 502),
  },
});

const ratePlansRoute = scopedRoute('property.ratePlans', {
  method: 'get',
  path: '/properties/{id}/rateplans',
  tags: ['Content'],
  summary: 'Rate plans of a property, optionally of one room type',
  request: {
    params: PropertyPath,
    query: z.object({
      roomtype_id: z.string().min(1).max(100).optional().openapi({ description: 'Only this room type\'s plans; unknown: 404' }),
    }),
  },
  responses: {
    200: { description: 'The rate plans', content: { 'application/json': { schema: dataEnvelope(z.array(RatePlanWire)) } } },
    ...errorResponses(400, 404, 502),
  },
});

export function propertyRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(listRoute, async (c) => {
    const ctx = c.get('ctx');
    const pages = await started(ctx.deps.catalog.pages({ includeRooms: false }, callOptions(ctx)));
    async function* body() {
      yield '{"data":[';
      let separator = '';
      for await (const page of pages) {
        if (!page.length) continue;
        yield separator + page.map((p) => JSON.stringify(propertyToWire(p))).join(',');
        separator = ',';
      }
      yield `],"meta":${JSON.stringify(meta(c))}}`;
    }
    return streamResponse(c, body(), { 'content-type': 'application/json; charset=utf-8' }) as never;
  });

  app.openapi(detailRoute, async (c) => {
    const property = await getProperty(c.get('ctx'), c.req.valid('param').id);
    return ok(c, propertyToWire(property));
  });

  app.openapi(roomTypesRoute, async (c) => {
    const property: Property = await getProperty(c.get('ctx'), c.req.valid('param').id);
    return ok(c, property.roomTypes.map(roomTypeToWire));
  });

  app.openapi(ratePlansRoute, async (c) => {
    const property = await getProperty(c.get('ctx'), c.req.valid('param').id);
    return ok(c, ratePlansOf(property, c.req.valid('query').roomtype_id).map(ratePlanToWire));
  });
}
