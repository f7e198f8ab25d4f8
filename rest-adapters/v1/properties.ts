import { OpenAPIHono, z } from '@hono/zod-openapi';
import { getProperty, ratePlansOf, type Property } from '../../src/services/catalog/index.js';
import { callOptions, NotFoundError, UpstreamError, ValidationError } from '../../src/services/kernel/index.js';
import { dataEnvelope, errorResponses, meta, ok, okJson } from '../envelope.js';
import type { HttpEnv } from '../env.js';
import { scopedRoute } from '../routing.js';
import { idParam } from '../params.js';
import { started, streamResponse } from '../stream.js';
import { acceptLanguageParameter } from '../language.js';
import { PropertyWire, propertyToWire, RatePlanWire, ratePlanToWire, RoomTypeWire, roomTypeToWire, type WireOptions, wireOptions } from '../wire/properties.js';

/**
 * Property content (docs/spec/channel-api.md §4.3; shapes in docs/spec/DECISIONS.md and rest-adapters/wire/properties.ts),
 * in the request's language (Accept-Language; rest-adapters/language.ts).
 */

const PropertyPath = z.object({ id: idParam.openapi({ param: { name: 'id', in: 'path' }, type: 'integer', example: 1 }) });

const listRoute = scopedRoute('properties.list', {
  method: 'get',
  path: '/properties',
  operationId: 'listProperties',
  tags: ['Content'],
  summary: 'Every property of the catalog',
  description: 'Takes no query parameters (any sent are ignored). The list is streamed in id order; room types are not included.',
  parameters: [acceptLanguageParameter],
  responses: {
    200: { description: 'The properties', content: { 'application/json': { schema: dataEnvelope(z.array(PropertyWire)) } } },
    ...errorResponses(UpstreamError),
  },
});

const detailRoute = scopedRoute('property.read', {
  method: 'get',
  path: '/properties/{id}',
  operationId: 'getProperty',
  tags: ['Content'],
  summary: 'One property',
  parameters: [acceptLanguageParameter],
  request: { params: PropertyPath },
  responses: {
    200: { description: 'The property', content: { 'application/json': { schema: dataEnvelope(PropertyWire) } } },
    ...errorResponses(ValidationError, NotFoundError, UpstreamError),
  },
});

const roomTypesRoute = scopedRoute('property.roomTypes', {
  method: 'get',
  path: '/properties/{id}/roomtypes',
  operationId: 'listRoomTypes',
  tags: ['Content'],
  summary: 'Room types of a property',
  parameters: [acceptLanguageParameter],
  request: { params: PropertyPath },
  responses: {
    200: { description: 'The room types', content: { 'application/json': { schema: dataEnvelope(z.array(RoomTypeWire)) } } },
    ...errorResponses(ValidationError, NotFoundError, UpstreamError),
  },
});

const ratePlansRoute = scopedRoute('property.ratePlans', {
  method: 'get',
  path: '/properties/{id}/rateplans',
  operationId: 'listRatePlans',
  tags: ['Content'],
  summary: 'Rate plans of a property, optionally of one room type',
  parameters: [acceptLanguageParameter],
  request: {
    params: PropertyPath,
    query: z.object({
      roomtype_id: z.string().min(1).max(100).optional().openapi({ description: 'Only this room type\'s plans; unknown: 404' }),
    }),
  },
  responses: {
    200: { description: 'The rate plans', content: { 'application/json': { schema: dataEnvelope(z.array(RatePlanWire)) } } },
    ...errorResponses(ValidationError, NotFoundError, UpstreamError),
  },
});

/**
 * A property's wire JSON, made once per content object and (language, origin): the content cache
 * hands out the same (never modified) Property until it is refreshed, so a cached read serialises
 * nothing but its meta. The origin comes from PUBLIC_BASE_URL or the request's Host, so one
 * property keeps at most MAX_VARIANTS of them (4 languages × 2 origins, say): past that, a
 * request's JSON is made and not kept, so Host headers cannot grow the cache.
 */
const wireJson = new WeakMap<Property, Map<string, string>>();
const MAX_VARIANTS = 8;
function propertyJson(property: Property, options: WireOptions): string {
  const key = options.language + options.origin;
  let variants = wireJson.get(property);
  let json = variants?.get(key);
  if (json === undefined) {
    json = JSON.stringify(propertyToWire(property, options));
    if (!variants) wireJson.set(property, (variants = new Map()));
    if (variants.size < MAX_VARIANTS) variants.set(key, json);
  }
  return json;
}

export function propertyRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(listRoute, async (c) => {
    const ctx = c.get('ctx');
    const pages = await started(ctx.deps.catalog.pages({ includeRooms: false }, callOptions(ctx)));
    const options = wireOptions(c);
    async function* body() {
      yield '{"data":[';
      let separator = '';
      for await (const page of pages) {
        if (!page.length) continue;
        yield separator + page.map((p) => JSON.stringify(propertyToWire(p, options))).join(',');
        separator = ',';
      }
      yield `],"meta":${JSON.stringify(meta(c))}}`;
    }
    return streamResponse(c, body(), { 'content-type': 'application/json; charset=utf-8' }) as never;
  });

  app.openapi(detailRoute, async (c) => {
    const property = await getProperty(c.get('ctx'), c.req.valid('param').id);
    return okJson(c, propertyJson(property, wireOptions(c))) as never;
  });

  app.openapi(roomTypesRoute, async (c) => {
    const property: Property = await getProperty(c.get('ctx'), c.req.valid('param').id);
    const options = wireOptions(c);
    return ok(c, property.roomTypes.map((r) => roomTypeToWire(r, options)));
  });

  app.openapi(ratePlansRoute, async (c) => {
    const property = await getProperty(c.get('ctx'), c.req.valid('param').id);
    const plans = ratePlansOf(property, c.req.valid('query').roomtype_id);
    const options = wireOptions(c);
    return ok(c, plans.map((p) => ratePlanToWire(p, options)));
  });
}
