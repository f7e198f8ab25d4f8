/**
 * The bundled inventory-provider simulator: an HTTP server speaking exactly the wire protocol of
 * src/upstream/protocol.ts over the seeded dataset, with bookings that take stock, prices that can
 * drift (volatility) and sandbox outcomes forced by the `X-Test-Scenario` header.
 *
 * Besides the protocol it answers operator and test control routes, which a real provider does
 * not have (they skip scenarios and are not counted in `stats`):
 *
 *   POST /_control/bookings/{reference}/status  {status}   sets a booking's status as the property
 *        reports it (confirmed, pending, failed, checked_in, checked_out, no_show); stock follows
 *   POST /_control/reset                                   clears bookings, stock, price moves, stats
 *   GET  /_control/stats                                   the request counters
 *
 * POST /availability/batch answers an item it cannot take (a bad stay, no property ids) with an
 * error in that item's slot and prices the others; only a malformed envelope is a 400.
 */

import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { matchedRoutes } from 'hono/route';
import { z } from 'zod';
import {
  AVAILABILITY_BATCH_LIMIT,
  type AvailabilityBatchResponse,
  type AvailabilityRequest,
  type AvailabilityResponse,
  type BookRequest,
  type ChangeQuoteRequest,
  type ChangeQuoteResponse,
  type ModifyRequest,
  type PriceCheckRequest,
  type PriceCheckResponse,
  type PropertyAvailability,
  type PropertyBatch,
  type PropertyPage,
  type RoomOccupancy,
  SCENARIOS,
  type Scenario,
  type UpstreamBooking,
  type UpstreamProperty,
  type UpstreamRate,
} from '../upstream/protocol.js';
import { Dataset, type Night, type Property } from './dataset.js';
import { inclusiveTotal, type QuoteView, type RateRef, roomFits, SimulatorState, stayOf } from './state.js';

export interface SimulatorOptions {
  /** Dataset seed; the same seed always yields the same market. Default 42. */
  seed?: number;
  /** Number of properties (ids 1..size, at most 100,000). Default 500. */
  size?: number;
  /** Probability (0..1) that a price check first moves the rate's price. Default 0. */
  volatility?: number;
  /** Source of `created_at` and `cancelled_at`. Default: the system clock. */
  clock?: () => Date;
  /** Told about unexpected errors (answered with 500 internal_error). Default: console.error. */
  onError?: (error: unknown) => void;
  /** Serve the /_control routes. Default true. */
  control?: boolean;
}

export interface SimulatorStats {
  /** Protocol requests received (control routes excluded). */
  requests: number;
  /** Requests by matched route, e.g. `GET /properties/:id`; unmatched paths are not listed. */
  byRoute: Record<string, number>;
  reset(): void;
}

export interface Simulator {
  fetch(req: Request): Promise<Response>;
  readonly stats: SimulatorStats;
  readonly dataset: Dataset;
  /** Same as POST /_control/reset. */
  reset(): void;
  listen(port?: number, host?: string): Promise<{ url: string; port: number }>;
  /** Closes the server, dropping keep-alive sockets and requests held by `upstream_timeout`. */
  close(): Promise<void>;
}

export interface RunningSimulator extends Simulator {
  url: string;
  port: number;
}

// ---------------------------------------------------------------------------------------------
// Errors

class SimulatorError extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 413 | 500,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const invalid = (message: string) => new SimulatorError(400, 'invalid_request', message);
const notFound = (message: string) => new SimulatorError(404, 'not_found', message);

function errorResponse(c: Context, error: SimulatorError): Response {
  return c.json({ error: { code: error.code, message: error.message } }, error.status);
}

// ---------------------------------------------------------------------------------------------
// Request validation (strict: an unknown key is a caller bug, e.g. camelCase, not something to ignore)

const MAX_NIGHTS = 30;
const MAX_IDS = 1000;

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD')
  .refine(isCalendarDate, 'not a calendar date');

/** Rejects dates such as 2027-02-30, which Date would roll over into March. */
function isCalendarDate(d: string): boolean {
  const t = Date.parse(`${d}T00:00:00Z`);
  return !Number.isNaN(t) && new Date(t).toISOString().startsWith(d);
}

const occupancy = z
  .array(
    z.strictObject({
      adults: z.number().int().min(1).max(8),
      children_ages: z.array(z.number().int().min(0).max(17)).max(8),
    }),
  )
  .min(1)
  .max(8);

const propertyId = z.number().int().positive();

const stayFields = { checkin: day, checkout: day, occupancy };

/** Checkout after checkin, at most MAX_NIGHTS nights; skipped when a date is already invalid. */
function checkStay(stay: { checkin: string; checkout: string }, ctx: z.RefinementCtx): void {
  if (!isCalendarDate(stay.checkin) || !isCalendarDate(stay.checkout)) return;
  const nights = (Date.parse(stay.checkout) - Date.parse(stay.checkin)) / 86_400_000;
  if (nights < 1) ctx.addIssue({ code: 'custom', path: ['checkout'], message: 'must be after checkin' });
  else if (nights > MAX_NIGHTS) ctx.addIssue({ code: 'custom', path: ['checkout'], message: `a stay is at most ${MAX_NIGHTS} nights` });
}

const availabilitySchema = z
  .strictObject({
    ...stayFields,
    property_ids: z.array(propertyId).max(MAX_IDS).optional(),
    city: z.string().min(1).max(100).optional(),
    star_rating_min: z.number().min(0).max(5).optional(),
    detail: z.enum(['lowest', 'rates']),
  })
  .superRefine(checkStay) satisfies z.ZodType<AvailabilityRequest>;

/** A batch item always names its properties, so a batch never scans the catalog. */
const batchItemSchema = z
  .strictObject({
    ...stayFields,
    property_ids: z.array(propertyId).min(1).max(MAX_IDS),
    city: z.string().min(1).max(100).optional(),
    star_rating_min: z.number().min(0).max(5).optional(),
    detail: z.enum(['lowest', 'rates']),
  })
  .superRefine(checkStay) satisfies z.ZodType<AvailabilityRequest>;

/** The envelope only: each item is checked on its own, and a bad one is answered in its slot. */
const availabilityBatchSchema = z.strictObject({ items: z.array(z.unknown()).min(1).max(AVAILABILITY_BATCH_LIMIT) });

const rateFields = {
  property_id: propertyId,
  roomtype_id: z.string().min(1).max(100),
  rateplan_id: z.string().min(1).max(100),
  ...stayFields,
};

const priceCheckSchema = z
  .strictObject({ ...rateFields, expected_total: z.number().int().nonnegative() })
  .superRefine(checkStay) satisfies z.ZodType<PriceCheckRequest>;

const bookSchema = z
  .strictObject({
    reference: z.string().min(1).max(200),
    ...rateFields,
    total: z.number().int().nonnegative(),
    guest: z.strictObject({
      first_name: z.string().max(200).nullable(),
      last_name: z.string().max(200).nullable(),
      name: z.string().min(1).max(400),
    }),
  })
  .superRefine(checkStay) satisfies z.ZodType<BookRequest>;

const batchSchema = z.strictObject({ ids: z.array(propertyId).min(1).max(MAX_IDS) });

const changeQuoteSchema = z.strictObject({ checkin: day, checkout: day }).superRefine(checkStay) satisfies z.ZodType<ChangeQuoteRequest>;

const modifySchema = z
  .strictObject({ modification_id: z.string().min(1).max(200), checkin: day, checkout: day, total: z.number().int().nonnegative() })
  .superRefine(checkStay) satisfies z.ZodType<ModifyRequest>;

const listQuerySchema = z.object({
  cursor: z.string().max(100).optional(),
  limit: z
    .string()
    .regex(/^\d+$/, 'expected an integer')
    .transform(Number)
    .pipe(z.number().int().min(1).max(1000))
    .default(100),
  updated_since: z.iso.datetime({ offset: true }).optional(),
  include: z.literal('rooms').optional(),
});

const controlStatusSchema = z.strictObject({
  status: z.enum(['confirmed', 'pending', 'failed', 'checked_in', 'checked_out', 'no_show']),
});

function parse<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw invalid(result.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; '));
}

async function body<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  let json: unknown;
  try {
    json = JSON.parse(await c.req.text());
  } catch {
    throw invalid('the body must be JSON');
  }
  return parse(schema, json);
}

function pathId(raw: string): number {
  if (!/^[1-9]\d{0,8}$/.test(raw)) throw invalid('a property id is a positive integer');
  return Number(raw);
}

/** Cursors are the last id of the page, base64url-encoded so callers treat them as opaque. */
const encodeCursor = (id: number) => Buffer.from(String(id)).toString('base64url');

function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString();
  if (!/^\d{1,9}$/.test(text)) throw invalid('cursor: not a cursor from this server');
  return Number(text);
}

// ---------------------------------------------------------------------------------------------
// Wire shapes

function wireProperty(p: Property, withRooms: boolean): UpstreamProperty {
  const property: UpstreamProperty = {
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
  if (withRooms) {
    property.room_types = p.roomTypes.map((r) => ({
      id: r.id,
      property_id: r.propertyId,
      name: r.name,
      max_occupancy: r.maxOccupancy,
      bed_groups: r.bedGroups.map((b) => ({ ...b })),
      rate_plans: r.ratePlans.map((rp) => ({
        id: rp.id,
        roomtype_id: rp.roomtypeId,
        name: rp.name,
        meal_plan: rp.mealPlan,
        refundable: rp.refundable,
        cancellation_policy: rp.cancellationPolicy,
      })),
    }));
  }
  return property;
}

// ---------------------------------------------------------------------------------------------
// Scenarios and stats

type Env = { Variables: { scenario: Scenario | undefined } };

function scenarioOf(c: Context): Scenario | undefined {
  const value = c.req.header('x-test-scenario')?.trim().toLowerCase();
  return SCENARIOS.find((s) => s === value);
}

/**
 * How a forced scenario bends quotes: shown sold out, or 5 % dearer (never stored). Under
 * price_changed the raised total is the current price, so a caller who accepted it gets `matched`
 * on a further check and can book at it.
 */
function quoteView(scenario: Scenario | undefined): QuoteView {
  if (scenario === 'sold_out') return { soldOut: true };
  if (scenario === 'price_changed') return { raisePercent: 5 };
  return {};
}

/** The route a request matched, as `METHOD /path/:param`; middleware (method ALL) is skipped. */
function routeKey(c: Context): string | undefined {
  const route = matchedRoutes(c).findLast((r) => r.method !== 'ALL');
  return route && `${route.method} ${route.path}`;
}

function createStats(): SimulatorStats {
  return {
    requests: 0,
    byRoute: {},
    reset() {
      this.requests = 0;
      this.byRoute = {};
    },
  };
}

/**
 * Requests held by the `upstream_timeout` scenario. Each waits on its client's abort signal or on
 * `releaseAll` (at close), never on a timer, so a held request cannot keep the process alive.
 */
class Holds {
  private readonly waiting = new Set<() => void>();

  hold(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const release = () => {
        this.waiting.delete(release);
        signal.removeEventListener('abort', release);
        resolve();
      };
      if (signal.aborted) return resolve();
      this.waiting.add(release);
      signal.addEventListener('abort', release, { once: true });
    });
  }

  releaseAll(): void {
    for (const release of [...this.waiting]) release();
  }
}

// ---------------------------------------------------------------------------------------------
// The simulator

export function createSimulator(options: SimulatorOptions = {}): Simulator {
  const dataset = new Dataset(options.seed ?? 42, options.size ?? 500);
  const state = new SimulatorState(dataset, options.volatility ?? 0);
  const clock = options.clock ?? (() => new Date());
  const onError = options.onError ?? ((error: unknown) => console.error('simulator: unexpected error', error));
  const stats = createStats();
  const holds = new Holds();
  const app = new Hono<Env>();

  app.onError((error, c) => {
    if (error instanceof SimulatorError) return errorResponse(c, error);
    onError(error);
    return errorResponse(c, new SimulatorError(500, 'internal_error', 'the simulator failed'));
  });
  app.notFound((c) => errorResponse(c, notFound(`no route ${c.req.method} ${c.req.path}`)));

  app.use(
    '*',
    bodyLimit({
      maxSize: 1024 * 1024,
      onError: (c) => errorResponse(c, new SimulatorError(413, 'payload_too_large', 'the body is over 1 MiB')),
    }),
  );

  // Counting and forced outcomes for the protocol routes; control routes are left alone so a test
  // can always steer the simulator.
  app.use('*', async (c, next) => {
    if (c.req.path.startsWith('/_control/')) return next();
    stats.requests++;
    const route = routeKey(c);
    if (route) stats.byRoute[route] = (stats.byRoute[route] ?? 0) + 1;
    const scenario = scenarioOf(c);
    if (scenario === 'upstream_error') {
      return errorResponse(c, new SimulatorError(500, 'internal_error', 'forced by X-Test-Scenario: upstream_error'));
    }
    if (scenario === 'upstream_timeout') {
      await holds.hold(c.req.raw.signal);
      // Only reached when the client has gone or the simulator is closing: nobody reads this.
      return errorResponse(c, new SimulatorError(500, 'internal_error', 'held by X-Test-Scenario: upstream_timeout'));
    }
    c.set('scenario', scenario);
    return next();
  });

  app.get('/health', (c) => c.json({ status: 'ok' }));

  app.get('/properties', (c) => {
    const query = parse(listQuerySchema, c.req.query());
    return c.json(listProperties(dataset, query) satisfies PropertyPage);
  });

  app.get('/properties/:id', (c) => {
    const id = pathId(c.req.param('id'));
    const property = dataset.property(id);
    if (!property) throw notFound(`no property ${id}`);
    return c.json(wireProperty(property, true) satisfies UpstreamProperty);
  });

  app.post('/properties/batch', async (c) => {
    const { ids } = await body(c, batchSchema);
    const answer: PropertyBatch = { properties: [], missing: [] };
    for (const id of new Set(ids)) {
      const property = dataset.property(id);
      if (property) answer.properties.push(wireProperty(property, true));
      else answer.missing.push(id);
    }
    return c.json(answer);
  });

  app.post('/availability', async (c) => {
    const request = await body(c, availabilitySchema);
    return c.json(availability(state, request, quoteView(c.get('scenario'))) satisfies AvailabilityResponse);
  });

  app.post('/availability/batch', async (c) => {
    const { items } = await body(c, availabilityBatchSchema);
    const view = quoteView(c.get('scenario'));
    const parsed = items.map((item) => batchItemSchema.safeParse(item));
    const ids = parsed.reduce((n, p) => n + (p.success ? p.data.property_ids.length : 0), 0);
    if (ids > MAX_IDS) throw invalid(`items: at most ${MAX_IDS} property ids in one batch (${ids} given)`);
    const answer: AvailabilityBatchResponse = {
      items: parsed.map((p) =>
        p.success
          ? availability(state, p.data, view)
          : { error: { code: 'invalid_request', message: p.error.issues.map((i) => `${i.path.join('.') || '(item)'}: ${i.message}`).join('; ') } },
      ),
    };
    return c.json(answer);
  });

  app.post('/price-check', async (c) => {
    const request = await body(c, priceCheckSchema);
    const scenario = c.get('scenario');
    const ref = locateRate(state, request);
    const nights = stayOf(request.checkin, request.checkout);
    // A forced outcome must not be muddied by a random move, so volatility sits those out.
    if (!scenario) state.maybeMovePrice(ref.room, ref.plan, nights);
    const rate = state.quote(ref.room, ref.plan, nights, request.occupancy.length, quoteView(scenario));
    return c.json(priceCheck(rate, request) satisfies PriceCheckResponse);
  });

  app.post('/bookings', async (c) => {
    const request = await body(c, bookSchema);
    // A repeated reference gets the first booking whatever else has changed since (stock, prices,
    // a forced scenario): a caller retrying after a lost answer must not book twice.
    const existing = state.booking(request.reference);
    if (existing) return c.json(existing satisfies UpstreamBooking, 200);
    const scenario = c.get('scenario');
    const ref = locateRate(state, request);
    const nights = stayOf(request.checkin, request.checkout);
    const rate = state.quote(ref.room, ref.plan, nights, request.occupancy.length, quoteView(scenario));
    if (rate.available_rooms < request.occupancy.length) {
      throw new SimulatorError(409, 'sold_out', `only ${rate.available_rooms} room(s) of ${ref.room.id} left for the stay`);
    }
    if (inclusiveTotal(rate) !== request.total) {
      throw new SimulatorError(409, 'price_mismatch', `the current total is ${inclusiveTotal(rate)} KRW, not ${request.total}`);
    }
    const booking = state.addBooking({
      reference: request.reference,
      confirmation_number: state.confirmationNumber(request.reference),
      status: scenario === 'pending' ? 'pending' : 'confirmed',
      property_id: request.property_id,
      roomtype_id: request.roomtype_id,
      rateplan_id: request.rateplan_id,
      checkin: request.checkin,
      checkout: request.checkout,
      rooms: request.occupancy.length,
      total: request.total,
      created_at: clock().toISOString(),
      cancelled_at: null,
    });
    return c.json(booking satisfies UpstreamBooking, 201);
  });

  app.get('/bookings/:reference', (c) => {
    const booking = state.booking(c.req.param('reference'));
    if (!booking) throw notFound(`no booking ${c.req.param('reference')}`);
    return c.json(booking satisfies UpstreamBooking);
  });

  app.post('/bookings/:reference/cancel', (c) => {
    const reference = c.req.param('reference');
    const booking = state.booking(reference);
    if (!booking) throw notFound(`no booking ${reference}`);
    if (booking.status === 'checked_in' || booking.status === 'checked_out' || booking.status === 'no_show') {
      throw new SimulatorError(409, 'not_cancellable', `a booking that is ${booking.status} cannot be cancelled`);
    }
    // Cancelling twice answers the same cancelled booking; setStatus releases the rooms once.
    return c.json(state.setStatus(reference, 'cancelled', clock())! satisfies UpstreamBooking);
  });

  // Date changes: a quote for new dates, the change (idempotent on its id) and its abort.
  app.post('/bookings/:reference/change-quote', async (c) => {
    const reference = c.req.param('reference');
    const request = await body(c, changeQuoteSchema);
    const rate = state.changeQuote(reference, request, quoteView(c.get('scenario')));
    if (!rate) throw notFound(`no booking ${reference}`);
    if (rate === 'not_modifiable') throw new SimulatorError(409, 'not_modifiable', `booking ${reference} can no longer change dates`);
    const answer: ChangeQuoteResponse =
      rate.available_rooms < state.booking(reference)!.rooms ? { status: 'sold_out', rate: null } : { status: 'available', rate };
    return c.json(answer);
  });

  app.post('/bookings/:reference/modify', async (c) => {
    const reference = c.req.param('reference');
    const request = await body(c, modifySchema);
    const outcome = state.modify(
      reference,
      { id: request.modification_id, checkin: request.checkin, checkout: request.checkout, total: request.total },
      quoteView(c.get('scenario')),
    );
    if (outcome.ok) return c.json(outcome.booking satisfies UpstreamBooking);
    if (outcome.reason === 'not_found') throw notFound(outcome.detail);
    const code = outcome.reason === 'aborted' ? 'modification_aborted' : outcome.reason;
    throw new SimulatorError(409, code, outcome.detail);
  });

  app.post('/bookings/:reference/modifications/:id/abort', (c) => {
    const reference = c.req.param('reference');
    const booking = state.abortModification(reference, c.req.param('id'));
    if (!booking) throw notFound(`no booking ${reference}`);
    return c.json(booking satisfies UpstreamBooking);
  });

  const reset = () => {
    state.reset();
    stats.reset();
  };

  // The control routes change state no provider lets a client touch; a service running the
  // simulator in-process in production leaves them out.
  if (options.control ?? true) {
    app.post('/_control/bookings/:reference/status', async (c) => {
      const reference = c.req.param('reference');
      const { status } = await body(c, controlStatusSchema);
      const booking = state.setStatus(reference, status, clock());
      if (!booking) throw notFound(`no booking ${reference}`);
      return c.json(booking);
    });

    app.post('/_control/reset', (c) => {
      reset();
      return c.json({ status: 'ok' });
    });

    app.get('/_control/stats', (c) => c.json({ requests: stats.requests, by_route: stats.byRoute }));
  }

  let server: Server | undefined;

  return {
    fetch: async (req) => app.fetch(req),
    stats,
    dataset,
    reset,
    listen(port = 0, host = '127.0.0.1') {
      if (server) return Promise.reject(new Error('the simulator is already listening'));
      return new Promise((resolve, reject) => {
        const http = serve({ fetch: app.fetch, port, hostname: host }, (info) => {
          http.off('error', reject);
          resolve({ url: `http://${urlHost(host)}:${info.port}`, port: info.port });
        }) as Server;
        http.once('error', reject);
        server = http;
      });
    },
    async close() {
      const http = server;
      server = undefined;
      if (http) {
        const closed = new Promise<void>((resolve) => http.close(() => resolve()));
        // Destroying the sockets aborts held requests' signals and ends keep-alive connections,
        // so close() does not wait for clients to hang up.
        http.closeAllConnections();
        holds.releaseAll();
        await closed;
      } else {
        holds.releaseAll();
      }
    },
  };
}

/** Creates a simulator and listens (port 0: any free port); `url` is where to reach it. */
export async function startSimulator(options: SimulatorOptions & { port?: number; host?: string } = {}): Promise<RunningSimulator> {
  const { port, host, ...rest } = options;
  const simulator = createSimulator(rest);
  const address = await simulator.listen(port, host);
  return Object.assign(simulator, address);
}

/** A host to put in a URL: wildcard addresses are reached over loopback, IPv6 goes in brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

// ---------------------------------------------------------------------------------------------
// Route logic

function listProperties(dataset: Dataset, query: z.infer<typeof listQuerySchema>): PropertyPage {
  const since = query.updated_since ? Date.parse(query.updated_since) : undefined;
  const matches = (p: Property) => since === undefined || p.updatedAt.getTime() > since;
  const withRooms = query.include === 'rooms';
  const properties: UpstreamProperty[] = [];
  let id = query.cursor ? decodeCursor(query.cursor) + 1 : 1;
  // Scan in id order, computing each property once and keeping no more than a page.
  for (; id <= dataset.size && properties.length < query.limit; id++) {
    const property = dataset.scanProperty(id)!;
    if (matches(property)) properties.push(wireProperty(property, withRooms));
  }
  // Look ahead for one more match, so the last page says so instead of a further empty page.
  let more = false;
  for (; id <= dataset.size && !more; id++) more = matches(dataset.scanProperty(id)!);
  const last = properties.at(-1);
  return { properties, next_cursor: more && last ? encodeCursor(last.id) : null };
}

function availability(state: SimulatorState, request: AvailabilityRequest, view: QuoteView): AvailabilityResponse {
  const dataset = state.dataset;
  const nights = stayOf(request.checkin, request.checkout);
  const city = request.city?.toLowerCase();
  const wanted = (p: Property) =>
    (city === undefined || p.city.toLowerCase() === city) && (request.star_rating_min === undefined || p.starRating >= request.star_rating_min);
  const results: PropertyAvailability[] = [];
  for (const id of propertyIds(dataset, request.property_ids)) {
    const property = request.property_ids ? dataset.property(id) : dataset.scanProperty(id);
    if (property && wanted(property)) results.push(propertyAvailability(state, property, nights, request, view));
  }
  return { results };
}

/** The asked ids once each in the asked order, or every id in order, without building a list. */
function* propertyIds(dataset: Dataset, asked: number[] | undefined): Iterable<number> {
  if (asked) {
    yield* new Set(asked);
    return;
  }
  for (let id = 1; id <= dataset.size; id++) yield id;
}

function propertyAvailability(
  state: SimulatorState,
  property: Property,
  nights: readonly Night[],
  request: { occupancy: RoomOccupancy[]; detail: 'lowest' | 'rates' },
  view: QuoteView,
): PropertyAvailability {
  const rooms = request.occupancy.length;
  const fitting = property.roomTypes.filter((room) => roomFits(room, request.occupancy));
  let available: boolean;
  let rates: UpstreamRate[];
  if (request.detail === 'rates') {
    rates = fitting.flatMap((room) => state.quoteRoom(room, nights, rooms, view));
    available = rates.some((r) => r.available_rooms >= rooms);
  } else {
    // Only the cheapest bookable rate is shown, so only that one is built.
    const lowest = state.lowestQuote(fitting, nights, rooms, view);
    available = lowest !== undefined;
    rates = lowest ? [lowest] : [];
  }
  return {
    property_id: property.id,
    name: property.name,
    city: property.city,
    star_rating: property.starRating,
    available,
    rates,
  };
}

/** The rate a price check or booking names: 404 when unknown, 400 when the party does not fit. */
function locateRate(state: SimulatorState, request: PriceCheckRequest | BookRequest): RateRef {
  const ref = state.findRate(request.property_id, request.roomtype_id, request.rateplan_id);
  if (!ref) throw notFound(`no rate plan ${request.rateplan_id} of room type ${request.roomtype_id} at property ${request.property_id}`);
  if (!roomFits(ref.room, request.occupancy)) {
    throw invalid(`occupancy: room type ${ref.room.id} sleeps at most ${ref.room.maxOccupancy} per room`);
  }
  return ref;
}

function priceCheck(rate: UpstreamRate, request: PriceCheckRequest): PriceCheckResponse {
  if (rate.available_rooms < request.occupancy.length) return { status: 'sold_out', rate: null };
  return { status: inclusiveTotal(rate) === request.expected_total ? 'matched' : 'price_changed', rate };
}
