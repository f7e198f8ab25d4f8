import { OpenAPIHono, z } from '@hono/zod-openapi';
import { callOptions, principalOf } from '../../src/services/kernel/index.js';
import type { RequestContext } from '../../src/context.js';
import { getProperty, type PropertySummary, type RoomType } from '../../src/services/catalog/properties.js';
import { searchRules } from '../../src/services/search/search.js';
import { TokenError, type TokenFailure } from '../../src/services/access/index.js';
import { toSummary } from '../../src/services/catalog/catalog.js';
import { invalidRequest, v2ErrorResponses } from '../envelope.js';
import type { HttpEnv } from '../env.js';
import { v2ScopedRoute } from '../routing.js';
import { idParam, intParam } from '../params.js';
import { propertyToWire, propertyWireWith, roomTypeToWire, roomTypeWireWith } from '../v1/properties.js';

/**
 * v2 content (spec §4.6 "Content endpoints", §9; DECISIONS.md "v2 property list"). The v1 shapes
 * with every property id as a string; bodies are not wrapped in `data` (the list is
 * `{properties, next_page_token}`, a property is the object, room types are an array), errors are.
 *
 * Page tokens wrap the provider's cursor in a token signed like the flow tokens (kind `v2_page`):
 * opaque, tamper-evident, bound to the channel and to the `updated_since` filter of the first
 * page, and valid for a day. Anything wrong with one is 400 INVALID_REQUEST naming `page_token`.
 */

export const PAGE_TOKEN_TTL_SECONDS = 24 * 60 * 60;
const DEFAULT_PER_PAGE = 20;

const PropertyV2 = propertyWireWith(z.string().openapi({ example: '1', description: 'v2 ids are strings (spec §9)' })).openapi('PropertyV2');
const RoomTypeV2 = roomTypeWireWith(z.string().openapi({ example: '1' })).openapi('RoomTypeV2');
const PropertyListV2 = z
  .object({
    properties: z.array(PropertyV2),
    next_page_token: z.string().nullable().openapi({ description: 'Pass as page_token for the next page; null on the last' }),
  })
  .openapi('PropertyListV2');

function propertyToV2(p: PropertySummary): z.infer<typeof PropertyV2> {
  return { ...propertyToWire(p), id: String(p.id) };
}

function roomTypeToV2(r: RoomType): z.infer<typeof RoomTypeV2> {
  return { ...roomTypeToWire(r), property_id: String(r.propertyId) };
}

/** What a page token stands for: where the provider's catalog continues, under which filter. */
const pageClaims = z.object({
  channel_id: z.string(),
  cursor: z.string().min(1).max(200),
  updated_since: z.iso.datetime().nullable(),
});

const ListQuery = z.object({
  page_token: z
    .string()
    .max(2000, 'not a page token from this API')
    .optional()
    .openapi({ description: 'next_page_token of the previous page; omit (or leave empty) for the first page' }),
  per_page: intParam(searchRules.perPage)
    .optional()
    .openapi({ type: 'integer', minimum: 1, maximum: 100, default: DEFAULT_PER_PAGE }),
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
  tags: ['Content'],
  summary: 'Properties in id order, a page at a time',
  request: { query: ListQuery },
  responses: {
    200: { description: 'A page of properties', content: { 'application/json': { schema: PropertyListV2 } } },
    ...v2ErrorResponses(400, 502),
  },
});

const detailRoute = v2ScopedRoute('property.read', {
  method: 'get',
  path: '/properties/{id}',
  tags: ['Content'],
  summary: 'One property',
  request: { params: PropertyPath },
  responses: {
    200: { description: 'The property', content: { 'application/json': { schema: PropertyV2 } } },
    ...v2ErrorResponses(400, 404, 502),
  },
});

const roomTypesRoute = v2ScopedRoute('property.roomTypes', {
  method: 'get',
  path: '/properties/{id}/roomtypes',
  tags: ['Content'],
  summary: 'Room types of a property',
  request: { params: PropertyPath },
  responses: {
    200: { description: 'The room types', content: { 'application/json': { schema: z.array(RoomTypeV2) } } },
    ...v2ErrorResponses(400, 404, 502),
  },
});

const PAGE_TOKEN_REASONS: Record<TokenFailure, string> = {
  malformed: 'not a page token from this API',
  wrong_type: 'not a page token',
  foreign: 'issued to another channel',
  expired: 'expired; start again from the first page',
};

function badPageToken(reason: string) {
  return invalidRequest([{ field: 'page_token', reason }], 'The page_token is not valid');
}

async function readPageToken(ctx: RequestContext, token: string) {
  try {
    return await ctx.deps.tokens.verify('v2_page', token, pageClaims, {
      now: ctx.deps.clock(),
      channelId: principalOf(ctx).channelId,
    });
  } catch (error) {
    if (error instanceof TokenError) throw badPageToken(PAGE_TOKEN_REASONS[error.reason]);
    throw error;
  }
}

export function v2ContentRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(listRoute, async (c) => {
    const ctx = c.get('ctx');
    const query = c.req.valid('query');
    let cursor: string | undefined;
    let updatedSince = query.updated_since;
    if (query.page_token) {
      const claims = await readPageToken(ctx, query.page_token);
      const signed = claims.updated_since === null ? undefined : new Date(claims.updated_since);
      if (updatedSince !== undefined && updatedSince.getTime() !== signed?.getTime()) {
        throw invalidRequest([{ field: 'updated_since', reason: 'differs from the first page\'s; omit it with a page_token' }]);
      }
      cursor = claims.cursor;
      updatedSince = signed;
    }
    const page = await ctx.deps.upstream.listProperties(
      { cursor, limit: query.per_page ?? DEFAULT_PER_PAGE, updatedSince, includeRooms: false },
      callOptions(ctx),
    );
    if (!page) {
      // Only a cursor of ours gets this far; the provider no longer takes it (it was replaced or
      // changed its cursors since). Starting again is what the partner can do.
      ctx.logger.warn('the provider refused a cursor from a signed page token');
      throw badPageToken('no longer valid; start again from the first page');
    }
    const nextPageToken = page.next_cursor
      ? await ctx.deps.tokens.sign(
          'v2_page',
          {
            channel_id: principalOf(ctx).channelId,
            cursor: page.next_cursor,
            updated_since: updatedSince?.toISOString() ?? null,
          } satisfies z.infer<typeof pageClaims>,
          { now: ctx.deps.clock(), ttlSeconds: PAGE_TOKEN_TTL_SECONDS },
        )
      : null;
    return c.json({ properties: page.properties.map((p) => propertyToV2(toSummary(p))), next_page_token: nextPageToken }, 200);
  });

  app.openapi(detailRoute, async (c) => {
    const property = await getProperty(c.get('ctx'), c.req.valid('param').id);
    return c.json(propertyToV2(property), 200);
  });

  app.openapi(roomTypesRoute, async (c) => {
    const property = await getProperty(c.get('ctx'), c.req.valid('param').id);
    return c.json(property.roomTypes.map(roomTypeToV2), 200);
  });
}
