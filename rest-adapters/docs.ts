import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import {
  escapeHtml,
  HttpsRequiredError,
  InternalError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitError,
  RequestTimeoutError,
  ServiceUnavailableError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from '../src/services/kernel/index.js';
import type { Scope } from '../src/services/access/index.js';
import { errorDescriptions, v2ErrorDescriptions } from './envelope.js';
import { fitForGenerators } from './docsForGenerators.js';
import type { HttpEnv } from './env.js';

/**
 * The OpenAPI 3.1 document of a REST version and its human docs page (docs/spec/DECISIONS.md "Surfaces":
 * `/channel/v1/openapi.json` and `/channel/v1/docs`; the same beside v2). Both are served without
 * a credential: register them before the credential check.
 *
 * The document is what the routes declare (zod-openapi), completed here with what every route of
 * the service answers whatever it declares, because the middleware in front of the routes gives it:
 * 403 for plain HTTP under REQUIRE_HTTPS (and IP_NOT_ALLOWED with a credential), 413 for a body
 * over the limit (POST, PUT, PATCH), 415 for a JSON body sent as another type, 500 for a fault,
 * 503 while the instance shuts down and 504 past the request deadline, all in the error envelope; and the
 * response headers (X-Request-Id on every response, the X-RateLimit-* headers, Retry-After on 429,
 * WWW-Authenticate on 401). Then docsForGenerators.ts makes it good input for code generators
 * (error-code enums, the X-Test-Scenario header, examples, v1's webhooks section).
 * test/contract/openapi.test.ts checks real responses against the result;
 * test/contract/openapi-generators.test.ts checks what generators rely on.
 */

type Document = ReturnType<OpenAPIHono<HttpEnv>['getOpenAPI31Document']>;
type DocumentConfig = Parameters<OpenAPIHono<HttpEnv>['getOpenAPI31Document']>[0];

export interface ApiDocs {
  /** `info.title`, also the page title. */
  title: string;
  /** Which error vocabulary the added responses use. */
  errors: 'v1' | 'v2';
  /** The docs page of the other version, linked from this one. */
  otherDocs?: { label: string; href: string };
}

/** What each scope opens, for the OAuth2 security scheme of both documents (docs/spec/DECISIONS.md). */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'properties:read': 'Properties and content files',
  'roomtypes:read': 'Room types and rate plans',
  'search:availability': 'Search, rates and price checks',
  'reservations:read': 'Read bookings, fee previews and cancellation policies; with channels:write, webhook delivery logs and replays',
  'reservations:write': 'Create, modify and cancel bookings',
  'voucher:read': 'Booking vouchers',
  'channels:read': 'The channel profile',
  'channels:write': 'Change the channel profile; webhook subscriptions (their delivery logs and replays need reservations:read too)',
  'tax-invoices:read': 'Tax invoices',
};

/** GET /openapi.json, GET /docs and the page's assets, on `app` (before its credential check). */
export function apiDocumentRoutes(app: OpenAPIHono<HttpEnv>, config: DocumentConfig, docs: ApiDocs): void {
  // Built on the first request, when every route has been registered; routes never change after.
  let document: Document | undefined;
  app.get('/openapi.json', (c) => {
    document ??= completeDocument(app.getOpenAPI31Document(config), docs.errors);
    c.header('Cache-Control', 'no-cache');
    return c.json(document);
  });

  app.get('/docs', (c) => {
    c.header('Cache-Control', 'no-cache');
    return c.html(docsPage(docs));
  });
  app.get('/docs/assets/:file', (c) => {
    const asset = assets.get(c.req.param('file'));
    if (!asset) throw new NotFoundError(`No docs asset ${c.req.param('file')}`);
    return c.body(asset.body(), 200, { 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=86400' });
  });
}

// ---- completing the document ----

const ERROR_ENVELOPE = { $ref: '#/components/schemas/ErrorEnvelope' };

const HEADERS = {
  'X-Request-Id': {
    description: 'The request id, the same as meta.request_id; a UUID sent in X-Request-Id is kept',
    required: true,
    schema: { type: 'string', format: 'uuid' },
  },
  ...rateLimitHeaders(true),
  ...rateLimitHeaders(false),
  'Retry-After': {
    description: 'Seconds to wait before retrying',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'WWW-Authenticate': {
    description: 'The authentication scheme expected (RFC 6750)',
    required: true,
    schema: { type: 'string', example: 'Bearer realm="channel"' },
  },
} as const;

const headerRef = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;

/**
 * The rate-limit headers, as components: `X-RateLimit-Limit` (required) and
 * `X-RateLimit-Limit.uncharged` (may be absent), and so on. A request is charged, and its answer
 * carries them, once its credential is known and its body passed the size check: so they may be
 * absent from 401, 413, 503 and (a fault before the credential was read) 500. The OAuth endpoints
 * charge every request to its client address, before anything else they do.
 */
function rateLimitHeaders(required: boolean) {
  const suffix = required ? '' : '.uncharged';
  const when = required ? '' : ' Absent when the request was not charged (no valid credential, a body over the limit, shutting down).';
  return {
    [`X-RateLimit-Limit${suffix}`]: {
      description: `Requests allowed per window: the channel's rate_limit (the token and revocation endpoints: per client address).${when}`,
      required,
      schema: { type: 'integer', minimum: 0 },
    },
    [`X-RateLimit-Remaining${suffix}`]: {
      description: `Requests left in the current window.${when}`,
      required,
      schema: { type: 'integer', minimum: 0 },
    },
    [`X-RateLimit-Reset${suffix}`]: {
      description: `Seconds until the current window resets.${when}`,
      required,
      schema: { type: 'integer', minimum: 0 },
    },
  } as Record<`${(typeof RATE_LIMIT_HEADERS)[number]}${'' | '.uncharged'}`, { description: string; required: boolean; schema: { type: 'integer'; minimum: number } }>;
}

/** Statuses whose answer may come before the request is charged. */
const UNCHARGED = {
  secured: new Set(
    [UnauthorizedError, HttpsRequiredError, PayloadTooLargeError, InternalError, ServiceUnavailableError, RequestTimeoutError].map((e) => String(e.status)),
  ),
  open: new Set([HttpsRequiredError, PayloadTooLargeError, ServiceUnavailableError, RequestTimeoutError].map((e) => String(e.status))),
};
const BODY_METHODS = new Set(['post', 'put', 'patch']);
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface ResponseObject {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, unknown>;
}
interface OperationObject {
  security?: unknown[];
  requestBody?: { content?: Record<string, unknown> };
  responses?: Record<string, ResponseObject>;
}

const HTTPS_ONLY_403 = 'HTTPS_REQUIRED: plain HTTP is refused (REQUIRE_HTTPS)';

/** The document as served: service-wide responses and headers added, nullable references fixed. */
export function completeDocument(document: Document, errors: 'v1' | 'v2'): Document {
  const doc = structuredClone(document) as Document & { components?: Record<string, Record<string, unknown>> };
  const descriptions = errors === 'v1' ? errorDescriptions : v2ErrorDescriptions;
  doc.components ??= {};
  doc.components.headers = { ...HEADERS, ...doc.components.headers };

  for (const item of Object.values(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = (item as Record<string, OperationObject | undefined>)[method];
      if (!op) continue;
      const responses = (op.responses ??= {});
      const add = (status: number) => {
        responses[status] ??= { description: descriptions[status]!, content: { 'application/json': { schema: ERROR_ENVELOPE } } };
      };
      if (BODY_METHODS.has(method)) add(PayloadTooLargeError.status);
      const bodyTypes = Object.keys(op.requestBody?.content ?? {});
      if (bodyTypes.length === 1 && bodyTypes[0] === 'application/json') add(UnsupportedMediaTypeError.status);
      const secured = (op.security?.length ?? 0) > 0;
      // REQUIRE_HTTPS refuses plain HTTP on every route; IP allow lists refuse with the credential.
      responses[HttpsRequiredError.status] ??= { description: secured ? descriptions[HttpsRequiredError.status]! : HTTPS_ONLY_403, content: { 'application/json': { schema: ERROR_ENVELOPE } } };
      add(InternalError.status);
      add(ServiceUnavailableError.status);
      add(RequestTimeoutError.status);

      for (const [status, response] of Object.entries(responses)) {
        const headers: Record<string, unknown> = { 'X-Request-Id': headerRef('X-Request-Id') };
        const charged = !(secured ? UNCHARGED.secured : UNCHARGED.open).has(status);
        for (const name of RATE_LIMIT_HEADERS) headers[name] = headerRef(charged ? name : `${name}.uncharged`);
        if (status === String(RateLimitError.status)) headers['Retry-After'] = headerRef('Retry-After');
        if (status === String(UnauthorizedError.status) && secured) headers['WWW-Authenticate'] = headerRef('WWW-Authenticate');
        response.headers = { ...headers, ...response.headers };
      }
      // Sorted by status, as a reader expects (the generator keeps declaration order).
      op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
  fitForGenerators(doc, errors);
  return fixNullableReferences(doc);
}

/**
 * zod-to-openapi writes `.nullable()` of a named schema as `allOf: [{$ref}, {type: [object, null]}]`,
 * which no value satisfies when it is null (the reference requires an object). The intended
 * meaning is "the reference, or null": `anyOf: [{$ref}, {type: null}]`.
 */
function fixNullableReferences<T>(node: T): T {
  if (Array.isArray(node)) return node.map(fixNullableReferences) as T;
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = fixNullableReferences(value);
  const allOf = out.allOf;
  if (Array.isArray(allOf) && allOf.length === 2) {
    const [ref, rest] = allOf as [Record<string, unknown>, Record<string, unknown>];
    const type = rest.type;
    if (typeof ref.$ref === 'string' && Object.keys(ref).length === 1 && Array.isArray(type) && type.includes('null')) {
      const { type: _type, ...annotations } = rest;
      const { allOf: _allOf, ...siblings } = out;
      return { ...siblings, ...annotations, anyOf: [ref, { type: 'null' }] } as T;
    }
  }
  return out as T;
}

// ---- the docs page ----

const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

function fileAsset(name: string, type: string) {
  let cached: Uint8Array<ArrayBuffer> | undefined;
  return { type, body: () => (cached ??= new Uint8Array(readFileSync(join(swaggerUiDir, name)))) };
}

/**
 * Swagger UI from the swagger-ui-dist package, served by the service: the page needs no CDN. A Map,
 * since the name comes from the URL: `constructor` or `__proto__` must be 404 like any unknown
 * name, not a property every plain object inherits.
 */
const assets = new Map<string, { type: string; body: () => Uint8Array<ArrayBuffer> | string }>(Object.entries({
  'swagger-ui-bundle.js': fileAsset('swagger-ui-bundle.js', 'text/javascript; charset=utf-8'),
  'swagger-ui.css': fileAsset('swagger-ui.css', 'text/css; charset=utf-8'),
  'favicon-32x32.png': fileAsset('favicon-32x32.png', 'image/png'),
  'page.css': {
    type: 'text/css; charset=utf-8',
    body: () => 'body{margin:0}.channel-docs-bar{font:14px/1.4 sans-serif;padding:8px 20px;background:#1b1b1b;color:#eee}.channel-docs-bar a{color:#8fd0ff}\n',
  },
  // Not inline (nor the style above), so a Content-Security-Policy of 'self' lets the page run.
  'init.js': {
    type: 'text/javascript; charset=utf-8',
    body: () => `window.addEventListener('load', function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.dataset.spec,
    dom_id: '#swagger-ui',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    persistAuthorization: false,
    tryItOutEnabled: false,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout'
  });
});
`,
  },
}));

/**
 * The page. Relative addresses (`openapi.json`, `docs/assets/...`) resolve against the version's
 * base, so it works behind a proxy that mounts the service under another prefix.
 */
function docsPage(docs: ApiDocs): string {
  const other = docs.otherDocs
    ? ` · <a href="${escapeHtml(docs.otherDocs.href)}">${escapeHtml(docs.otherDocs.label)}</a>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(docs.title)}</title>
<link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="docs/assets/swagger-ui.css">
<link rel="stylesheet" href="docs/assets/page.css">
</head>
<body>
<div class="channel-docs-bar">${escapeHtml(docs.title)} · <a href="openapi.json">OpenAPI 3.1 document</a>${other}</div>
<div id="swagger-ui" data-spec="openapi.json"></div>
<noscript>This page needs JavaScript. The document itself is at <a href="openapi.json">openapi.json</a>.</noscript>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script src="docs/assets/init.js"></script>
</body>
</html>
`;
}
