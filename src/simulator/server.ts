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
 *   POST /_control/properties/{id}/content  {} or {revision} revises a property's content: drawn
 *        again with the revision in its seed (a new headline, new reviews), its updated_at now
 *   POST /_control/reset                                   clears bookings, stock, price moves, content
 *        revisions, stats
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
import {
  type AvailabilityBatchResponse,
  type AvailabilityResponse,
  type ChangeQuoteResponse,
  type PriceCheckResponse,
  type PropertyBatch,
  type PropertyPage,
  SCENARIOS,
  type Scenario,
  type UpstreamBooking,
  type UpstreamProperty,
} from '../upstream/protocol.js';
import { Dataset } from './dataset.js';
import { findImage, ImageStore, isImageSize } from './images.js';
import { inclusiveTotal, type QuoteView, SimulatorState, stayOf } from './state.js';
import { MAX_IDS, SimulatorError, availabilityBatchSchema, availabilitySchema, batchItemSchema, batchSchema, body, bookSchema, changeQuoteSchema, controlContentSchema, controlStatusSchema, errorResponse, invalid, listQuerySchema, modifySchema, notFound, parse, pathId, priceCheckSchema } from './requests.js';
import { availability, listProperties, locateRate, priceCheck, wireProperty } from './wire.js';

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
  const images = new ImageStore();
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

  // Every advertised image at every advertised size, drawn on first request; nothing else.
  app.get('/images/:propertyId/:imageId/:file', (c) => {
    const { propertyId: rawId, imageId, file } = c.req.param();
    const size = file.endsWith('.png') ? file.slice(0, -'.png'.length) : '';
    const property = /^[1-9]\d{0,8}$/.test(rawId) ? dataset.property(Number(rawId)) : undefined;
    const image = property && findImage(property, imageId);
    if (!property || !image || !isImageSize(size)) throw notFound(`no image ${c.req.path}`);
    const encoded = images.get(property.id, image, size);
    const headers = { 'Cache-Control': 'public, max-age=86400, immutable', ETag: encoded.etag };
    if (c.req.header('if-none-match')?.split(',').some((tag) => tag.trim() === encoded.etag)) return c.body(null, 304, headers);
    return c.body(new Uint8Array(encoded.bytes), 200, { ...headers, 'Content-Type': 'image/png' });
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
    dataset.clearRevisions();
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

    app.post('/_control/properties/:id/content', async (c) => {
      const id = pathId(c.req.param('id'));
      const { revision } = await body(c, controlContentSchema);
      const property = dataset.reviseContent(id, clock(), revision);
      if (!property) throw notFound(`no property ${id}`);
      return c.json(wireProperty(property, true) satisfies UpstreamProperty);
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

