import { Hono, type MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { secureHeaders } from 'hono/secure-headers';
import type { AppDeps } from '../src/context.js';
import { HttpsRequiredError, RequestTimeoutError, type AppError } from '../src/services/kernel/index.js';

/**
 * The transport rules in front of every surface (REST, GraphQL, docs), applied by the front
 * (rest-adapters/front.ts) in this order: security headers and CORS on every answer (errors too),
 * then HTTPS, then the shutdown gate, the body limit and the request deadline. The apps' IP allow
 * lists are checked with the credential (services/auth.ts), and the rate limit after both. Every
 * header set here is computed once, at start.
 */

/** Response headers as name/value pairs, computed once. */
export type HeaderList = readonly (readonly [name: string, value: string])[];

export interface TransportRules {
  /** Security headers of an API answer (JSON, CSV, files), of the docs pages and of GraphiQL. */
  readonly security: { readonly api: HeaderList; readonly docsPage: HeaderList; readonly graphiql: HeaderList };
  /** Sent on answers that reached us over HTTPS. */
  readonly hsts: readonly [name: string, value: string];
  /** CORS_ORIGINS (null: none, no CORS header at all). */
  readonly cors: CorsRules | null;
  /** REQUEST_TIMEOUT_MS of a request, or null when it is never cut off. */
  deadlineOf(method: string, idempotencyKey: string | undefined): number | null;
  /** The HTTPS_REQUIRED refusal of a request, or null when it may go on (`local`: Exchange.local). */
  httpsRefusal(https: boolean, path: string, local: boolean): AppError | null;
}

export interface CorsRules {
  /** Headers of an answer to a request from `origin` (the empty string when none was sent). */
  answer(origin: string): HeaderList;
  /** The whole answer to a preflight from `origin`: 204 with these headers. */
  preflight(origin: string): HeaderList;
  /** Whether `Vary: Origin` goes on every answer (a list of origins rather than *); `answer` leaves Vary out. */
  readonly varyOrigin: boolean;
}

/**
 * The rules of this configuration; `pages.graphiql` is the GraphiQL page made at start (its
 * inline script's digest goes into its policy), or null when GraphiQL is off.
 */
export async function transportRules(
  deps: Pick<AppDeps, 'config'>,
  pages: { graphiql: { readonly scriptHashes: readonly string[] } | null },
): Promise<TransportRules> {
  const { transport } = deps.config;
  const security = await securityHeaders(pages);
  const corsRules = await corsRulesOf(transport.corsOrigins);
  const { requestTimeoutMs, requireHttps } = transport;
  return {
    security,
    hsts: ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'],
    cors: corsRules,
    deadlineOf: (method, idempotencyKey) => (method !== 'GET' && idempotencyKey !== undefined ? null : requestTimeoutMs),
    httpsRefusal(https, path, local) {
      if (!requireHttps || https) return null;
      const operatorOnHost = (path.startsWith('/admin/') || path === '/metrics') && local;
      return operatorOnHost ? null : new HttpsRequiredError();
    },
  };
}

/**
 * The headers a Hono middleware sets on an answer, read once by running it on a sample request:
 * Hono's secureHeaders and cors stay the source of the header text.
 */
async function headersOf(middleware: MiddlewareHandler, init: RequestInit = {}): Promise<HeaderList> {
  const app = new Hono();
  app.use('*', middleware);
  app.all('*', (c) => c.body(null, 200));
  const response = await app.request('http://localhost/', init);
  return [...response.headers].filter(([name]) => name !== 'content-type' && name !== 'content-length');
}

/**
 * Security headers on every answer (Hono's secureHeaders): nosniff, no framing, no referrer, and
 * Strict-Transport-Security on answers sent over HTTPS. API answers (JSON, CSV, files) get
 * `default-src 'none'`: nothing in them may run if a browser renders one. The HTML pages get
 * what they need: the docs page loads only its own assets; GraphiQL (when `pages.graphiql`, the
 * page made at start) runs its one inline script, known by its digest, and loads nothing from
 * elsewhere; an HTML answer that sets its own policy (the booking voucher: one inline style,
 * nothing else) keeps it.
 */
async function securityHeaders(pages: { graphiql: { readonly scriptHashes: readonly string[] } | null }): Promise<TransportRules['security']> {
  const common = {
    crossOriginResourcePolicy: 'same-site',
    xFrameOptions: 'DENY',
    strictTransportSecurity: false,
    // Hono's default also sets X-XSS-Protection: 0 and the others; kept.
  } as const;
  const api = await headersOf(
    secureHeaders({
      ...common,
      contentSecurityPolicy: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
    }),
  );
  const docsPage = await headersOf(
    secureHeaders({
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
    }),
  );
  // GraphiQL (src/graphql/graphiql/page.ts): its one inline script by digest, computed when the page
  // was made at start; nothing from another origin, no eval. Styles need 'unsafe-inline': the editor
  // (Monaco) adds <style> elements of changing text (theme, icons) without a nonce, and style
  // attributes, at run time; a digest in style-src would switch 'unsafe-inline' off and refuse them
  // (about 300 violations in Chromium). Fonts and images are data: URLs in the inline stylesheet;
  // the editor's workers start from blob: URLs; queries and subscriptions (SSE) are fetches to the
  // service itself.
  const graphiql = pages.graphiql
    ? await headersOf(
        secureHeaders({
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
        }),
      )
    : api;
  return { api, docsPage, graphiql };
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
 * a preflight is answered by the front, before the credential check; refusals carry the headers
 * too, so a page can read the error. The headers are Hono's cors middleware's, computed once per
 * listed origin (and once for any other origin).
 */
async function corsRulesOf(origins: readonly string[]): Promise<CorsRules | null> {
  if (origins.length === 0) return null;
  const any = origins.includes('*');
  const rules = cors({
    origin: any ? '*' : [...origins],
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowHeaders: CORS_ALLOW_HEADERS,
    exposeHeaders: CORS_EXPOSE_HEADERS,
    maxAge: 600,
  });
  const of = async (origin: string) => {
    const headers: Record<string, string> = origin ? { origin } : {};
    return {
      // Vary is the front's to write (`varyOrigin`), added to the handler's own with any other names.
      answer: (await headersOf(rules, { headers })).filter(([name]) => name !== 'vary'),
      preflight: await headersOf(rules, { method: 'OPTIONS', headers: { ...headers, 'access-control-request-method': 'POST' } }),
    };
  };
  const other = await of('');
  const listed = new Map(any ? [] : await Promise.all(origins.map(async (origin) => [origin, await of(origin)] as const)));
  return {
    answer: (origin) => (listed.get(origin) ?? other).answer,
    preflight: (origin) => (listed.get(origin) ?? other).preflight,
    varyOrigin: !any,
  };
}

/**
 * REQUEST_TIMEOUT_MS: an answer not ready by then is 504 REQUEST_TIMEOUT. The work goes on (a
 * booking is not cut off halfway at the provider). A request with an Idempotency-Key is never cut
 * off: its key would be released with the 504 while the work still runs, and a retry would do it
 * twice; such writes are bounded by the provider deadlines instead. A streamed answer (SSE,
 * content files) counts as ready when its headers are. Resolves with the answer, or with
 * `late()` when the deadline passes first.
 */
export function withDeadline<T>(answer: Promise<T>, ms: number | null, late: (error: RequestTimeoutError) => T): Promise<T> {
  if (ms === null) return answer;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(late(new RequestTimeoutError(ms))), ms);
  });
  return Promise.race([answer, deadline]).finally(() => clearTimeout(timer));
}
