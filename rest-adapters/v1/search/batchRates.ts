import { OpenAPIHono, z } from '@hono/zod-openapi';
import { BATCH_RATES_MAX_ITEMS, batchRates, itemFieldNames, readBatchItems, searchRules, SNAKE_NAMES, type BatchRatesResult } from '../../../src/services/search/index.js';
import { CURRENCIES, UpstreamError, ValidationError } from '../../../src/services/kernel/index.js';
import { ErrorEnvelope, errorResponses, Meta, ok } from '../../envelope.js';
import type { HttpEnv } from '../../env.js';
import { acceptLanguageParameter, servedIn, SERVED_IN_HEADERS } from '../../language.js';
import { scopedRoute } from '../../routing.js';
import { chargeItems } from '../../rateLimit.js';
import { offersToWire, PropertyAvailabilityWire } from './wire.js';

/**
 * POST /search/rates/batch (docs/spec/channel-api.md §4.7): the rates of several properties, each with its own dates
 * and party, in one call and one provider round trip. Each item reads like the query of
 * GET /search/availability/{propertyId} and is answered like it (price_check_tokens included), or
 * with an error of its own; results come in the order of the items.
 */

const BatchItemWire = z
  .object({
    property_id: searchRules.propertyId,
    checkin: searchRules.checkin.openapi({ example: '2026-12-24' }),
    checkout: searchRules.checkout.openapi({ example: '2026-12-26' }),
    adults: searchRules.adults.optional().openapi({ description: 'Adults in all rooms; not with occupancy' }),
    children: searchRules.children.optional().openapi({ description: 'Children in all rooms (default: as many as children_ages)' }),
    children_ages: searchRules.childrenAges.optional().openapi({ description: 'One age per child; a child without one counts as 8' }),
    rooms: searchRules.rooms.optional().openapi({ description: 'Default 1; the party is spread over the rooms' }),
    occupancy: searchRules.occupancy.optional().openapi({
      description: 'One per room: <adults> or <adults>-<age>,<age>. Not with adults, children or children_ages.',
      type: 'array',
      items: { type: 'string', pattern: '^\\d{1,2}(-\\d{1,2}(,\\d{1,2})*)?$' },
      example: ['2', '1-5,9'],
    }),
    roomtype_id: searchRules.roomtypeId.optional().openapi({ description: 'Only this room type (unknown: NOT_FOUND for the item)' }),
    rateplan_id: searchRules.rateplanId.optional().openapi({ description: 'Only this rate plan' }),
  })
  .strict()
  .transform((i) => ({
    propertyId: i.property_id,
    checkin: i.checkin,
    checkout: i.checkout,
    adults: i.adults,
    children: i.children,
    childrenAges: i.children_ages,
    rooms: i.rooms,
    occupancy: i.occupancy,
    roomtypeId: i.roomtype_id,
    rateplanId: i.rateplan_id,
  }))
  .openapi('BatchRatesItem', {
    description:
      'One property and stay, as the query of GET /search/availability/{propertyId}. An item that does not fit this ' +
      'schema is answered with its own VALIDATION_ERROR; the others are priced all the same.',
  });

const BatchRatesRequestWire = z
  .object({
    currency: searchRules.currency.optional().openapi({ enum: [...CURRENCIES], default: 'KRW', description: 'For every item' }),
    // Each item is read on its own (a bad one fails alone); the document gives their schema.
    items: z
      .array(z.unknown().openapi({ $ref: '#/components/schemas/BatchRatesItem' } as never))
      .min(1)
      .max(BATCH_RATES_MAX_ITEMS)
      .openapi({ description: `1 to ${BATCH_RATES_MAX_ITEMS} items; a property may appear more than once (other dates)` }),
  })
  .strict()
  .openapi('BatchRatesRequest');

const ItemError = ErrorEnvelope.shape.error;

const BatchRatesResultWire = z
  .discriminatedUnion('status', [
    z.object({
      property_id: z.int(),
      status: z.literal('ok'),
      data: PropertyAvailabilityWire,
    }),
    z.object({
      property_id: z.int().nullable().openapi({ description: 'Null when the item had no valid property_id' }),
      status: z.literal('error'),
      error: ItemError.openapi({
        description:
          'VALIDATION_ERROR (details.fields, named from the request root: items.3.checkin), NOT_FOUND (property, ' +
          'room type or rate plan), UPSTREAM_ERROR (the provider would not price this item)',
      }),
    }),
  ])
  .openapi('BatchRatesResult');

const batchRoute = scopedRoute('search.batchRates', {
  method: 'post',
  path: '/search/rates/batch',
  operationId: 'getRatesBatch',
  tags: ['Search'],
  summary: 'Rates of several properties, each with its own dates and party, in one call',
  description:
    `1 to ${BATCH_RATES_MAX_ITEMS} items, priced in one provider round trip. 200 with one result per item, in the order ` +
    'of the items: `status: ok` with `data` as GET /search/availability/{propertyId} gives it (price_check_token on each ' +
    'bookable rate), or `status: error` with an `error` of its own. 400 only when the request as a whole is wrong ' +
    '(no items array, more than 50, an unknown currency or field); 502 when the provider fails the round trip. ' +
    'A batch costs 1 rate-limit point per item (the X-RateLimit-* headers count them); one that does not fit in ' +
    'what is left of the window is refused whole with 429.',
  parameters: [acceptLanguageParameter],
  request: { body: { required: true, content: { 'application/json': { schema: BatchRatesRequestWire } } } },
  responses: {
    200: {
      description: 'One result per item, in order',
      headers: SERVED_IN_HEADERS,
      content: { 'application/json': { schema: z.object({ data: z.array(BatchRatesResultWire), meta: Meta }) } },
    },
    ...errorResponses(ValidationError, UpstreamError),
  },
});

function resultToWire(r: BatchRatesResult): z.infer<typeof BatchRatesResultWire> {
  if (r.status === 'ok') return { property_id: r.propertyId, status: 'ok', data: offersToWire(r.offers) };
  const { code, message, details } = r.error;
  return { property_id: r.propertyId, status: 'error', error: { code, message, details } };
}

export function batchRatesRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openAPIRegistry.register('BatchRatesItem', BatchItemWire);

  app.openapi(batchRoute, async (c) => {
    const body = c.req.valid('json');
    await chargeItems(c, body.items.length);
    const items = readBatchItems(body.items, BatchItemWire, { fieldPrefix: (i) => `items.${i}`, propertyIdKey: 'property_id' });
    const results = await batchRates(c.get('ctx'), { currency: body.currency, items }, (i) => itemFieldNames(SNAKE_NAMES, `items.${i}`));
    // Room and rate plan names in ctx.language, as GET /search/availability/{propertyId}.
    servedIn(c);
    return ok(c, results.map(resultToWire));
  });
}
