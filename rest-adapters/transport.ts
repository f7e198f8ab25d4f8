import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { HTTPException } from 'hono/http-exception';
import { secureHeaders } from 'hono/secure-headers';
import { timeout } from 'hono/timeout';
import type { AppDeps } from '../src/context.js';
import { HttpsRequiredError, RequestTimeoutError, isHttps, isLoopback } from '../src/services/kernel/index.js';
import type { HttpEnv } from './env.js';
import { connectionFacts } from './http.js';

/**
 * The transport rules in front of every surface (REST, GraphQL, docs), in app.ts's order:
 * security headers and CORS on every answer (errors too), then HTTPS, then the request deadline.
 * The apps' IP allow lists are checked with the credential (services/auth.ts), and the rate limit
 * after both.
 */

/**
 * Security headers on every answer (Hono's secureHeaders): nosniff, no framing, no referrer, and
 * Strict-Transport-Security on answers sent over HTTPS. API answers (JSON, CSV, files) get
 * `default-src 'none'`: nothing in them may run if a browser renders one. The HTML pages get
 * what they need: the docs page loads only its own assets; GraphiQL (when `pages.graphiql`, the
 * page made at start) runs its one inline script, known by its digest, and loads nothing from
 * elsewhere; an HTML answer that sets its own policy (the booking voucher: one inline style,
 * nothing else) keeps it. Every policy is built here once, at start.
 */
export function securityHeaders(deps: AppDeps, pages: { graphiql: { readonly scriptHashes: readonly string[] } | null }): MiddlewareHandler<HttpEnv> {
  const common = {
    crossOriginResourcePolicy: 'same-site',
    xFrameOptions: 'DENY',
    strictTransportSecurity: false,
    // Hono's default also sets X-XSS-Protection: 0 and the others; kept.
  } as const;
  const api = secureHeaders({
    ...common,
    contentSecurityPolicy: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  });
  const docsPage = secureHeaders({
    ...common,
    contentSecurityPolicy: {
      defaultSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      styleSrc: ["'self'", "'unsafe-inline'"],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'none'"],
      frameAncestors: ["'none'"],
    },
  });
  // GraphiQL (src/graphql/graphiql/page.ts): its one inline script by digest, computed when the page
  // was made at start; nothing from another origin, no eval. Styles need 'unsafe-inline': the editor
  // (Monaco) adds <style> elements of changing text (theme, icons) without a nonce, and style
  // attributes, at run time; a digest in style-src would switch 'unsafe-inline' off and refuse them
  // (about 300 violations in Chromium). Fonts and images are data: URLs in the inline stylesheet;
  // the editor's workers start from blob: URLs; queries and subscriptions (SSE) are fetches to the
  // service itself.
  const graphiql = pages.graphiql
    ? secureHeaders({
        ...common,
        contentSecurityPolicy: {
          defaultSrc: ["'none'"],
          scriptSrc: [...pages.graphiql.scriptHashes],
          styleSrc: ["'unsafe-inline'"],
          imgSrc: ['data:'],
          fontSrc: ['data:'],
          workerSrc: ['blob:'],
          connectSrc: ["'self'"],
          baseUri: ["'none'"],
          formAction: ["'none'"],
          frameAncestors: ["'none'"],
        },
      })
    : api;
  const noop = async () => {};
  return async (c, next) => {
    await next();
    const html = c.res.headers.get('content-type')?.startsWith('text/html') ?? false;
    const set = !html ? api : c.req.path === '/graphql' ? graphiql : docsPage;
    // An HTML answer that brings its own policy (the booking voucher: inline style only) keeps it.
    const own = html ? c.res.headers.get('content-security-policy') : null;
    await set(c, noop);
    if (own) c.res.headers.set('Content-Security-Policy', own);
    if (isHttps(connectionFacts(c), deps.config.trustedProxies)) {
      c.res.headers.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
    }
  };
}

/** Request headers a browser partner may send, and response headers its code may read. */
export const CORS_ALLOW_HEADERS = [
  'Content-Type',
  'Accept',
  'X-Api-Key',
  'Authorization',
  'Idempotency-Key',
  'X-Request-Id',
  'X-Test-Scenario',
  // Yoga's CSRF prevention accepts these as proof of a preflighted request (src/graphql/plugins/csrfPrevention.ts).
  'X-GraphQL-Yoga-CSRF',
  'GraphQL-Require-Preflight',
  'Apollo-Require-Preflight',
];
export const CORS_EXPOSE_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'Location',
  'WWW-Authenticate',
  'Idempotent-Replayed',
  'Content-Disposition',
];

/**
 * CORS for browser partners and GraphiQL on other origins: CORS_ORIGINS (default * in the sandbox,
 * none in production). Credentials are headers, never cookies, so Allow-Credentials is never sent;
 * a preflight is answered here, before the credential check; refusals carry the headers too, so a
 * page can read the error.
 */
export function corsRules(deps: AppDeps): MiddlewareHandler<HttpEnv> {
  const origins = deps.config.transport.corsOrigins;
  if (origins.length === 0) return async (_c, next) => next();
  const rules = cors({
    origin: origins.includes('*') ? '*' : [...origins],
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowHeaders: CORS_ALLOW_HEADERS,
    exposeHeaders: CORS_EXPOSE_HEADERS,
    maxAge: 600,
  });
  const noop = async () => {};
  return async (c, next) => {
    // A preflight is answered by Hono's cors alone.
    if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method')) return rules(c, next);
    // Otherwise the headers go on the final answer. (Set before the handler, Hono copies the
    // handler's Response to merge them, which breaks streamed bodies such as SSE.)
    await next();
    await rules(c, noop);
  };
}

/**
 * REQUIRE_HTTPS: plain HTTP gets 403 HTTPS_REQUIRED (docs/spec/channel-api.md §5.7), unless it came on a TLS socket
 * or from a trusted proxy that says it was HTTPS. Not refused: the health routes (mounted before
 * this, for load balancers' plain probes) and the operator routes called from loopback (the admin
 * command on the host itself).
 */
export function httpsRequired(deps: AppDeps): MiddlewareHandler<HttpEnv> {
  const { trustedProxies, transport } = deps.config;
  return async (c, next) => {
    if (transport.requireHttps && !isHttps(connectionFacts(c), trustedProxies)) {
      const operatorOnHost = c.req.path.startsWith('/admin/') && isLoopback(c.get('clientIp'));
      if (!operatorOnHost) throw new HttpsRequiredError();
    }
    await next();
  };
}

/**
 * REQUEST_TIMEOUT_MS (Hono's timeout): an answer not ready by then is 504 REQUEST_TIMEOUT. The
 * work goes on (a booking is not cut off halfway at the provider). A request with an
 * Idempotency-Key is never cut off: its key would be released with the 504 while the work still
 * runs, and a retry would do it twice; such writes are bounded by the provider deadlines instead.
 * A streamed answer (SSE, content files) counts as ready when its headers are.
 */
export function requestDeadline(deps: AppDeps): MiddlewareHandler<HttpEnv> {
  const { requestTimeoutMs } = deps.config.transport;
  const deadline = timeout(requestTimeoutMs, () => new HTTPException(RequestTimeoutError.status, { cause: new RequestTimeoutError(requestTimeoutMs) }));
  return async (c, next) => (c.req.method !== 'GET' && c.req.header('idempotency-key') !== undefined ? next() : deadline(c, next));
}
