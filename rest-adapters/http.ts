import type { Context, MiddlewareHandler } from 'hono';
import { createRequestContext, type AppDeps } from '../src/context.js';
import { authenticate } from '../src/services/access/index.js';
import { clientAddress, type ConnectionFacts, AppError, toAppError } from '../src/services/kernel/index.js';
import type { HttpEnv } from './env.js';

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
