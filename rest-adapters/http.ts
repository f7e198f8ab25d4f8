import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';
import type { RouterRoute } from 'hono/types';
import { matchedRoutes } from 'hono/route';
import type { Context as TraceContext, Span } from '@opentelemetry/api';
import type { Level, Logger } from 'pino';
import { createRequestContext, type AppDeps, type RequestContext } from '../src/context.js';
import { authenticate, type Principal } from '../src/services/access/index.js';
import { clientAddress, isHttps, isInRanges, isLoopback, AppError, toAppError, UnauthorizedError, type ConnectionFacts } from '../src/services/kernel/index.js';
import type { HttpEnv } from './env.js';
import { routedPath } from './requestPath.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** X-Request-Id: the client's if it is a UUID, a new one otherwise; echoed on every response. */
export function requestIdOf(sent: string | undefined): string {
  return sent && UUID.test(sent) ? sent.toLowerCase() : crypto.randomUUID();
}

/** What a socket says about its caller, read once per socket (a keep-alive socket carries many requests). */
interface SocketFacts {
  readonly peer: string | undefined;
  readonly encrypted: boolean;
  /** The peer is one of TRUSTED_PROXIES: its X-Forwarded-For and -Proto are read per request. */
  readonly proxy: boolean;
  /** The caller's address when the peer is not a proxy. */
  readonly clientIp: string | undefined;
  /** The peer is a loopback address and not one of TRUSTED_PROXIES (see Exchange.local). */
  readonly local: boolean;
}

const SOCKET_FACTS = Symbol('socketFacts');
type FactSocket = Socket & { [SOCKET_FACTS]?: SocketFacts; encrypted?: boolean };

function socketFacts(socket: FactSocket | undefined, trustedProxies: readonly string[]): SocketFacts {
  const known = socket?.[SOCKET_FACTS];
  if (known) return known;
  const peer = socket?.remoteAddress;
  const encrypted = socket?.encrypted === true;
  const proxy = peer !== undefined && isInRanges(peer, trustedProxies);
  const facts: SocketFacts = {
    peer,
    encrypted,
    proxy,
    clientIp: clientAddress({ peer, encrypted, forwardedFor: undefined, forwardedProto: undefined }, trustedProxies),
    local: !proxy && isLoopback(peer),
  };
  if (socket) socket[SOCKET_FACTS] = facts;
  return facts;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * One request as the front (rest-adapters/front.ts) sees it: its id, who sent it and whether over
 * HTTPS (the socket's facts, and a trusted proxy's headers), and what is made only when asked for:
 * the logger child and the abort signal.
 */
export class Exchange {
  readonly id: string;
  readonly clientIp: string | undefined;
  readonly https: boolean;
  /** The socket's peer is one of TRUSTED_PROXIES (clientIp and https are then what it says). */
  readonly viaProxy: boolean;
  /**
   * The caller is on this host: the socket's peer is a loopback address that is not one of
   * TRUSTED_PROXIES. What the operator routes and /metrics open to loopback go by; a request
   * through a proxy is never local, whatever address it forwards (or none: a same-host proxy
   * that sends no X-Forwarded-For is not the operator).
   */
  readonly local: boolean;
  /**
   * The path, without the query, as the router reads it (routedPath: dot segments resolved,
   * decoded); the target itself when the router would refuse it (`unroutable`: a backslash in
   * the path, a target that is no path nor URL), which the front answers 400 before any rule.
   */
  readonly path: string;
  readonly unroutable: boolean;
  /**
   * The route template that answered (`/channel/v1/properties/{id}`, `/graphql`), set by the
   * surface once it has routed the request; undefined when nothing matched (a 404 of no route, a
   * refusal of the front). A bounded label for metrics and span names, never the raw path.
   */
  route: string | undefined = undefined;
  /** The request's server span and the context holding it, when tracing is on (set by the front). */
  trace: { readonly span: Span; readonly ctx: TraceContext } | undefined = undefined;
  #logger: Logger | undefined;
  #abort: AbortController | undefined;

  constructor(
    private readonly deps: AppDeps,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
  ) {
    const target = req.url ?? '/';
    const path = routedPath(target);
    this.unroutable = path === null;
    this.path = path ?? target;
    this.id = requestIdOf(header(req, 'x-request-id'));
    const { trustedProxies } = deps.config;
    const socket = socketFacts(req.socket as FactSocket, trustedProxies);
    this.viaProxy = socket.proxy;
    this.local = socket.local;
    if (!socket.proxy) {
      this.clientIp = socket.clientIp;
      this.https = socket.encrypted;
    } else {
      const facts: ConnectionFacts = {
        peer: socket.peer,
        encrypted: socket.encrypted,
        forwardedFor: header(req, 'x-forwarded-for'),
        forwardedProto: header(req, 'x-forwarded-proto'),
      };
      this.clientIp = clientAddress(facts, trustedProxies);
      this.https = isHttps(facts, trustedProxies);
    }
  }

  /**
   * The service's logger with this request's id, and with tracing on its trace and server span ids
   * (made on first use: a request that logs nothing makes no child).
   */
  get logger(): Logger {
    return (this.#logger ??= this.deps.logger.child(this.trace ? { reqId: this.id, ...traceIds(this.trace.span) } : { reqId: this.id }));
  }

  /** Aborted when the client goes away before its answer is sent (made on first use). */
  get signal(): AbortSignal {
    if (!this.#abort) {
      const abort = (this.#abort = new AbortController());
      const res = this.res;
      const gone = () => {
        if (!res.writableFinished) abort.abort(this.req.errored ?? 'Client connection prematurely closed.');
      };
      if (res.closed) gone();
      else res.once('close', gone);
    }
    return this.#abort.signal;
  }

  header(name: string): string | undefined {
    return header(this.req, name);
  }

  /**
   * The request's line at `info`, written by the service's logger itself (no child: the request
   * id is one of its fields, as a child would have put it).
   */
  logAnswer(status: number, ms: number): void {
    const line = { reqId: this.id, method: this.req.method, path: this.path, route: this.route, status, ms };
    this.deps.logger.info(this.trace ? { ...line, ...traceIds(this.trace.span) } : line, 'request');
  }

  /** Whether the service logs at `level` (so a line at it is worth a logger child). */
  logs(level: Level): boolean {
    return this.deps.logger.isLevelEnabled(level);
  }
}

/** The log fields of a span: `trace_id` and `span_id`, as OpenTelemetry's log correlation names them. */
function traceIds(span: Span): { trace_id: string; span_id: string } {
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

const EXCHANGE = Symbol('exchange');
type WithExchange = { [EXCHANGE]?: Exchange };

export function attachExchange(req: IncomingMessage, exchange: Exchange): void {
  (req as WithExchange)[EXCHANGE] = exchange;
}

export function exchangeOf(req: IncomingMessage): Exchange | undefined {
  return (req as WithExchange)[EXCHANGE];
}

/** The front's exchange of a Hono request (the node request it came on). */
export function exchange(c: Context<HttpEnv>): Exchange {
  const found = c.env?.incoming && exchangeOf(c.env.incoming);
  if (!found) throw new Error('a request reached the REST adapters without the front (rest-adapters/front.ts)');
  return found;
}

/** Hands the front's facts to Hono's variables, for the adapters: request id and client address. */
export function adoptExchange(): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const ex = exchange(c);
    c.set('requestId', ex.id);
    c.set('clientIp', ex.clientIp);
    c.set('local', ex.local);
    // Known once Hono has routed (before any handler runs), so a request whose client leaves
    // before its answer is still labelled by its route.
    ex.route = routeTemplate(c);
    await next();
  };
}

/**
 * The template of the endpoint Hono matched, in OpenAPI's spelling: `/channel/v1/bookings/:id{...}`
 * is `/channel/v1/bookings/{id}`. Undefined when only middleware matched (a 404 of no route).
 */
export function routeTemplate(c: Context<HttpEnv>): string | undefined {
  return templateOf(matchedRoutes(c));
}

/**
 * The template of the endpoint that answers among `routes` (Hono's matches, in the order it runs
 * them): the first one of a method that is not a middleware's `*`. Hono runs its handlers in that
 * order and an endpoint does not call on, so the first is the one that answers, whether or not
 * a middleware before it (the credential check) refuses first: GET
 * /api/channel/v2/properties/availability also matches /properties/{id}, registered after it.
 */
export function templateOf(routes: readonly RouterRoute[]): string | undefined {
  for (const route of routes) {
    if (route.method === 'ALL' || route.path.endsWith('*')) continue;
    let template = TEMPLATES.get(route.path);
    if (template === undefined) TEMPLATES.set(route.path, (template = route.path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, '{$1}')));
    return template;
  }
  return undefined;
}

/** Route templates by Hono's route path: as many as the service declares routes. */
const TEMPLATES = new Map<string, string>();

/**
 * The request context of a request: its credential resolved (and the app's IP allow list
 * applied). REST routes refuse a bad credential at once; GraphQL (`lenient`) keeps the refusal for
 * the fields that need a caller, so introspection and GraphiQL work without one.
 */
export async function requestContextOf(deps: AppDeps, ex: Exchange, options: { lenient?: boolean } = {}): Promise<RequestContext> {
  let principal: Principal | null = null;
  let authError: AppError | null = null;
  const credentials = { apiKey: ex.header('x-api-key'), authorization: ex.header('authorization') };
  try {
    principal = await authenticate(deps.db.prisma, credentials, { cache: deps.credentials, clientIp: ex.clientIp });
  } catch (error) {
    // REST's refusal is logged with its answer (envelope.ts logFailure).
    if (!options.lenient) throw error;
    if (!(error instanceof AppError)) ex.logger.error({ err: error }, 'authentication failed');
    else if (error.status === UnauthorizedError.status) credentialRefused(ex, error);
    authError = toAppError(error);
  }
  return createRequestContext(deps, {
    requestId: ex.id,
    logger: () => ex.logger,
    principal,
    authError,
    credentials,
    clientIp: ex.clientIp,
    signal: () => ex.signal,
    scenarioHeader: ex.header('x-test-scenario'),
    languageHeader: ex.header('accept-language'),
    reachedAs: { https: ex.https, host: ex.header('host') },
  });
}

/**
 * A missing, unknown, revoked or expired credential: the caller's mistake, not the service's, so an
 * `info` line (for an operator following a partner's failed calls) with the code and no stack.
 */
export function credentialRefused(ex: { readonly logger: Logger }, error: AppError): void {
  ex.logger.info({ code: error.code }, 'credential refused');
}

/** The credential check of the REST routers: the request context, or a refusal in the envelope. */
export function authContext(deps: AppDeps, options: { lenient?: boolean } = {}): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    c.set('ctx', await requestContextOf(deps, exchange(c), options));
    await next();
  };
}
