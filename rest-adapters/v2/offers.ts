import { OpenAPIHono, z } from '@hono/zod-openapi';
import { CURRENCIES, BadRequestError, ForbiddenError, languageOf, TokenExpiredError, UpstreamError } from '../../src/services/kernel/index.js';
import { searchRules } from '../../src/services/search/index.js';
import { v2Availability, v2PriceCheck } from '../../src/services/itineraries/index.js';
import { v2ErrorResponses } from '../envelope.js';
import type { HttpEnv } from '../env.js';
import { acceptLanguageParameter, servedIn, SERVED_IN_HEADERS } from '../language.js';
import { v2ScopedRoute } from '../routing.js';
import { occupancyListParam, propertyIdListParam } from '../params.js';
import { availabilityWire, priceCheckWire } from './links.js';

/**
 * v2 steps 1 and 2 (docs/spec/channel-api.md §4.6): availability with price-check links, and the price check behind
 * them with a book link. As the other v2 routes, success bodies are the objects themselves (step 1
 * an array, as the spec shows); errors are in the v1 envelope. Shapes: docs/decisions.md "v2".
 */

export const LinkWire = z
  .object({
    method: z.enum(['GET', 'POST', 'PUT']),
    href: z.string().openapi({ description: 'Relative; call it as given', example: '/api/channel/v2/bookings?token=eyJ...' }),
    expires: z.iso.datetime().optional().openapi({ description: 'The link (its token) is valid until then; absent: no expiry' }),
  })
  .openapi('Link');

const PriceLineWire = z
  .object({
    type: z.enum(['base_rate', 'tax_and_service_fee']),
    currency: z.string(),
    value: z.number().openapi({ description: 'Minor units of the currency (KRW has none)' }),
  })
  .openapi('PriceLine');

const MoneyWire = z.object({ currency: z.string(), value: z.number() });

export const OccupancyPricingWire = z
  .record(
    z.string(),
    z.object({
      nightly: z.array(z.array(PriceLineWire)).openapi({ description: 'Per night: the base rate and the tax and service fee of one room' }),
      totals: z.object({
        inclusive: z.object({ request_currency: MoneyWire, billable_currency: MoneyWire }),
        exclusive: z.object({ request_currency: MoneyWire, billable_currency: MoneyWire }),
      }),
    }),
  )
  .openapi('OccupancyPricing', {
    description:
      'Keyed by occupancy (<adults> or <adults>-<age>,<age>, without leading zeros); each value is the price of ONE room of that ' +
      'occupancy for the stay. Rooms of the same occupancy share one key.',
  });

export const CancelPenaltyWire = z
  .object({
    start: z.iso.datetime(),
    end: z.iso.datetime(),
    percent: z.number().openapi({ description: 'Share of the total charged when cancelling in this window' }),
    amount: z.number().openapi({ description: 'That share of the total for every room, request currency minor units' }),
    currency: z.string(),
  })
  .openapi('CancelPenalty', { description: 'Cancelling before the first window is free' });

const RateV2 = z
  .object({
    id: z.string().openapi({ description: 'Opaque; take it from here, never build it' }),
    status: z.enum(['available', 'sold_out']),
    available_rooms: z.int(),
    refundable: z.boolean(),
    occupancy_pricing: OccupancyPricingWire,
    bed_groups: z.record(
      z.string(),
      z.object({
        id: z.string(),
        description: z.string(),
        links: z.object({ price_check: LinkWire.optional().openapi({ description: 'Absent when the rate is sold out for this party' }) }),
      }),
    ),
    cancel_penalties: z.array(CancelPenaltyWire),
    amenities: z.record(z.string(), z.object({ id: z.string(), name: z.string() })).openapi({ description: 'The meal plan, if any' }),
    promotions: z.null().openapi({ type: 'null', description: 'No promotions are offered' }),
    deposits: z.array(z.object({})).max(0).openapi({ description: 'Always empty: the channel is billed, nothing is paid at the property in advance' }),
  })
  .openapi('RateV2');

const PropertyAvailabilityV2 = z
  .object({
    property_id: z.string(),
    status: z.enum(['available', 'unavailable']).openapi({ description: 'available: some rate has enough rooms for the whole party' }),
    rooms: z.array(z.object({ id: z.string(), room_name: z.string(), rates: z.array(RateV2) })),
  })
  .openapi('PropertyAvailabilityV2');

const PriceCheckV2 = z
  .object({
    status: z.enum(['matched', 'price_changed', 'sold_out']),
    occupancy_pricing: OccupancyPricingWire.nullable().openapi({ description: 'The latest prices; null when sold out' }),
    refundable: z.boolean().nullable(),
    cancel_penalties: z.array(CancelPenaltyWire).nullable(),
    links: z.object({ book: LinkWire.optional().openapi({ description: 'Absent when sold out; valid 30 minutes' }) }),
  })
  .openapi('PriceCheckV2');

const AvailabilityQuery = z.object({
  checkin: searchRules.checkin.openapi({ example: '2026-12-24' }),
  checkout: searchRules.checkout.openapi({ example: '2026-12-26' }),
  occupancy: occupancyListParam(
    searchRules.occupancyText,
    'Required, repeated once per room: <adults> or <adults>-<age>,<age> (adults 1 to 8, ages 0 to 17)',
  ),
  property_id: propertyIdListParam('Required, repeatable (or comma-separated), at most 100'),
  currency: searchRules.currency.optional().openapi({ enum: [...CURRENCIES], default: 'KRW' }),
  language: z
    .string()
    .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/, 'a language tag such as ko-KR')
    .optional()
    .openapi({
      default: 'ko-KR',
      description:
        'The language of room names, bed groups and amenities: ko-KR, en-US, ja-JP or zh-CN (a bare ja is ja-JP). Without it the ' +
        'request\'s Accept-Language decides; an unsupported tag is served in ko-KR.',
    }),
});

const availabilityRoute = v2ScopedRoute('search.availability', {
  method: 'get',
  path: '/properties/availability',
  operationId: 'v2SearchAvailability',
  tags: ['Booking flow'],
  summary: 'Step 1: rates of several properties, each bookable one with price-check links',
  description: 'Properties the provider does not know are left out. Price-check links expire 30 minutes after this call.',
  parameters: [acceptLanguageParameter],
  request: { query: AvailabilityQuery },
  responses: {
    200: {
      description: 'One object per property',
      headers: SERVED_IN_HEADERS,
      content: { 'application/json': { schema: z.array(PropertyAvailabilityV2) } },
    },
    ...v2ErrorResponses(BadRequestError, UpstreamError),
  },
});

const pathPart = (name: string) =>
  z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name, in: 'path' }, description: 'As in the price_check href; a path that differs from the token is 403' });

const priceCheckRoute = v2ScopedRoute('search.priceCheck', {
  method: 'get',
  path: '/properties/{propertyId}/rooms/{roomId}/rates/{rateId}',
  operationId: 'v2CheckPrice',
  tags: ['Booking flow'],
  summary: 'Step 2: re-verify the price and get the book link',
  description:
    'Call links.price_check.href of step 1 as given. matched: the price holds; price_changed: occupancy_pricing holds the new ' +
    'prices, which the book link carries; sold_out: no book link, restart at step 1. 400 INVALID_TOKEN (malformed, altered, ' +
    'another kind or another channel\'s), 410 TOKEN_EXPIRED, 403 FORBIDDEN when the path does not match the token.',
  request: {
    params: z.object({ propertyId: pathPart('propertyId'), roomId: pathPart('roomId'), rateId: pathPart('rateId') }),
    query: z.object({ token: z.string().min(1).max(4096).openapi({ description: 'From the price_check link' }) }),
  },
  responses: {
    200: { description: 'The verified offer', content: { 'application/json': { schema: PriceCheckV2 } } },
    ...v2ErrorResponses(
      [BadRequestError, 'INVALID_REQUEST: no token (details.fields), or INVALID_TOKEN: restart at step 1'],
      [ForbiddenError, 'INSUFFICIENT_SCOPE (details.required_scope), or FORBIDDEN: the path does not match the token; call the href as given; IP_NOT_ALLOWED or HTTPS_REQUIRED'],
      TokenExpiredError,
      UpstreamError,
    ),
  },
});

/** Register before the content routes: /properties/availability is not a property id. */
export function offerRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(availabilityRoute, async (c) => {
    const q = c.req.valid('query');
    // The parameter when given, else the request's Accept-Language (both negotiated; unsupported: ko-KR).
    const language = q.language ? languageOf(q.language) : c.get('ctx').language;
    const answer = await v2Availability(c.get('ctx'), {
      checkin: q.checkin,
      checkout: q.checkout,
      occupancies: q.occupancy,
      propertyIds: q.property_id,
      currency: q.currency ?? 'KRW',
      language,
    });
    servedIn(c, language);
    return c.json(availabilityWire(answer), 200);
  });

  app.openapi(priceCheckRoute, async (c) => {
    const p = c.req.valid('param');
    const result = await v2PriceCheck(c.get('ctx'), {
      propertyId: p.propertyId,
      roomId: p.roomId,
      rateId: p.rateId,
      token: c.req.valid('query').token,
    });
    return c.json(priceCheckWire(result), 200);
  });
}
