import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, type RequestListener } from 'node:http';
import type { AppDeps } from '../src/context.js';
import type { Tracing } from '../src/telemetry/tracing.js';
import { addressRefusal } from '../src/services/access/index.js';
import { PayloadTooLargeError, ServiceUnavailableError, ValidationError, type AppError, type RateLimitError } from '../src/services/kernel/index.js';
import { classify, errorBody, invalidRequest, logFailure } from './envelope.js';
import { attachExchange, Exchange, exchangeOf } from './http.js';
import { httpMetrics } from './httpMetrics.js';
import type { HeaderList, TransportRules } from './transport.js';
import { V2_BASE } from './v2/links.js';

/**
 * The front: the one pre-handler every HTTP request of the service passes, REST and GraphQL alike,
 * straight on node:http (docs/decisions.md "The front"). In order:
 *
 * 1. the request id, the caller's address and whether it came over HTTPS (the socket's facts read
 *    once per socket; a trusted proxy's X-Forwarded-* per request);
 * 2. a CORS preflight is answered here;
 * 3. the health routes go on (before the HTTPS rule and the shutdown gate, for load balancers);
 * 4. the HTTPS rule, the shutdown gate, the per-address limit of a request without a credential
 *    (PUBLIC_REQUESTS_PER_ADDRESS_MINUTE: images, docs, GraphiQL, OAuth, anonymous GraphQL; before
 *    its body is read), the body limit (the body is read here, up to the limit);
 * 5. the surface: GraphQL on /graphql, the REST adapters (Hono) for everything else.
 *
 * Every answer, whoever writes it, gets its final headers when its head is written (FrontResponse):
 * the security headers of its kind (API, docs page, GraphiQL), HSTS over HTTPS, CORS and
 * X-Request-Id, all computed at start; and, at `info`, one log line. A refusal made here is the
 * §2.1 error envelope; one made while the body is still arriving drains the rest of it
 * (for DRAIN_MS, at most DRAIN_LIMITS times the body limit), so a client that sends its whole
 * body before reading gets the answer.
 */

/** How long a refused request's body is still read and discarded before the connection is closed. */
export const DRAIN_MS = 5_000;
/** A refused body is read and discarded up to this many times BODY_LIMIT_BYTES (64 MiB by default). */
export const DRAIN_LIMITS = 64;
/** After a drain, how long the peer has to close its side before the socket is destroyed. */
const LINGER_MS = 1_000;

/** What the front needs of each surface. */
export interface Surfaces {
  /** The REST adapters, health, docs and operator routes (Hono, through @hono/node-server). */
  rest: (req: IncomingMessage, res: ServerResponse, ex: Exchange) => void;
  /** POST and GET /graphql; when absent, /graphql goes to `rest` too. */
  graphql?: ((req: IncomingMessage, res: ServerResponse, ex: Exchange) => void) | undefined;
  /**
   * The route template the REST router would answer `method` `path` with (undefined: none), for
   * the label and log line of a refusal the front makes before any surface has routed.
   */
  routeOf?: ((method: string, path: string) => string | undefined) | undefined;
}

interface FrontState {
  readonly ex: Exchange;
  readonly rules: TransportRules;
  /** Whether the answer may be a page (a GET or HEAD): its content type picks the security headers. */
  readonly page: boolean;
  readonly origin: string;
  /** performance.now() at the start, when requests are logged. */
  readonly started: number;
  readonly log: boolean;
}

const STATE = Symbol('front');
const CLOSED = Symbol('frontClosed');
/** What the front does when an answer is over (metrics, the server span), the response as `this`. */
type CloseHook = (this: ServerResponse) => void;
type FrontAnswer = ServerResponse & { [STATE]?: FrontState; [CLOSED]?: CloseHook };

/**
 * node:http's response with the front's final headers: set when the head is written, so they go
 * on every answer (Hono's, Yoga's, the front's own refusals) and a handler's own header of the
 * same name (the voucher's Content-Security-Policy) wins.
 *
 * Its `close` (the answer all written, or the client gone) reaches the front's close hook without a
 * listener of the front's own. @hono/node-server already listens for `close`; a second listener
 * makes the response keep its listeners in an array, made at one allocation site of node's
 * events module for every emitter of the process, which V8 may come to allocate in the old
 * generation (allocation-site pretenuring): such an array, left there after its request, keeps
 * the listeners and through them the whole request alive through every young collection, and
 * every request is promoted (bench/README.md, "Issue 20: where the cost came from").
 */
export class FrontResponse extends ServerResponse {
  override writeHead(statusCode: number, statusMessage?: string, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  override writeHead(statusCode: number, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  override writeHead(statusCode: number, second?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], third?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    finalHeaders(this, statusCode, typeof second === 'string' ? third : second);
    return super.writeHead(statusCode, second as string, third);
  }

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'close') closeHook(this);
    return super.emit(event, ...args);
  }
}

/** Runs the close hook of `res` once (node:http may emit a response's `close` more than once). */
function closeHook(res: FrontAnswer): void {
  const hook = res[CLOSED];
  if (!hook) return;
  res[CLOSED] = undefined;
  hook.call(res);
}

function onClose(this: ServerResponse): void {
  closeHook(this);
}

type WriteHead = (statusCode: number, second?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], third?: OutgoingHttpHeaders | OutgoingHttpHeader[]) => ServerResponse;

/**
 * For a response made elsewhere (the in-process injection of ChannelService.fetch): the same
 * hooks, its close hook by a listener (no network, no load: nothing to spare there).
 */
export function withFinalHeaders(res: ServerResponse): void {
  const writeHead = res.writeHead as WriteHead;
  res.writeHead = function (this: ServerResponse, statusCode: number, second?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], third?: OutgoingHttpHeaders | OutgoingHttpHeader[]) {
    finalHeaders(this, statusCode, typeof second === 'string' ? third : second);
    return writeHead.call(this, statusCode, second, third);
  } as ServerResponse['writeHead'];
  res.on('close', onClose);
}

function finalHeaders(res: FrontAnswer, status: number, given: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined): void {
  const state = res[STATE];
  if (!state || res.headersSent) return;
  res[STATE] = undefined;
  const { ex, rules } = state;
  let security = rules.security.api;
  if (state.page && headerOf(res, given, 'content-type')?.startsWith('text/html')) {
    security = ex.path === '/graphql' ? rules.security.graphiql : rules.security.docsPage;
  }
  set(res, security);
  if (ex.https) res.setHeader(rules.hsts[0], rules.hsts[1]);
  if (rules.cors) {
    set(res, rules.cors.answer(state.origin));
    // Vary: Origin is added to the handler's own Vary, as Hono's cors appends it.
    if (rules.cors.varyOrigin) addVary(res, given, 'Origin');
  }
  if (ex.req.headers['x-api-key'] !== undefined || ex.req.headers.authorization !== undefined) privateAnswer(res, given);
  res.setHeader('X-Request-Id', ex.id);
  if (state.log) ex.logAnswer(status, Math.round(performance.now() - state.started));
}

/**
 * An answer to a request that carries a credential (an API key, a bearer token, the token
 * endpoint's Basic) is one caller's: no shared cache in front (a proxy or CDN, as operations.md
 * allows) may keep it or serve it to another caller of the same URL. `Cache-Control: no-store`
 * unless the handler chose its own (the voucher's `private, no-store`, the token's `no-store`),
 * and `Vary: X-Api-Key, Authorization` added to the handler's own Vary.
 */
function privateAnswer(res: ServerResponse, given: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined): void {
  if (headerOf(res, given, 'cache-control') === undefined) res.setHeader('Cache-Control', 'no-store');
  addVary(res, given, 'X-Api-Key, Authorization');
}

/** `names` added to the answer's Vary: the one the handler gives writeHead, or else the one set on the response. */
function addVary(res: ServerResponse, given: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined, names: string): void {
  const key = given && !Array.isArray(given) ? givenKey(given, 'vary') : undefined;
  if (key) {
    (given as OutgoingHttpHeaders)[key] = `${String((given as OutgoingHttpHeaders)[key])}, ${names}`;
    return;
  }
  const vary = res.getHeader('vary');
  res.setHeader('Vary', vary === undefined ? names : `${String(vary)}, ${names}`);
}

function set(res: ServerResponse, headers: HeaderList): void {
  for (const [name, value] of headers) res.setHeader(name, value);
}

function givenKey(given: OutgoingHttpHeaders, name: string): string | undefined {
  for (const key in given) if (key.length === name.length && key.toLowerCase() === name) return key;
  return undefined;
}

function headerOf(res: ServerResponse, given: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined, name: string): string | undefined {
  const key = given && !Array.isArray(given) ? givenKey(given, name) : undefined;
  const value = key ? (given as OutgoingHttpHeaders)[key] : res.getHeader(name);
  return value === undefined ? undefined : String(value);
}

const HEALTH = new Set(['/healthz', '/readyz']);
const UNROUTABLE = [{ field: '(path)', reason: 'not a path the service routes: a backslash before the query, or no path at all' }];

/**
 * A target the router refuses (routedPath's null), as every route documents its 400: v2's
 * INVALID_REQUEST under its prefix, VALIDATION_ERROR elsewhere (@hono/node-server had answered it
 * a bare 400, before any rule as here).
 */
function unroutable(target: string): AppError {
  return target.startsWith(`${V2_BASE}/`) ? invalidRequest(UNROUTABLE) : new ValidationError(UNROUTABLE);
}

/** The query of a request target (`?a=1`), or the empty string. */
function queryOf(target: string): string {
  const at = target.indexOf('?');
  return at < 0 ? '' : target.slice(at);
}

/** The request listener of the service's HTTP server (src/server.ts) and of its in-process fetch. */
export function createFront(deps: AppDeps, rules: TransportRules, surfaces: Surfaces, shuttingDown: () => boolean): RequestListener {
  const limit = deps.config.bodyLimitBytes;
  const log = deps.logger.isLevelEnabled('info');
  const measure = httpMetrics(deps.metrics);
  const { tracing } = deps;
  // When an answer is over: the HTTP histogram, and with tracing on the end of the server span.
  const closed: CloseHook = tracing
    ? function (this: ServerResponse) {
        measure.closed.call(this);
        endServerSpan(tracing, this);
      }
    : measure.closed;
  const serve: RequestListener = (req, res) => {
    const ex = new Exchange(deps, req, res);
    attachExchange(req, ex);
    measure.start(res);
    (res as FrontAnswer)[CLOSED] = closed;
    if (tracing) return traced(tracing, ex, () => handle(ex, req, res));
    handle(ex, req, res);
  };
  const handle = (ex: Exchange, req: IncomingMessage, res: ServerResponse): void => {
    const method = req.method ?? 'GET';
    const origin = rules.cors ? (ex.header('origin') ?? '') : '';
    (res as FrontAnswer)[STATE] = { ex, rules, page: method === 'GET' || method === 'HEAD', origin, started: log ? performance.now() : 0, log };

    // A preflight is answered here, before the credential check.
    if (rules.cors && method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.writeHead(204, 'No Content', Object.fromEntries(rules.cors.preflight(origin)));
      res.end();
      return;
    }
    if (ex.unroutable) return refuseBefore(ex, unroutable(ex.path));
    const graphql = ex.path === '/graphql' && surfaces.graphql;
    const surface = graphql || surfaces.rest;
    if (graphql) {
      ex.route = '/graphql';
      // Another spelling of the endpoint (`/x/../graphql`): Yoga, which reads the target, sees it as the front did.
      const spelled = `/graphql${queryOf(req.url!)}`;
      if (req.url !== spelled) req.url = spelled;
    }
    // Health answers before the shutdown gate, so a load balancer sees readiness drop to 503.
    if (HEALTH.has(ex.path) && (method === 'GET' || method === 'HEAD')) return surfaces.rest(req, res, ex);
    const refusal = rules.httpsRefusal(ex.https, ex.path, ex.local) ?? (shuttingDown() ? new ServiceUnavailableError() : null);
    if (refusal) return refuseBefore(ex, refusal);
    // A request with a credential is charged to its channel by its surface; one without, to its address here.
    if (!presentsCredential(req)) {
      void publicRefusal(deps, ex)
        .then((refused) => (refused ? refuseBefore(ex, refused) : pass(ex, req, res, surface, method)))
        .catch((error: unknown) => refuse(ex, error, limit));
      return;
    }
    pass(ex, req, res, surface, method);
  };
  const pass = (ex: Exchange, req: IncomingMessage, res: ServerResponse, surface: Surfaces['rest'], method: string): void => {
    if (method === 'GET' || method === 'HEAD') return surface(req, res, ex);
    // The body's 'end' comes in the socket's context: the request's trace context is entered again.
    const trace = ex.trace;
    readBody(ex, limit, refuseBefore, trace && tracing ? () => tracing.with(trace.ctx, () => surface(req, res, ex)) : () => surface(req, res, ex));
  };
  // A refusal before any surface routed: labelled and logged by the route that would have answered.
  const refuseBefore = (ex: Exchange, error: AppError, received = 0): void => {
    ex.route ??= surfaces.routeOf?.(ex.req.method ?? 'GET', ex.path);
    refuse(ex, error, limit, received);
  };
  return serve;
}

/**
 * Whether a request presents a credential of the API (an API key, or a bearer token: a partner's
 * or the operator's). The token endpoint's client authentication (Basic) is none: the endpoint
 * is public. A presented credential that is refused is 401 on REST; GraphQL, which runs a
 * request with a refused credential without a caller, charges it to the address too (src/graphql/http.ts).
 */
export function presentsCredential(req: IncomingMessage): boolean {
  if (req.headers['x-api-key'] !== undefined) return true;
  const authorization = req.headers.authorization;
  return authorization !== undefined && authorization.length > 7 && authorization.slice(0, 7).toLowerCase() === 'bearer ';
}

/** Charges a request without a (valid) credential to its client address; the 429 past PUBLIC_REQUESTS_PER_ADDRESS_MINUTE. */
export async function publicRefusal(deps: AppDeps, ex: Exchange): Promise<RateLimitError | null> {
  const count = { what: 'requests without a credential', instead: ', or send a credential' };
  const refused = await addressRefusal(deps.limiters.publicAddress, ex.clientIp, deps.config.publicRequestsPerAddressMinute, count, (error) =>
    deps.logger.warn({ err: error, clientIp: ex.clientIp }, 'request without a credential not counted'),
  );
  if (refused) deps.metrics.rateLimited('public');
  return refused;
}

/**
 * With tracing on: the request's server span (child of the caller's `traceparent` when the caller
 * is trusted with it, TRACE_CONTEXT_TRUSTED), active while the request is handled, ended when its
 * answer is over (endServerSpan, by the close hook).
 */
function traced(tracing: Tracing, ex: Exchange, handle: () => void): void {
  const trace = (ex.trace = tracing.serverSpan(ex.req, ex.path, ex.https, { ip: ex.clientIp, viaProxy: ex.viaProxy }));
  tracing.with(trace.ctx, handle);
}

/** Ends the server span of the answer `res` (named by the route template that answered). */
function endServerSpan(tracing: Tracing, res: ServerResponse): void {
  const ex = exchangeOf(res.req);
  if (ex?.trace) tracing.endServerSpan(ex.trace.span, res.req.method ?? 'GET', ex.route, res.statusCode);
}

type BodyRequest = IncomingMessage & { rawBody?: Buffer };

/**
 * BODY_LIMIT_BYTES: the body of a request that has one is read here, up to the limit (413
 * PAYLOAD_TOO_LARGE at once for a larger Content-Length, or as soon as a chunked body passes it),
 * and handed on as `rawBody` (which @hono/node-server and Yoga's node adapter read instead of
 * the stream).
 */
function readBody(ex: Exchange, limit: number, refused: (ex: Exchange, error: AppError, received?: number) => void, then: () => void): void {
  const req = ex.req as BodyRequest;
  const declared = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (!chunked && declared !== undefined && Number(declared) > limit) return refused(ex, new PayloadTooLargeError(limit));
  if (!chunked && (declared === undefined || declared === '0')) {
    req.rawBody = EMPTY;
    return then();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      stop();
      refused(ex, new PayloadTooLargeError(limit), size);
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = () => {
    stop();
    req.rawBody = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    then();
  };
  const stop = () => {
    req.off('data', onData);
    req.off('end', onEnd);
  };
  req.on('data', onData);
  req.on('end', onEnd);
}

const EMPTY = Buffer.alloc(0);

/** `error` in the §2.1 envelope as a web Response (a refusal of the REST surface's deadline). */
export function refusalResponse(ex: Exchange, error: unknown): Response {
  const appError: AppError = classify(error);
  logFailure(ex, error, appError);
  return new Response(JSON.stringify(errorBody(appError, ex.id)), {
    status: appError.status,
    headers: { ...appError.headers, 'content-type': 'application/json' },
  });
}

/** Answers `error` in the §2.1 envelope from the front, and drains what is left of the body. */
export function refuse(ex: Exchange, error: unknown, limit: number, received = 0): void {
  const appError: AppError = classify(error);
  logFailure(ex, error, appError);
  const { res } = ex;
  if (!res.headersSent && !res.writableEnded) {
    const body = JSON.stringify(errorBody(appError, ex.id));
    res.writeHead(appError.status, { ...appError.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }
  drain(ex.req, DRAIN_LIMITS * limit, received);
}

/**
 * Reads and discards the rest of a request's body after an early answer (RFC 9112 §9.6), as
 * nginx's lingering close does, so a client still sending it reads the answer instead of a reset
 * connection. Bounded by time (DRAIN_MS) and by bytes (`maxBytes` in all); then the connection is
 * closed gently: this side ends (FIN, after the answer), what still arrives is discarded, and the
 * socket is destroyed once the peer closes or LINGER_MS later.
 */
function drain(req: IncomingMessage, maxBytes: number, received: number): void {
  if (req.complete || req.readableEnded || req.destroyed) return;
  let size = received;
  const cut = () => {
    req.off('data', onData);
    const socket = req.socket as IncomingMessage['socket'] | null;
    // A simulated request (ChannelService.fetch) has no real socket to close.
    if (typeof socket?.end !== 'function') return void req.destroy();
    socket.end();
    socket.resume();
    const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once('close', () => clearTimeout(linger));
  };
  const timer = setTimeout(cut, DRAIN_MS).unref();
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) {
      clearTimeout(timer);
      cut();
    }
  };
  req.on('data', onData);
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}
