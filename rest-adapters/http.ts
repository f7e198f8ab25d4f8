import { createRoute, OpenAPIHono, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { createRequestContext, type AppDeps, type RequestContext } from '../src/context.js';
import { authenticate, missingScope, requiredScopes, type ScopeRequirement } from '../src/services/access/index.js';
import {
  clientAddress,
  type ConnectionFacts,
  AppError,
  InsufficientScopeError,
  toAppError,
  UnauthorizedError,
} from '../src/services/kernel/index.js';
import { validationErrorFrom } from './envelope.js';

/** Hono's per-request variables, shared by every adapter. */
export type HttpEnv = {
  Bindings: { incoming?: { socket?: { remoteAddress?: string; encrypted?: boolean } } };
  Variables: {
    requestId: string;
    logger: Logger;
    clientIp: string | undefined;
    ctx: RequestContext;
  };
};

/** The handler of a documented route, typed by its definition (routes.ts beside handlers.ts). */
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, HttpEnv>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** X-Request-Id: the client's if it is a UUID, a new one otherwise; echoed on every response. */
export function requestId(deps: AppDeps): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const sent = c.req.header('x-request-id');
    const id = sent && UUID.test(sent) ? sent.toLowerCase() : crypto.randomUUID();
    c.set('requestId', id);
    c.set('logger', deps.logger.child({ reqId: id }));
    c.set('clientIp', clientAddress(connectionFacts(c), deps.config.trustedProxies));
    c.header('X-Request-Id', id);
    const started = performance.now();
    await next();
    c.res.headers.set('X-Request-Id', id);
    c.get('logger').info(
      { method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round(performance.now() - started) },
      'request',
    );
  };
}

/** What the socket and the proxies' headers say about the caller of this request. */
export function connectionFacts(c: Context<HttpEnv>): ConnectionFacts {
  const socket = c.env?.incoming?.socket;
  return {
    peer: socket?.remoteAddress,
    encrypted: socket?.encrypted === true,
    forwardedFor: c.req.header('x-forwarded-for'),
    forwardedProto: c.req.header('x-forwarded-proto'),
  };
}

/**
 * Resolves the credential into the request context. REST routes refuse a bad credential at once;
 * GraphQL (`lenient`) keeps the refusal for the fields that need a caller, so introspection and
 * GraphiQL work without one.
 */
export function authContext(deps: AppDeps, options: { lenient?: boolean } = {}): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    let principal = null;
    let authError: AppError | null = null;
    const credentials = { apiKey: c.req.header('x-api-key'), authorization: c.req.header('authorization') };
    try {
      principal = await authenticate(deps.db.prisma, credentials, { cache: deps.credentials, clientIp: c.get('clientIp') });
    } catch (error) {
      if (!options.lenient) throw error;
      if (!(error instanceof AppError)) c.get('logger').error({ err: error }, 'authentication failed');
      authError = toAppError(error);
    }
    c.set(
      'ctx',
      createRequestContext(deps, {
        requestId: c.get('requestId'),
        logger: c.get('logger'),
        principal,
        authError,
        credentials,
        clientIp: c.get('clientIp'),
        signal: c.req.raw.signal,
        scenarioHeader: c.req.header('x-test-scenario'),
      }),
    );
    await next();
  };
}

/**
 * The scope check of a REST route: the same rule scope-auth applies to GraphQL fields. Every scope
 * of the requirement is needed; the 403 names the first one the credential lacks.
 */
export function requireScope(requirement: ScopeRequirement): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const { principal } = c.get('ctx');
    if (!principal) throw new UnauthorizedError();
    const missing = missingScope(principal.scopes, requirement);
    if (missing) throw new InsufficientScopeError(missing);
    await next();
  };
}

/** A router whose request validation failures become 400 VALIDATION_ERROR in the envelope. */
export function router(): OpenAPIHono<HttpEnv> {
  return new OpenAPIHono<HttpEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationErrorFrom(result.error, result.target);
    },
  });
}

/**
 * A documented route that needs `scope` (one scope, or several that are all needed): declares the
 * security requirement in the OpenAPI document (`OAuth2` lists every scope; `x-required-scopes`
 * says the same for readers of the API key scheme, which has no scopes) and enforces it with
 * requireScope, so the document and the check cannot disagree.
 */
export function scopedRoute<const R extends Omit<RouteConfig, 'security' | 'middleware'>>(
  scope: ScopeRequirement,
  route: R,
  /** Middleware that runs after the scope check (Idempotency-Key). */
  after: MiddlewareHandler<HttpEnv>[] = [],
) {
  const scopes = [...requiredScopes(scope)];
  const scoped = {
    ...route,
    security: [{ ApiKeyAuth: [] }, { OAuth2: scopes }],
    middleware: [requireScope(scope), ...after],
    'x-required-scopes': scopes,
  };
  return createRoute(scoped as unknown as R & Pick<RouteConfig, 'security'> & { middleware: MiddlewareHandler<HttpEnv>[] });
}
