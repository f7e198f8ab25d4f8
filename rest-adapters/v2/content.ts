import { OpenAPIHono, z } from '@hono/zod-openapi';
import { getProperty, listProperties, type PropertySummary, type RoomType } from '../../src/services/catalog/index.js';
import { searchRules } from '../../src/services/search/index.js';
import { v2ErrorResponses } from '../envelope.js';
import type { HttpEnv } from '../env.js';
import { v2ScopedRoute } from '../routing.js';
import { idParam, intParam } from '../params.js';
import { acceptLanguageParameter } from '../language.js';
import {
  propertyExample,
  propertyToWire,
  propertyWireWith,
  roomTypeExample,
  roomTypeToWire,
  roomTypeWireWith,
  type WireOptions,
  wireOptions,
} from '../wire/properties.js';
import { BadRequestError, NotFoundError, UpstreamError } from '../../src/services/kernel/index.js';

/**
 * v2 content (docs/spec/channel-api.md §4.6 "Content endpoints", §9; docs/spec/DECISIONS.md "v2 property list"). The v1 shapes
 * with every property id as a string; bodies are not wrapped in `data` (the list is
 * `{properties, next_page_token}`, a property is the object, room types are an array), errors are.
 * Texts are in the request's language (Accept-Language; rest-adapters/language.ts).
 *
 * Page tokens (signed, bound to the channel and to the first page's `updated_since`, valid for a
 * day) are made and checked by the catalog's listing (src/services/catalog/listing.ts); anything
 * wrong with one is 400 INVALID_REQUEST naming `page_token`.
 */
const DEFAULT_PER_PAGE = 20;

const PropertyV2 = propertyWireWith(z.string().openapi({ example: '1', description: 'v2 ids are strings (spec §9)' })).openapi('PropertyV2', {
  example: propertyExample('1'),
});
const RoomTypeV2 = roomTypeWireWith(z.string().openapi({ example: '1' })).openapi('RoomTypeV2', { example: roomTypeExample('1') });
const PropertyListV2 = z
  .object({
    properties: z.array(PropertyV2),
    next_page_token: z.string().nullable().openapi({ description: 'Pass as page_token for the next page; null on the last' }),
  })
  .openapi('PropertyListV2');

function propertyToV2(p: PropertySummary, options: WireOptions): z.infer<typeof PropertyV2> {
  return { ...propertyToWire(p, options), id: String(p.id) };
}

function roomTypeToV2(r: RoomType, options: WireOptions): z.infer<typeof RoomTypeV2> {
  return { ...roomTypeToWire(r, options), property_id: String(r.propertyId) };
}

const ListQuery = z.object({
  page_token: z
    .string()
    .max(2000, 'not a page token from this API')
    .optional()
    .openapi({ description: 'next_page_token of the previous page; omit (or leave empty) for the first page' }),
  per_page: intParam(searchRules.perPage).optional().openapi({ default: DEFAULT_PER_PAGE }),
  updated_since: z.iso
    .datetime({ offset: true, error: 'an ISO 8601 date-time, e.g. 2026-06-01T00:00:00Z' })
    .transform((v) => new Date(v))
    .optional()
    .openapi({
      type: 'string',
      format: 'date-time',
      description: 'Only properties whose content changed after this instant. With a page_token it may be omitted; if sent, it must be the first page\'s.',
    }),
});

const PropertyPath = z.object({
  id: idParam.openapi({ param: { name: 'id', in: 'path' }, type: 'string', pattern: '^\\d{1,10}$', example: '1' }),
});

const listRoute = v2ScopedRoute('properties.list', {
  method: 'get',
  path: '/properties',
  operationId: 'v2ListProperties',
  tags: ['Content'],
  summary: 'Properties in id order, a page at a time',
  parameters: [acceptLanguageParameter],
  request: { query: ListQuery },
  responses: {
    200: { description: 'A page of properties', content: { 'application/json': { schema: PropertyListV2 } } },
    ...v2ErrorResponses(BadRequestError, UpstreamError),
  },
});

const detailRoute = v2ScopedRoute('property.read', {
  method: 'get',
  path: '/properties/{id}',
  operationId: 'v2GetProperty',
  tags: ['Content'],
  summary: 'One property',
  parameters: [acceptLanguageParameter],
  request: { params: PropertyPath },
  responses: {
    200: { description: 'The property', content: { 'application/json': { schema: PropertyV2 } } },
    ...v2ErrorResponses(BadRequestError, NotFoundError, UpstreamError),
  },
});

const roomTypesRoute = v2ScopedRoute('property.roomTypes', {
  method: 'get',
  path: '/properties/{id}/roomtypes',
  operationId: 'v2ListRoomTypes',
  tags: ['Content'],
  summary: 'Room types of a property',
  parameters: [acceptLanguageParameter],
  request: { params: PropertyPath },
  responses: {
    200: { description: 'The room types', content: { 'application/json': { schema: z.array(RoomTypeV2) } } },
    ...v2ErrorResponses(BadRequestError, NotFoundError, UpstreamError),
  },
});

export function v2ContentRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(listRoute, async (c) => {
    const ctx = c.get('ctx');
    const query = c.req.valid('query');
    const page = await listProperties(
      ctx,
      { pageToken: query.page_token, updatedSince: query.updated_since, limit: query.per_page ?? DEFAULT_PER_PAGE },
      { names: { pageToken: 'page_token', updatedSince: 'updated_since' } },
    );
    const options = wireOptions(c);
    return c.json({ properties: page.properties.map((p) => propertyToV2(p, options)), next_page_token: page.nextPageToken }, 200);
  });

  app.openapi(detailRoute, async (c) => {
    const property = await getProperty(c.get('ctx'), c.req.valid('param').id);
    return c.json(propertyToV2(property, wireOptions(c)), 200);
  });

  app.openapi(roomTypesRoute, async (c) => {
    const property = await getProperty(c.get('ctx'), c.req.valid('param').id);
    const options = wireOptions(c);
    return c.json(property.roomTypes.map((r) => roomTypeToV2(r, options)), 200);
  });
}
