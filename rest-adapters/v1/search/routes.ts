import { z } from '@hono/zod-openapi';
import { CURRENCIES, NotFoundError, TokenExpiredError, UpstreamError, ValidationError } from '../../../src/services/kernel/index.js';
import { searchRules } from '../../../src/services/search/index.js';
import { errorResponses, Meta } from '../../envelope.js';
import { acceptLanguageParameter, SERVED_IN_HEADERS } from '../../language.js';
import { scopedRoute } from '../../routing.js';
import { idParam, intParam, listParam } from '../../params.js';
import { MultiQuery, Pagination, PriceCheckWire, PropertyAvailabilityWire, SearchContextWire, SearchItemWire, stayQuery } from './wire.js';

/** The OpenAPI definitions of v1 search (docs/spec/channel-api.md §4.4); wire shapes in wire.ts. */

export const multiRoute = scopedRoute('search.availability', {
  method: 'get',
  path: '/search/availability',
  operationId: 'searchAvailability',
  tags: ['Search'],
  summary: 'Availability and lowest prices of many properties',
  parameters: [acceptLanguageParameter],
  request: { query: MultiQuery },
  responses: {
    200: {
      description: 'Matching properties',
      headers: SERVED_IN_HEADERS,
      content: {
        'application/json': {
          schema: z.object({ data: z.array(SearchItemWire), search_context: SearchContextWire, pagination: Pagination, meta: Meta }),
        },
      },
    },
    ...errorResponses(ValidationError, UpstreamError),
  },
});

export const singleRoute = scopedRoute('search.propertyAvailability', {
  method: 'get',
  path: '/search/availability/{propertyId}',
  operationId: 'getPropertyAvailability',
  tags: ['Search'],
  summary: 'Rates of one property, each with a price_check_token',
  parameters: [acceptLanguageParameter],
  request: {
    params: z.object({ propertyId: idParam.openapi({ param: { name: 'propertyId', in: 'path' }, type: 'integer' }) }),
    query: z.object({
      ...stayQuery,
      adults: intParam(searchRules.adults),
      children_ages: listParam(intParam(z.int().min(0).max(17)), { commas: true })
        .pipe(searchRules.childrenAges)
        .optional()
        .openapi({ description: 'Comma-separated ages (0 to 17), one per child; e.g. 5,9', type: 'string', pattern: '^\\d{1,2}(,\\d{1,2})*$' }),
      roomtype_id: searchRules.roomtypeId.optional().openapi({ description: 'Only this room type (unknown: 404)' }),
      rateplan_id: searchRules.rateplanId.optional().openapi({ description: 'Only this rate plan; with roomtype_id and without it, the first plan' }),
    }),
  },
  responses: {
    200: {
      description: 'Rates by room type',
      headers: SERVED_IN_HEADERS,
      content: { 'application/json': { schema: z.object({ data: PropertyAvailabilityWire, meta: Meta }) } },
    },
    ...errorResponses(ValidationError, NotFoundError, UpstreamError),
  },
});

export const ratesRoute = scopedRoute('search.rates', {
  method: 'get',
  path: '/search/rates',
  operationId: 'getRates',
  tags: ['Search'],
  summary: 'Detailed rates of one property (nightly lines), the second search step',
  description: 'Without dates: tomorrow in the property\'s time zone, one night. Without adults: 2.',
  parameters: [acceptLanguageParameter],
  request: {
    query: z.object({
      property_id: idParam.openapi({ type: 'string', pattern: '^\\d{1,10}$', description: 'The property id (digits; a string, as the specification gives it)', example: '1' }),
      checkin: searchRules.checkin.optional(),
      checkout: searchRules.checkout.optional(),
      adults: intParam(searchRules.adults).optional(),
      currency: searchRules.currency.optional().openapi({ enum: [...CURRENCIES], default: 'KRW' }),
    }),
  },
  responses: {
    200: {
      description: 'Rates by room type',
      headers: SERVED_IN_HEADERS,
      content: { 'application/json': { schema: z.object({ data: PropertyAvailabilityWire, meta: Meta }) } },
    },
    ...errorResponses(ValidationError, NotFoundError, UpstreamError),
  },
});

export const priceCheckRoute = scopedRoute('search.priceCheck', {
  method: 'get',
  path: '/search/price-check',
  operationId: 'checkPrice',
  tags: ['Search'],
  summary: 'Re-verify a rate with the provider and get a book_token',
  description:
    'matched: the price holds; price_changed: pricing holds the new price, which the book_token carries; ' +
    'sold_out: no book_token. 400 INVALID_TOKEN for a malformed, altered or foreign token; 410 TOKEN_EXPIRED.',
  request: { query: z.object({ token: z.string().min(1).max(4096).openapi({ description: 'A price_check_token' }) }) },
  responses: {
    200: { description: 'The verified offer', content: { 'application/json': { schema: z.object({ data: PriceCheckWire, meta: Meta }) } } },
    ...errorResponses(
      [ValidationError, 'VALIDATION_ERROR: the token is missing or too long (details.fields); INVALID_TOKEN: a malformed, altered or foreign token'],
      TokenExpiredError,
      UpstreamError,
    ),
  },
});
