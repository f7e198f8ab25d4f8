import { createRoute, OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import ipaddr from 'ipaddr.js';
import type { Logger } from 'pino';
import { createRequestContext, type AppDeps, type RequestContext } from '../src/context.js';
import { authenticate } from '../src/services/auth.js';
import { AppError, InsufficientScopeError, toAppError, UnauthorizedError } from '../src/services/errors.js';
import type { Scope } from '../src/services/scopes.js';
import { validationErrorFrom } from './envelope.js';

/** Hono's per-request variables, shared by every adapter. */
export type HttpEnv = {
  Bindings: { incoming?: { socket?: { remoteAddress?: string } } };
  Variables: {
    requestId: string;
    logger: Logger;
    clientIp: string | undefined;
    ctx: RequestContext;
  };
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** X-Request-Id: the client's if it is a UUID, a new one otherwise; echoed on every response. */
export function requestId(deps: AppDeps): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const sent = c.req.header('x-request-id');
    const id = sent && UUID.test(sent) ? sent.toLowerCase() : crypto.randomUUID();
    c.set('requestId', id);
    c.set('logger', deps.logger.child({ reqId: id }));
    c.set('clientIp', clientAddress(c, deps.config.trustedProxies));
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

/**
 * The caller's address: the socket's peer, or, when that peer is a trusted proxy, the nearest
 * address in X-Forwarded-For that is not one.
 */
export function clientAddress(c: Context<HttpEnv>, trustedProxies: readonly string[]): string | undefined {
  const peer = c.env?.incoming?.socket?.remoteAddress;
  if (!peer) return undefined;
  const chain = [peer, ...(c.req.header('x-forwarded-for') ?? '').split(',').map((s) => s.trim()).filter(Boolean).reverse()];
  for (const address of chain) {
    if (!ipaddr.isValid(address) || !isInRanges(address, trustedProxies)) return normalizeIp(address);
  }
  return normalizeIp(chain[chain.length - 1]!);
}

export function normalizeIp(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
    ? (parsed as ipaddr.IPv6).toIPv4Address().toString()
    : parsed.toString();
}

export function isInRanges(address: string, ranges: readonly string[]): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address);
  return ranges.some((range) => {
    try {
      const [net, bits] = range.includes('/') ? ipaddr.parseCIDR(range) : [ipaddr.process(range), -1];
      const target = ipaddr.process(net.toString());
      if (target.kind() !== ip.kind()) return false;
      return bits < 0 ? target.toString() === ip.toString() : ip.match(target, bits);
    } catch {
      return false;
    }
  });
}

export function isLoopback(address: string | undefined): boolean {
  return address !== undefined && ipaddr.isValid(address) && ipaddr.process(address).range() === 'loopback';
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
      principal = await authenticate(deps.db.prisma, credentials, { cache: deps.credentials });
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
        signal: c.req.raw.signal,
        scenarioHeader: c.req.header('x-test-scenario'),
      }),
    );
    await next();
  };
}

/** The scope check of a REST route: the same rule scope-auth applies to GraphQL fields. */
export function requireScope(scope: Scope): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const { principal } = c.get('ctx');
    if (!principal) throw new UnauthorizedError();
    if (!principal.scopes.has(scope)) throw new InsufficientScopeError(scope);
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
 * A documented route that needs `scope`: declares the security requirement in the OpenAPI
 * document and enforces it with requireScope, so the document and the check cannot disagree.
 */
export function scopedRoute<const R extends Omit<RouteConfig, 'security' | 'middleware'>>(
  scope: Scope,
  route: R,
  /** Middleware that runs after the scope check (Idempotency-Key). */
  after: MiddlewareHandler<HttpEnv>[] = [],
) {
  const scoped = {
    ...route,
    security: [{ ApiKeyAuth: [] }, { OAuth2: [scope] }],
    middleware: [requireScope(scope), ...after],
    'x-required-scope': scope,
  };
  return createRoute(scoped as unknown as R & Pick<RouteConfig, 'security'> & { middleware: MiddlewareHandler<HttpEnv>[] });
}
