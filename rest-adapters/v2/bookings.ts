import { OpenAPIHono, z } from '@hono/zod-openapi';
import { bookingRules, InsufficientBalanceError } from '../../src/services/bookings/index.js';
import { ValidationError, BadRequestError, ConflictError, NotFoundError, TokenExpiredError, UpstreamError } from '../../src/services/kernel/index.js';
import { v2Cancel, v2CreateBooking, v2Retrieve } from '../../src/services/itineraries/index.js';
import { v2ErrorResponses } from '../envelope.js';
import type { HttpEnv } from '../env.js';
import { v2ScopedRoute } from '../routing.js';
import { idempotency, idempotencyHeader } from '../idempotency.js';
import { itineraryWire, retrievedWire } from './links.js';
import { CancelPenaltyWire, LinkWire } from './offers.js';

/** v2 steps 3 and 4 (docs/spec/channel-api.md §4.6): book from book links, retrieve and cancel through links. */

const TokenQuery = z.object({ token: z.string().min(1).max(4096).openapi({ description: 'From the link; call the href as given' }) });

const CancelRefundWire = z
  .object({ refundable: z.boolean(), refund_amount: z.number(), penalty_amount: z.number(), currency: z.string() })
  .openapi('CancelRefund', { description: 'Amounts in the billable currency (KRW), what is given back and what is kept' });

const CreateBody = z
  .object({
    rooms: z
      .array(z.object({ given_name: bookingRules.personName, family_name: bookingRules.personName }))
      .min(1)
      .max(8)
      .openapi({ description: 'One guest per room, in the order of the book tokens and their occupancies' }),
    affiliate_reference_id: bookingRules.channelBookingNumber.optional().openapi({ description: "The partner's booking number" }),
    book_tokens: z.array(z.string().min(1).max(4096)).min(1).max(8).optional().openapi({
      description: 'Several book tokens (multi-room); instead of the query token',
    }),
  })
  .openapi('V2CreateBooking');

const MoneyWire = z.object({ currency: z.string(), value: z.number() });

const RetrieveWire = z
  .object({
    itinerary_id: z.string(),
    status: z.string(),
    property_id: z.string(),
    checkin: z.iso.date(),
    checkout: z.iso.date(),
    request_currency: z.string(),
    billable_currency: z.string(),
    affiliate_reference_id: z.string().nullable(),
    rooms: z.array(
      z.object({
        room_id: z.string(),
        rate_id: z.string(),
        bed_group_id: z.string().nullable(),
        bed_group_description: z.string().nullable(),
        status: z.string(),
        refundable: z.boolean(),
        guest: z.object({ given_name: z.string().nullable(), family_name: z.string().nullable() }),
        occupancy_pricing: z.record(z.string(), z.object({ totals: z.object({ inclusive: z.object({ request_currency: MoneyWire, billable_currency: MoneyWire }) }) })),
        cancel_penalties: z.array(CancelPenaltyWire),
        cancel_refund: CancelRefundWire,
      }),
    ),
    links: z.object({ cancel: LinkWire.optional().openapi({ description: 'Absent once nothing can be cancelled' }) }),
  })
  .openapi('V2Itinerary');

const createRoute = v2ScopedRoute(
  'itinerary.book',
  {
    method: 'post',
    path: '/bookings',
    operationId: 'v2CreateBooking',
    tags: ['Booking flow'],
    summary: 'Step 3: book (one room per occupancy of each book token, all or nothing)',
    description:
      'The token comes from the price check\'s links.book (query `token`), or several in `book_tokens`. One booking per room, ' +
      'each charged its share; if the provider refuses or fails one room, nothing is booked or charged. 409 TOKEN_ALREADY_USED, ' +
      '400 INVALID_TOKEN, 410 TOKEN_EXPIRED; 402 INSUFFICIENT_BALANCE; 409 SOLD_OUT or PRICE_CHANGED; 502.',
    request: {
      query: z.object({ token: TokenQuery.shape.token.optional() }),
      headers: idempotencyHeader,
      body: { required: true, content: { 'application/json': { schema: CreateBody } } },
    },
    responses: {
      201: {
        description: 'Booked',
        content: {
          'application/json': {
            schema: z.object({ itinerary_id: z.string(), links: z.object({ retrieve: LinkWire, cancel: LinkWire.optional() }) }),
          },
        },
      },
      ...v2ErrorResponses(
        [BadRequestError, 'INVALID_REQUEST (details.fields: a bad body, no token, or both the query token and book_tokens; a bad Idempotency-Key), or INVALID_TOKEN'],
        InsufficientBalanceError,
        [ConflictError, 'TOKEN_ALREADY_USED, SOLD_OUT or PRICE_CHANGED (nothing booked), IDEMPOTENCY_KEY_REUSED, or IDEMPOTENCY_KEY_IN_PROGRESS (with Retry-After)'],
        [TokenExpiredError, 'TOKEN_EXPIRED: restart at step 1'],
        [UpstreamError, 'UPSTREAM_ERROR: nothing is booked or charged'],
      ),
    },
  },
  [idempotency()],
);

const retrieveRoute = v2ScopedRoute('itinerary.retrieve', {
  method: 'get',
  path: '/bookings/retrieve',
  operationId: 'v2RetrieveBooking',
  tags: ['Booking flow'],
  summary: 'Step 4a: retrieve (the link never expires and keeps working after cancelling)',
  request: { query: TokenQuery },
  responses: {
    200: { description: 'The itinerary', content: { 'application/json': { schema: RetrieveWire } } },
    ...v2ErrorResponses(
      [BadRequestError, 'INVALID_REQUEST (no token), or INVALID_TOKEN: not a retrieve link of this channel'],
      [NotFoundError, 'NOT_FOUND: the itinerary is gone'],
    ),
  },
});

const cancelRoute = v2ScopedRoute(
  'itinerary.cancel',
  {
    method: 'put',
    path: '/bookings/cancel',
    operationId: 'v2CancelBooking',
    tags: ['Booking flow'],
    summary: 'Step 4b: cancel every room (the link is consumed by its success)',
    description:
      '409 TOKEN_ALREADY_USED once used; 409 BOOKING_NOT_CANCELLABLE after check-in; 502 (the provider failed, or in production ' +
      'does not know a room and so does not confirm its cancellation): rooms not cancelled stay as they were, and the same link cancels them.',
    request: { query: TokenQuery, headers: idempotencyHeader },
    responses: {
      200: {
        description: 'Cancelled',
        content: { 'application/json': { schema: z.object({ itinerary_id: z.string(), status: z.literal('cancelled'), cancel_refund: CancelRefundWire }) } },
      },
      ...v2ErrorResponses(
        [BadRequestError, 'INVALID_REQUEST (no token, a bad Idempotency-Key), or INVALID_TOKEN: not a cancel link of this channel'],
        [NotFoundError, 'NOT_FOUND: the itinerary is gone'],
        [ConflictError, 'TOKEN_ALREADY_USED (every room is cancelled), BOOKING_NOT_CANCELLABLE (details.status), IDEMPOTENCY_KEY_REUSED or IDEMPOTENCY_KEY_IN_PROGRESS'],
        [TokenExpiredError, 'TOKEN_EXPIRED: the cancel link lapsed at check-in; retrieve the booking for its state'],
        [UpstreamError, 'UPSTREAM_ERROR: rooms not cancelled stay as they were; the same link cancels them'],
      ),
    },
  },
  [idempotency()],
);

export function v2BookingRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(createRoute, async (c) => {
    const { token } = c.req.valid('query');
    const body = c.req.valid('json');
    const tokens = body.book_tokens ?? (token ? [token] : []);
    if (!tokens.length) throw new ValidationError([{ field: 'token', reason: 'give the book link token, or book_tokens' }]);
    if (token && body.book_tokens) throw new ValidationError([{ field: 'token', reason: 'give either the query token or book_tokens, not both' }]);
    const itinerary = await v2CreateBooking(c.get('ctx'), {
      tokens,
      rooms: body.rooms.map((r) => ({ givenName: r.given_name, familyName: r.family_name })),
      affiliateReferenceId: body.affiliate_reference_id,
    });
    return c.json(itineraryWire(itinerary), 201);
  });

  app.openapi(retrieveRoute, async (c) => c.json(retrievedWire(await v2Retrieve(c.get('ctx'), c.req.valid('query').token)), 200));

  app.openapi(cancelRoute, async (c) => c.json(await v2Cancel(c.get('ctx'), c.req.valid('query').token), 200));
}
