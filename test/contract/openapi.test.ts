import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { SCOPES, type Scope } from '../../src/services/access/index.js';
import { day, v1 } from '../helpers/flow.js';
import { apiKey, startTestService, uniqueIp, type TestService } from '../helpers/service.js';
import { checkAnswer, documentAjv, pointer, resolve, undeclared } from '../helpers/openapi.js';

/**
 * The OpenAPI 3.1 documents of v1 and v2 (docs/spec/channel-api.md §9, docs/spec/DECISIONS.md "Surfaces"): both are valid
 * OpenAPI 3.1, and every documented route, called for real, answers only statuses its document
 * lists, each with a body that fits the document's schema for that status (no undocumented field
 * either) and the documented headers. Every route is driven to its success, its 401 and at least
 * one other 4xx; every route is also seen answering 403, 429, 500 and 503 (and 413/415 where it takes
 * a body). A last test checks that coverage, so a new route cannot go unchecked. The docs pages
 * render the documents from assets the service serves itself.
 */

type Version = 'v1' | 'v2';
const BASE: Record<Version, string> = { v1: '/channel/v1', v2: '/api/channel/v2' };
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Operation {
  version: Version;
  method: string;
  template: string;
  op: Json;
}

let t: TestService;
let production: TestService;
let owner: IssuedCredentials;
let payer: IssuedCredentials;
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);
const docs = {} as Record<Version, Json>;
const ajv = documentAjv();
/** Statuses seen per operation (`v1 GET /bookings/{id}`). */
const seen = new Map<string, Set<number>>();

const docId = (version: Version) => `https://channel.test${BASE[version]}/openapi.json`;
const opKey = (version: Version, method: string, template: string) => `${version} ${method.toUpperCase()} ${template}`;

/** The OAuth endpoints: client authentication instead of a credential, errors in the RFC 6749 form. */
const OAUTH = new Set(['/oauth/token', '/oauth/revoke']);

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const version of ['v1', 'v2'] as const) {
    for (const [template, item] of Object.entries<Json>(docs[version].paths)) {
      for (const method of METHODS) if (item[method]) out.push({ version, method: method.toUpperCase(), template, op: item[method] });
    }
  }
  return out;
}

// ---- checking a response against the document ----

function validatorAt(version: Version, segments: string[]): ValidateFunction {
  const ref = docId(version) + pointer(segments);
  const validate = ajv.getSchema(ref);
  if (!validate) throw new Error(`no schema at ${ref}`);
  return validate;
}

interface Answer {
  status: number;
  body: Json;
  text: string;
  headers: Headers;
}

interface CallOptions {
  /** Values of the template's path parameters. */
  params?: Record<string, string>;
  /** Query string without `?`. */
  query?: string;
  /** The whole path (a v2 link's href) instead of the template filled in. */
  href?: string;
  /** Credential headers; the owner's API key by default, `{}` for none. */
  as?: Record<string, string>;
  headers?: Record<string, string>;
  /** A JSON body. */
  json?: unknown;
  /** A raw body with its content type. */
  raw?: { body: string; type?: string };
  service?: TestService;
  /** The client address (the token endpoint limits per address). */
  ip?: string;
}

/**
 * Calls a documented operation and checks the answer against its document: the status is listed,
 * the content type is one the status lists, the body fits that schema and declares every field,
 * required headers are there and every documented header that is there fits its schema.
 */
async function call(version: Version, method: string, template: string, options: CallOptions = {}): Promise<Answer> {
  const doc = docs[version];
  const lower = method.toLowerCase();
  const op = doc.paths[template]?.[lower];
  expect(op, `${method} ${BASE[version]}${template} is documented`).toBeDefined();
  const fill = () =>
    template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = options.params?.[name];
      if (value === undefined) throw new Error(`no value for {${name}} of ${template}`);
      return encodeURIComponent(value);
    });
  const path = options.href ?? `${BASE[version]}${fill()}${options.query ? `?${options.query}` : ''}`;
  const headers: Record<string, string> = { ...(options.as ?? apiKey(owner)), ...options.headers };
  // A route called with the sandbox's scenario header declares it.
  if (Object.keys(options.headers ?? {}).some((h) => h.toLowerCase() === 'x-test-scenario')) {
    const declared = ((op.parameters ?? []) as Json[]).map((p) => resolve(doc, p)).some((p) => p.in === 'header' && p.name === 'X-Test-Scenario');
    expect(declared, `${method} ${template} declares X-Test-Scenario`).toBe(true);
  }
  let body: string | undefined;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  } else if (options.raw) {
    body = options.raw.body;
    if (options.raw.type) headers['content-type'] = options.raw.type;
  }
  const res = await (options.service ?? t).request(path, { method, headers, body, ...(options.ip && { ip: options.ip }) });
  // The headers as an HTTP client gets them, before the body. (In process, a streamed response's
  // headers read after its body lose those a middleware set after the handler; over HTTP they
  // are sent.)
  const received = new Headers(res.headers);
  const text = await res.text();
  const where = `${method} ${path.slice(0, 160)} → ${res.status}`;

  const parsed = checkAnswer(ajv, doc, docId(version), template, method, { status: res.status, headers: received, text }, where);

  const key = opKey(version, method, template);
  if (!seen.has(key)) seen.set(key, new Set());
  seen.get(key)!.add(res.status);
  return { status: res.status, body: parsed, text, headers: received };
}

/** Calls and expects a status (and, for the envelope, a code). */
async function expectAnswer(version: Version, method: string, template: string, status: number, code: string | null, options: CallOptions = {}): Promise<Answer> {
  const answer = await call(version, method, template, options);
  const got = { status: answer.status, code: code === null ? null : (answer.body?.error?.code ?? answer.body?.error) };
  expect(got, `${method} ${template}: ${answer.text.slice(0, 300)}`).toEqual({ status, code });
  return answer;
}

// ---- generic values, for the sweeps that do not depend on them ----

const SAMPLE_PARAMS: Record<string, string> = { id: '1', propertyId: '1', roomId: 'r', rateId: 'r', delivery_id: '1', booking_id: '1' };
function sampleQuery(op: Json): string {
  const values: Record<string, string> = { checkin: day(30), checkout: day(31), adults: '2', occupancy: '2', property_id: '1', token: 'x' };
  return ((op.parameters ?? []) as Json[])
    .filter((p) => p.in === 'query' && p.required)
    .map((p) => `${p.name}=${encodeURIComponent(values[p.name] ?? 'x')}`)
    .join('&');
}
function sampleCall({ op }: Operation): CallOptions {
  return { params: SAMPLE_PARAMS, query: sampleQuery(op) };
}

/** A bearer token of `owner` that carries only `scope` (one, or several separated by spaces). */
async function tokenWith(scope: string): Promise<string> {
  const res = await t.request('/channel/v1/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: owner.client_id, client_secret: owner.client_secret, scope }).toString(),
  });
  expect(res.status).toBe(200);
  return (await res.json()).access_token;
}

beforeAll(async () => {
  [t, production] = await Promise.all([
    startTestService({}, { clock }),
    startTestService({ CHANNEL_ENV: 'production', REQUIRE_HTTPS: 'false' }, { clock }),
  ]);
  owner = await t.channel({ name: 'Docs Owner', tier: 'starter' });
  payer = await production.channel({ name: 'Docs Payer', tier: 'starter', balance: 1_000n });
  for (const version of ['v1', 'v2'] as const) {
    const res = await t.request(`${BASE[version]}/openapi.json`);
    expect(res.status).toBe(200);
    docs[version] = await res.json();
    ajv.addSchema(docs[version], docId(version));
  }
}, 120_000);

afterAll(async () => {
  await Promise.all([t?.close(), production?.close()]);
});

describe('the documents', () => {
  it.each(['v1', 'v2'] as const)('%s is a valid OpenAPI 3.1 document', async (version) => {
    const validator = new Validator();
    const result = await validator.validate(docs[version]);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)?.slice(0, 3000)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // Every schema compiles as JSON Schema 2020-12 (the dialect of OpenAPI 3.1).
    for (const name of Object.keys(docs[version].components.schemas)) {
      expect(() => validatorAt(version, ['components', 'schemas', name]), name).not.toThrow();
    }
  });

  it('v1: version 1.0.0, both security schemes, the token endpoint, deprecated markers', () => {
    const doc = docs.v1;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/channel/v1' })]);
    expect(doc.components.securitySchemes.ApiKeyAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Api-Key' });
    expect(doc.components.securitySchemes.OAuth2).toMatchObject({
      type: 'oauth2',
      flows: { clientCredentials: { tokenUrl: '/channel/v1/oauth/token' } },
    });
    expect(Object.keys(doc.components.securitySchemes.OAuth2.flows.clientCredentials.scopes)).toEqual([...SCOPES]);
    const token = doc.paths['/oauth/token'].post;
    expect(token.security ?? []).toEqual([]);
    expect(Object.keys(token.requestBody.content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    expect(Object.keys(token.responses)).toEqual(['200', '400', '401', '403', '413', '429', '500', '503', '504']);
    // RFC 7009 revocation beside it: the same client authentication, bodies and answers.
    const revoke = doc.paths['/oauth/revoke'].post;
    expect(revoke.security ?? []).toEqual([]);
    expect(Object.keys(revoke.requestBody.content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    expect(Object.keys(revoke.responses)).toEqual(['200', '400', '401', '403', '413', '429', '500', '503', '504']);
    expect(revoke.responses['200'].content).toBeUndefined();
    expect(revoke.responses['200'].headers['Cache-Control']).toMatchObject({ required: true });
    expect(doc.paths['/bookings/{id}/voucher'].get.deprecated).toBe(true);
    expect(doc.paths['/tax-invoices'].get.deprecated).toBe(true);
    const deprecated = operations().filter((o) => o.op.deprecated).map((o) => `${o.version} ${o.method} ${o.template}`);
    expect(deprecated).toEqual(['v1 GET /bookings/{id}/voucher', 'v1 GET /tax-invoices']);
  });

  it('v1 documents every endpoint of the specification (§4.1 to §4.5, §4.7, §4.8), the app and the webhook routes', () => {
    const documented = operations().filter((o) => o.version === 'v1').map((o) => `${o.method} ${o.template}`);
    expect(documented.sort()).toEqual(
      [
        'POST /oauth/token',
        'POST /oauth/revoke',
        'GET /channels/me',
        'PUT /channels/me',
        'GET /apps/me',
        'PUT /apps/me/ip-allow-list',
        'GET /properties',
        'GET /properties/{id}',
        'GET /properties/{id}/roomtypes',
        'GET /properties/{id}/rateplans',
        'GET /content/files/catalog',
        'GET /content/files/content',
        'GET /search/availability',
        'GET /search/availability/{propertyId}',
        'GET /search/rates',
        'GET /search/price-check',
        'POST /bookings',
        'GET /bookings',
        'GET /bookings/{id}',
        'PATCH /bookings/{id}',
        'GET /bookings/{id}/cancellation-fee',
        'GET /bookings/{id}/cancellation-policy',
        'PUT /bookings/{id}/cancel',
        'GET /bookings/{id}/voucher',
        'GET /tax-invoices',
        'POST /search/rates/batch',
        'POST /reservations',
        'GET /reservations',
        'GET /reservations/{id}',
        'PATCH /reservations/{id}',
        'POST /reservations/{id}/cancel',
        'DELETE /reservations/{id}/rooms/{booking_id}',
        'GET /reservations/{id}/voucher',
        'POST /reservations/{id}/send-voucher',
        'POST /reservations/{id}/modify-dates',
        'GET /reservations/{id}/cancellation-fee',
        'POST /webhooks',
        'GET /webhooks',
        'GET /webhooks/{id}',
        'PATCH /webhooks/{id}',
        'DELETE /webhooks/{id}',
        'POST /webhooks/{id}/ping',
        'GET /webhooks/{id}/deliveries',
        'GET /webhooks/{id}/deliveries/{delivery_id}',
        'POST /webhooks/{id}/deliveries/{delivery_id}/replay',
      ].sort(),
    );
  });

  it('v2 documents the steps and content routes of §4.6, with its own version and envelope', () => {
    const doc = docs.v2;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('2.0.0');
    expect(doc.servers).toEqual([{ url: '/api/channel/v2' }]);
    const documented = operations().filter((o) => o.version === 'v2').map((o) => `${o.method} ${o.template}`);
    expect(documented.sort()).toEqual(
      [
        'GET /properties',
        'GET /properties/{id}',
        'GET /properties/{id}/roomtypes',
        'GET /properties/availability',
        'GET /properties/{propertyId}/rooms/{roomId}/rates/{rateId}',
        'POST /bookings',
        'GET /bookings/retrieve',
        'PUT /bookings/cancel',
      ].sort(),
    );
    // v2 success bodies are not wrapped in `data`; its 400 is INVALID_REQUEST.
    expect(doc.paths['/properties/{id}'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PropertyV2' });
    expect(doc.paths['/properties'].get.responses['400'].description).toMatch(/^INVALID_REQUEST/);
  });

  it('every authenticated operation declares its scope and lists 401, 403, 429, 500 and 503; bodies add 413 and 415', () => {
    for (const { version, method, template, op } of operations()) {
      const name = `${version} ${method} ${template}`;
      const statuses = Object.keys(op.responses);
      expect(statuses, name).toEqual(expect.arrayContaining(['429', '500', '503']));
      expect(statuses, `${name}: sorted`).toEqual([...statuses].sort());
      expect(op.summary, name).toBeTruthy();
      if (!OAUTH.has(template)) {
        const scopes = op['x-required-scopes'];
        expect(scopes.length, name).toBeGreaterThan(0);
        for (const scope of scopes) expect(SCOPES, name).toContain(scope);
        expect(op.security, name).toEqual([{ ApiKeyAuth: [] }, { OAuth2: scopes }]);
        expect(statuses, name).toEqual(expect.arrayContaining(['401', '403']));
        expect(op.responses['401'].headers['WWW-Authenticate'], name).toBeDefined();
      }
      if (['POST', 'PUT', 'PATCH'].includes(method)) expect(statuses, name).toContain('413');
      const bodyTypes = Object.keys(op.requestBody?.content ?? {});
      if (bodyTypes.length === 1 && bodyTypes[0] === 'application/json') expect(statuses, name).toContain('415');
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        expect(response.headers?.['X-Request-Id'], `${name} ${status}`).toBeDefined();
        if (status === '429') expect(response.headers['Retry-After'], `${name} 429`).toBeDefined();
        if (Number(status) >= 400 && !OAUTH.has(template)) {
          const schema = response.content?.['application/json']?.schema;
          // The error envelope, its code narrowed to the codes this route answers with this status.
          expect(schema.allOf?.[0], `${name} ${status}: the error envelope`).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
          expect(schema.allOf[1].properties.error.properties.code.enum.length, `${name} ${status}: its codes`).toBeGreaterThan(0);
        }
      }
    }
  });

  it("a webhook's delivery log, one delivery and a replay need channels:write and reservations:read; its other routes channels:write", () => {
    const paths = docs.v1.paths;
    const both = ['channels:write', 'reservations:read'];
    for (const op of [
      paths['/webhooks/{id}/deliveries'].get,
      paths['/webhooks/{id}/deliveries/{delivery_id}'].get,
      paths['/webhooks/{id}/deliveries/{delivery_id}/replay'].post,
    ]) {
      expect(op.security).toEqual([{ ApiKeyAuth: [] }, { OAuth2: both }]);
      expect(op['x-required-scopes']).toEqual(both);
    }
    for (const op of [paths['/webhooks'].get, paths['/webhooks'].post, paths['/webhooks/{id}'].patch, paths['/webhooks/{id}/ping'].post]) {
      expect(op['x-required-scopes']).toEqual(['channels:write']);
    }
  });

  it('the checker refuses a body that does not fit its schema, and a field its schema does not declare', async () => {
    const res = await t.request('/channel/v1/channels/me', { headers: apiKey(owner) });
    const body = await res.json();
    const schemaPath = ['paths', '/channels/me', 'get', 'responses', '200', 'content', 'application/json', 'schema'];
    const schema = docs.v1.paths['/channels/me'].get.responses['200'].content['application/json'].schema;
    const validate = validatorAt('v1', schemaPath);
    expect(validate(body)).toBe(true);
    expect(undeclared(docs.v1, schema, body, '$')).toEqual([]);
    expect(validate({ ...body, data: { ...body.data, tier: 'gold' } })).toBe(false);
    expect(validate({ ...body, meta: { ...body.meta, request_id: 'not-a-uuid' } })).toBe(false);
    const { name: _name, ...nameless } = body.data;
    expect(validate({ ...body, data: nameless })).toBe(false);
    expect(undeclared(docs.v1, schema, { ...body, data: { ...body.data, rate_limit: { ...body.data.rate_limit, burst: 1 } }, extra: true }, '$'))
      .toEqual(['$.data.rate_limit.burst', '$.extra']);
    // Records (error details, webhook payload data) stay open.
    const envelope = { $ref: '#/components/schemas/ErrorEnvelope' };
    expect(undeclared(docs.v1, envelope, { error: { code: 'X', message: 'm', details: { anything: 1 } }, meta: body.meta }, '$')).toEqual([]);
  });

  it('a nullable reference is "the reference or null", never an allOf no null satisfies', () => {
    for (const version of ['v1', 'v2'] as const) {
      const text = JSON.stringify(docs[version]);
      const broken = [...text.matchAll(/"allOf":\[\{"\$ref":"[^"]+"\},\{"type":\[[^\]]*"null"\]/g)];
      expect(broken.map((m) => m[0]), version).toEqual([]);
    }
    const pricing = docs.v1.components.schemas.PriceCheck.properties.pricing;
    expect(pricing.anyOf).toEqual([{ $ref: '#/components/schemas/Pricing' }, { type: 'null' }]);
  });
});

describe('the documents and the docs pages are served without a credential', () => {
  it.each(['v1', 'v2'] as const)('%s: the page renders the document from assets the service serves', async (version) => {
    const page = await t.request(`${BASE[version]}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('x-request-id')).toBeTruthy();
    const html = await page.text();
    expect(html).toContain('data-spec="openapi.json"');
    // Nothing from another host: the page needs no CDN.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const assets = [...html.matchAll(/(?:src|href)="(docs\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(expect.arrayContaining(['docs/assets/swagger-ui-bundle.js', 'docs/assets/swagger-ui.css', 'docs/assets/init.js']));
    for (const asset of assets) {
      const res = await t.request(`${BASE[version]}/${asset}`);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get('content-type'), asset).toMatch(/^(text\/javascript|text\/css|image\/png)/);
      expect((await res.arrayBuffer()).byteLength, asset).toBeGreaterThan(100);
    }
    const init = await (await t.request(`${BASE[version]}/docs/assets/init.js`)).text();
    expect(init).toContain('validatorUrl: null'); // no call to the public validator either
    const missing = await t.request(`${BASE[version]}/docs/assets/nothing.js`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('NOT_FOUND');
    const document = await t.request(`${BASE[version]}/openapi.json`);
    expect(document.status).toBe(200);
    expect(document.headers.get('content-type')).toMatch(/^application\/json/);
  });

  // Issue 15, finding 8: the asset table was a plain object, so these names found Object.prototype's
  // members and the request failed with 500 INTERNAL_ERROR, without any credential.
  it.each(['v1', 'v2'] as const)('%s: an asset named after an Object.prototype member is 404 NOT_FOUND in the envelope', async (version) => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__']) {
      const res = await t.request(`${BASE[version]}/docs/assets/${name}`);
      expect(res.status, name).toBe(404);
      const body = await res.json();
      expect(body.error, name).toMatchObject({ code: 'NOT_FOUND', message: `No docs asset ${name}` });
      expect(body.meta.request_id, name).toBe(res.headers.get('x-request-id'));
    }
  });
});

describe('every route answers only what its document lists', () => {
  it('401 without a credential and with a bad key, on every authenticated route', async () => {
    for (const o of operations()) {
      if (OAUTH.has(o.template)) continue;
      const refused: Record<string, string>[] = [{}, { 'x-api-key': 'ck_not_a_key' }, { authorization: 'Bearer oat_unknown' }];
      for (const as of refused) {
        await expectAnswer(o.version, o.method, o.template, 401, 'UNAUTHORIZED', { ...sampleCall(o), as });
      }
    }
  });

  it('403 INSUFFICIENT_SCOPE with a token lacking a route scope (the others held), naming it, on every authenticated route', async () => {
    const tokens = new Map<string, string>();
    for (const o of operations()) {
      if (OAUTH.has(o.template)) continue;
      const required = o.op['x-required-scopes'] as Scope[];
      for (const scope of required) {
        const rest = required.filter((s) => s !== scope);
        const held = (rest.length ? rest : [SCOPES.find((s) => s !== scope)!]).join(' ');
        if (!tokens.has(held)) tokens.set(held, await tokenWith(held));
        const answer = await expectAnswer(o.version, o.method, o.template, 403, 'INSUFFICIENT_SCOPE', {
          ...sampleCall(o),
          as: { authorization: `Bearer ${tokens.get(held)}` },
        });
        expect(answer.body.error.details).toEqual({ required_scope: scope });
      }
    }
  });

  it('413 for a body over the limit, on every route that takes one', async () => {
    const huge = 'x'.repeat(t.config.bodyLimitBytes + 1);
    for (const o of operations()) {
      if (!['POST', 'PUT', 'PATCH'].includes(o.method)) continue;
      await expectAnswer(o.version, o.method, o.template, 413, 'PAYLOAD_TOO_LARGE', { ...sampleCall(o), raw: { body: huge, type: 'application/json' } });
    }
  });

  it('415 for a JSON body sent as another type, on every route whose body is JSON', async () => {
    for (const o of operations()) {
      const types = Object.keys(o.op.requestBody?.content ?? {});
      if (types.length !== 1 || types[0] !== 'application/json') continue;
      const answer = await call(o.version, o.method, o.template, { ...sampleCall(o), raw: { body: '{}', type: 'text/plain' } });
      expect(answer.status, `${o.method} ${o.template}`).toBe(415);
      expect(answer.body, `${o.method} ${o.template}`).toMatchObject({ error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
    }
  });

  it("429 RATE_LIMIT_EXCEEDED with Retry-After past the channel's limit, on every authenticated route", async () => {
    const limited = await t.channel({ name: 'Docs Limited', rateLimit: { sandbox: 1 } });
    await expectAnswer('v1', 'GET', '/channels/me', 200, null, { as: apiKey(limited) });
    for (const o of operations()) {
      if (OAUTH.has(o.template)) continue;
      const answer = await expectAnswer(o.version, o.method, o.template, 429, 'RATE_LIMIT_EXCEEDED', { ...sampleCall(o), as: apiKey(limited) });
      expect(answer.headers.get('x-ratelimit-remaining'), `${o.method} ${o.template}`).toBe('0');
    }
  });

  it('403 HTTPS_REQUIRED from an instance with REQUIRE_HTTPS over plain HTTP, on every route', async () => {
    const strict = await startTestService({ REQUIRE_HTTPS: 'true' });
    try {
      const creds = await strict.channel({ name: 'Plain HTTP' });
      for (const o of operations()) {
        await expectAnswer(o.version, o.method, o.template, 403, 'HTTPS_REQUIRED', { ...sampleCall(o), service: strict, as: apiKey(creds) });
      }
    } finally {
      await strict.close();
    }
  });

  it('503 SERVICE_UNAVAILABLE from an instance shutting down, on every route', async () => {
    const closing = await startTestService();
    await closing.close();
    for (const o of operations()) {
      const body = ['POST', 'PUT', 'PATCH'].includes(o.method) ? { json: {} } : {};
      await expectAnswer(o.version, o.method, o.template, 503, 'SERVICE_UNAVAILABLE', { ...sampleCall(o), service: closing, ...body });
    }
  });

  it('500 INTERNAL_ERROR (the token endpoint: server_error) from a service whose database fails, on every route', async () => {
    const broken = await startTestService();
    const creds = await broken.channel({ name: 'Broken' });
    await broken.service.deps.db.runScript('DROP TABLE "api_keys" CASCADE; DROP TABLE "access_tokens" CASCADE');
    for (const o of operations()) {
      if (OAUTH.has(o.template)) {
        await expectAnswer('v1', 'POST', o.template, 500, 'server_error', {
          service: broken,
          as: {},
          json: { grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret, token: 'oat_x' },
        });
        continue;
      }
      await expectAnswer(o.version, o.method, o.template, 500, 'INTERNAL_ERROR', { ...sampleCall(o), service: broken, as: apiKey(creds) });
    }
    await broken.close().catch(() => {});
  });
});

describe('v1 routes, called for real', () => {
  const V = 'v1';

  it('POST /oauth/token: 200, 400, 401 and 429 in the OAuth form', async () => {
    const form = (fields: Record<string, string>, ip?: string): CallOptions => ({
      as: {},
      raw: { body: new URLSearchParams(fields).toString(), type: 'application/x-www-form-urlencoded' },
      ...(ip && { ip }),
    });
    const good = { grant_type: 'client_credentials', client_id: owner.client_id, client_secret: owner.client_secret };
    const ok = await expectAnswer(V, 'POST', '/oauth/token', 200, null, form(good));
    expect(ok.body).toMatchObject({ token_type: 'Bearer', expires_in: 1800, access_token: expect.stringMatching(/^oat_/) });
    await expectAnswer(V, 'POST', '/oauth/token', 200, null, { as: {}, json: good });
    await expectAnswer(V, 'POST', '/oauth/token', 400, 'unsupported_grant_type', form({ ...good, grant_type: 'password' }));
    await expectAnswer(V, 'POST', '/oauth/token', 400, 'invalid_scope', form({ ...good, scope: 'everything' }));
    await expectAnswer(V, 'POST', '/oauth/token', 400, 'invalid_request', { as: {}, raw: { body: 'x', type: 'text/plain' } });
    await expectAnswer(V, 'POST', '/oauth/token', 401, 'invalid_client', form({ ...good, client_secret: 'wrong' }));

    // 20 per 60 s per address: the 21st from one address is 429 with Retry-After.
    const ip = uniqueIp();
    for (let i = 0; i < 20; i++) await expectAnswer(V, 'POST', '/oauth/token', 401, 'invalid_client', form({ ...good, client_secret: 'wrong' }, ip));
    const over = await expectAnswer(V, 'POST', '/oauth/token', 429, 'rate_limit_exceeded', form(good, ip));
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('POST /oauth/revoke: 200 (no content), 400, 401, 403 and 429 in the OAuth form', async () => {
    const form = (fields: Record<string, string>, ip = uniqueIp(), headers: Record<string, string> = {}): CallOptions => ({
      as: headers,
      raw: { body: new URLSearchParams(fields).toString(), type: 'application/x-www-form-urlencoded' },
      ip,
    });
    const client = { client_id: owner.client_id, client_secret: owner.client_secret };
    const issued = await t.request('/channel/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...client }).toString(),
      ip: uniqueIp(),
    });
    const { access_token } = await issued.json();
    const done = await expectAnswer(V, 'POST', '/oauth/revoke', 200, null, form({ ...client, token: access_token }));
    expect(done.text).toBe('');
    expect((await call(V, 'GET', '/channels/me', { as: { authorization: `Bearer ${access_token}` } })).status).toBe(401);
    await expectAnswer(V, 'POST', '/oauth/revoke', 200, null, { as: {}, json: { ...client, token: 'oat_unknown', token_type_hint: 'refresh_token' } });
    const basic = { authorization: `Basic ${Buffer.from(`${owner.client_id}:${owner.client_secret}`).toString('base64')}` };
    await expectAnswer(V, 'POST', '/oauth/revoke', 200, null, form({ token: 'oat_unknown' }, uniqueIp(), basic));
    await expectAnswer(V, 'POST', '/oauth/revoke', 400, 'invalid_request', form(client));
    await expectAnswer(V, 'POST', '/oauth/revoke', 400, 'unsupported_token_type', form({ ...client, token: owner.api_key }));
    await expectAnswer(V, 'POST', '/oauth/revoke', 401, 'invalid_client', form({ ...client, client_secret: 'wrong', token: 'oat_x' }));

    // The app's IP allow list, after client authentication: access_denied in the OAuth form.
    const listed = await t.channel({ name: 'Docs Listed' });
    await t.service.deps.db.prisma.app.update({ where: { id: listed.app_id }, data: { ipAllowList: ['203.0.113.7'] } });
    await expectAnswer(V, 'POST', '/oauth/revoke', 403, 'access_denied', form({ client_id: listed.client_id, client_secret: listed.client_secret, token: 'oat_x' }));

    // One limit with the token endpoint: 20 per 60 s per address.
    const ip = uniqueIp();
    for (let i = 0; i < 20; i++) await expectAnswer(V, 'POST', '/oauth/revoke', 200, null, form({ ...client, token: `oat_${i}` }, ip));
    const over = await expectAnswer(V, 'POST', '/oauth/revoke', 429, 'rate_limit_exceeded', form({ ...client, token: 'oat_x' }, ip));
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    await expectAnswer(V, 'POST', '/oauth/token', 429, 'rate_limit_exceeded', form({ grant_type: 'client_credentials', ...client }, ip));
  });

  it('GET and PUT /channels/me', async () => {
    const me = await expectAnswer(V, 'GET', '/channels/me', 200, null);
    expect(me.body.data.user_id).toBe(owner.user_id);
    await expectAnswer(V, 'PUT', '/channels/me', 200, null, { json: { company: 'Docs Inc.', bank_account: { bank_name: 'Bank', bank_code: '004', account_number: '1234567890', account_holder: 'Docs Inc.' } } });
    await expectAnswer(V, 'PUT', '/channels/me', 200, null, { json: { bank_account: null } });
    await expectAnswer(V, 'PUT', '/channels/me', 400, 'VALIDATION_ERROR', { json: {} });
    await expectAnswer(V, 'PUT', '/channels/me', 400, 'VALIDATION_ERROR', { json: { tier: 'starter' } });
    await expectAnswer(V, 'PUT', '/channels/me', 400, 'VALIDATION_ERROR', { raw: { body: '{"name":', type: 'application/json' } });
  });

  it('GET /apps/me and PUT /apps/me/ip-allow-list', async () => {
    const me = await expectAnswer(V, 'GET', '/apps/me', 200, null);
    expect(me.body.data.app_id).toBe(owner.app_id);
    const ip = '198.51.100.7';
    const set = await expectAnswer(V, 'PUT', '/apps/me/ip-allow-list', 200, null, { ip, json: { ip_allow_list: [ip, '2001:db8::/32'] } });
    expect(set.body.data.ip_allow_list).toEqual([ip, '2001:db8::/32']);
    await expectAnswer(V, 'PUT', '/apps/me/ip-allow-list', 400, 'VALIDATION_ERROR', { ip, json: { ip_allow_list: ['198.51.100.7/24'] } });
    await expectAnswer(V, 'PUT', '/apps/me/ip-allow-list', 400, 'VALIDATION_ERROR', { ip, json: {} });
    await expectAnswer(V, 'PUT', '/apps/me/ip-allow-list', 422, 'IP_ALLOW_LIST_LOCKOUT', { ip, json: { ip_allow_list: ['2001:db8::/32'] } });
    // Back to any address: the other tests call from their own.
    await expectAnswer(V, 'PUT', '/apps/me/ip-allow-list', 200, null, { ip, json: { ip_allow_list: [] } });
  });

  it('properties, room types and rate plans', async () => {
    const list = await expectAnswer(V, 'GET', '/properties', 200, null);
    expect(list.body.data.length).toBeGreaterThan(0);
    const id = String(list.body.data[0].id);
    await expectAnswer(V, 'GET', '/properties/{id}', 200, null, { params: { id } });
    await expectAnswer(V, 'GET', '/properties/{id}', 400, 'VALIDATION_ERROR', { params: { id: 'abc' } });
    await expectAnswer(V, 'GET', '/properties/{id}', 404, 'NOT_FOUND', { params: { id: '999999' } });
    const rooms = await expectAnswer(V, 'GET', '/properties/{id}/roomtypes', 200, null, { params: { id } });
    await expectAnswer(V, 'GET', '/properties/{id}/roomtypes', 404, 'NOT_FOUND', { params: { id: '999999' } });
    await expectAnswer(V, 'GET', '/properties/{id}/roomtypes', 400, 'VALIDATION_ERROR', { params: { id: '-1' } });
    await expectAnswer(V, 'GET', '/properties/{id}/rateplans', 200, null, { params: { id } });
    await expectAnswer(V, 'GET', '/properties/{id}/rateplans', 200, null, { params: { id }, query: `roomtype_id=${rooms.body.data[0].id}` });
    await expectAnswer(V, 'GET', '/properties/{id}/rateplans', 404, 'NOT_FOUND', { params: { id }, query: 'roomtype_id=nope' });
    await expectAnswer(V, 'GET', '/properties/{id}/rateplans', 400, 'VALIDATION_ERROR', { params: { id: '1.5' } });
    // The provider failing (the sandbox scenario), for properties not in the content cache yet.
    const failing = { headers: { 'x-test-scenario': 'upstream_error' } };
    await expectAnswer(V, 'GET', '/properties', 502, 'UPSTREAM_ERROR', failing);
    for (const [template, uncached] of [['/properties/{id}', '451'], ['/properties/{id}/roomtypes', '452'], ['/properties/{id}/rateplans', '453']] as const) {
      await expectAnswer(V, 'GET', template, 502, 'UPSTREAM_ERROR', { ...failing, params: { id: uncached } });
    }
  });

  it.each(['catalog', 'content'] as const)('GET /content/files/%s as JSON and CSV', async (kind) => {
    const template = `/content/files/${kind}`;
    const json = await expectAnswer(V, 'GET', template, 200, null, kind === 'content' ? { query: `updated_since=${encodeURIComponent(new Date(Date.now() - 86_400_000 * 400).toISOString())}` } : {});
    expect(Array.isArray(json.body)).toBe(true);
    const csv = await expectAnswer(V, 'GET', template, 200, null, { query: 'format=csv&updated_since=2099-01-01T00:00:00Z' });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    await expectAnswer(V, 'GET', template, 400, 'VALIDATION_ERROR', { query: 'format=xml' });
    await expectAnswer(V, 'GET', template, 400, 'VALIDATION_ERROR', { query: 'updated_since=yesterday' });
    await expectAnswer(V, 'GET', template, 502, 'UPSTREAM_ERROR', { headers: { 'x-test-scenario': 'upstream_error' } });
  });

  it('search: many properties, one property, rates; 400, 404 and the provider failing (502)', async () => {
    const stay = `checkin=${day(40)}&checkout=${day(42)}`;
    const many = await expectAnswer(V, 'GET', '/search/availability', 200, null, { query: `${stay}&adults=2&per_page=5` });
    expect(many.body.pagination.per_page).toBe(5);
    await expectAnswer(V, 'GET', '/search/availability', 200, null, { query: `${stay}&occupancy=2&occupancy=1-5&sort_by=price_asc&city=Seoul` });
    await expectAnswer(V, 'GET', '/search/availability', 400, 'VALIDATION_ERROR', { query: 'checkin=2020-01-01' });
    await expectAnswer(V, 'GET', '/search/availability', 400, 'VALIDATION_ERROR', { query: `${stay}&adults=2&occupancy=2` });
    await expectAnswer(V, 'GET', '/search/availability', 502, 'UPSTREAM_ERROR', { query: `${stay}&adults=2`, headers: { 'x-test-scenario': 'upstream_error' } });

    await expectAnswer(V, 'GET', '/search/availability/{propertyId}', 200, null, { params: { propertyId: '1' }, query: `${stay}&adults=2` });
    await expectAnswer(V, 'GET', '/search/availability/{propertyId}', 400, 'VALIDATION_ERROR', { params: { propertyId: '1' }, query: stay });
    await expectAnswer(V, 'GET', '/search/availability/{propertyId}', 404, 'NOT_FOUND', { params: { propertyId: '999999' }, query: `${stay}&adults=2` });
    await expectAnswer(V, 'GET', '/search/availability/{propertyId}', 502, 'UPSTREAM_ERROR', {
      params: { propertyId: '1' },
      query: `${stay}&adults=2`,
      headers: { 'x-test-scenario': 'upstream_error' },
    });

    await expectAnswer(V, 'GET', '/search/rates', 200, null, { query: 'property_id=1' });
    await expectAnswer(V, 'GET', '/search/rates', 200, null, { query: `property_id=2&${stay}&adults=1&currency=USD` });
    await expectAnswer(V, 'GET', '/search/rates', 400, 'VALIDATION_ERROR', { query: '' });
    await expectAnswer(V, 'GET', '/search/rates', 404, 'NOT_FOUND', { query: 'property_id=999999' });
    await expectAnswer(V, 'GET', '/search/rates', 502, 'UPSTREAM_ERROR', { query: 'property_id=1', headers: { 'x-test-scenario': 'upstream_error' } });
  });

  it('POST /search/rates/batch: per-item results, 400 for a request wrong as a whole', async () => {
    const item = { property_id: 1, checkin: day(40), checkout: day(42), adults: 2 };
    const batch = await expectAnswer(V, 'POST', '/search/rates/batch', 200, null, { json: { items: [item, { ...item, property_id: 999999 }] } });
    expect(batch.body.data.map((r: { status: string }) => r.status)).toEqual(['ok', 'error']);
    await expectAnswer(V, 'POST', '/search/rates/batch', 400, 'VALIDATION_ERROR', { json: { items: [] } });
    await expectAnswer(V, 'POST', '/search/rates/batch', 400, 'VALIDATION_ERROR', { json: { currency: 'XYZ', items: [item] } });
    await expectAnswer(V, 'POST', '/search/rates/batch', 502, 'UPSTREAM_ERROR', { json: { items: [item] }, headers: { 'x-test-scenario': 'upstream_error' } });
  });

  it('reservations: create, look up, change, vouchers, dates, fee, cancel, with their errors', async () => {
    const flow = v1(t, owner);
    const missing = '00000000-0000-4000-8000-000000000000';
    const offer = await flow.offer({ policy: 'flexible', checkin: day(60), checkout: day(61) });
    const room = (await expectAnswer(V, 'GET', '/search/availability/{propertyId}', 200, null, {
      params: { propertyId: String(offer.propertyId) },
      query: `checkin=${day(60)}&checkout=${day(61)}&adults=2`,
    })).body.data.room_types[0];
    const guest = { first_name: 'Minji', last_name: 'Kim', email: 'minji.docs@example.com' };
    const body = { property_id: offer.propertyId, roomtype_id: room.roomtype_id, rateplan_id: room.rates[0].rateplan_id, check_in: day(60), check_out: day(61), adults: 2, guest };
    await expectAnswer(V, 'POST', '/reservations', 400, 'VALIDATION_ERROR', { json: { ...body, adults: 0 } });
    await expectAnswer(V, 'POST', '/reservations', 404, 'NOT_FOUND', { json: { ...body, property_id: 999999 } });
    await expectAnswer(V, 'POST', '/reservations', 409, 'SOLD_OUT', { json: body, headers: { 'x-test-scenario': 'sold_out' } });
    await expectAnswer(V, 'POST', '/reservations', 422, 'BOOK_TOKEN_INVALID', { json: { book_token: 'not-a-token', guest } });
    const created = await expectAnswer(V, 'POST', '/reservations', 201, null, { json: body, headers: { 'idempotency-key': 'docs-reservation-1' } });
    const id = created.body.data.id as string;
    expect(created.body.data.confirmation_number).toMatch(/^[0-9A-Z]{12}$/);

    await expectAnswer(V, 'GET', '/reservations', 200, null, { query: 'guest_email=MINJI.DOCS@example.com' });
    await expectAnswer(V, 'GET', '/reservations', 400, 'VALIDATION_ERROR', { query: `check_in_from=${day(10)}&check_in_to=${day(1)}` });
    await expectAnswer(V, 'GET', '/reservations/{id}', 200, null, { params: { id } });
    await expectAnswer(V, 'GET', '/reservations/{id}', 404, 'NOT_FOUND', { params: { id: missing } });
    await expectAnswer(V, 'PATCH', '/reservations/{id}', 200, null, { params: { id }, json: { special_requests: 'Late checkout' } });
    await expectAnswer(V, 'PATCH', '/reservations/{id}', 400, 'VALIDATION_ERROR', { params: { id }, json: {} });

    const pdf = await expectAnswer(V, 'GET', '/reservations/{id}/voucher', 200, null, { params: { id }, query: 'format=pdf' });
    expect(pdf.headers.get('content-type')).toMatch(/^application\/pdf/);
    await expectAnswer(V, 'GET', '/reservations/{id}/voucher', 200, null, { params: { id }, query: 'format=html' });
    await expectAnswer(V, 'GET', '/reservations/{id}/voucher', 400, 'VALIDATION_ERROR', { params: { id }, query: 'format=docx' });
    await expectAnswer(V, 'GET', '/reservations/{id}/voucher', 406, 'NOT_ACCEPTABLE', { params: { id }, headers: { accept: 'application/json' } });
    await expectAnswer(V, 'GET', '/reservations/{id}/voucher', 404, 'NOT_FOUND', { params: { id: missing } });
    await expectAnswer(V, 'POST', '/reservations/{id}/send-voucher', 202, null, { params: { id }, json: { to: 'guest@example.com', format: 'html' } });
    await expectAnswer(V, 'POST', '/reservations/{id}/send-voucher', 400, 'VALIDATION_ERROR', { params: { id }, json: { to: 'a@example.com,b@example.com' } });
    await expectAnswer(V, 'POST', '/reservations/{id}/send-voucher', 404, 'NOT_FOUND', { params: { id: missing }, json: {} });

    const preview = await expectAnswer(V, 'POST', '/reservations/{id}/modify-dates', 200, null, { params: { id }, json: { checkin: day(60), checkout: day(62), preview: true } });
    expect(preview.body.data.preview).toBe(true);
    await expectAnswer(V, 'POST', '/reservations/{id}/modify-dates', 200, null, { params: { id }, json: { checkin: day(61), checkout: day(62) } });
    await expectAnswer(V, 'POST', '/reservations/{id}/modify-dates', 400, 'VALIDATION_ERROR', { params: { id }, json: { checkin: day(63), checkout: day(61) } });
    await expectAnswer(V, 'POST', '/reservations/{id}/modify-dates', 404, 'NOT_FOUND', { params: { id: missing }, json: { checkin: day(61), checkout: day(62) } });

    await expectAnswer(V, 'GET', '/reservations/{id}/cancellation-fee', 200, null, { params: { id } });
    await expectAnswer(V, 'GET', '/reservations/{id}/cancellation-fee', 404, 'NOT_FOUND', { params: { id: missing } });

    await expectAnswer(V, 'DELETE', '/reservations/{id}/rooms/{booking_id}', 404, 'NOT_FOUND', { params: { id, booking_id: missing } });
    await expectAnswer(V, 'POST', '/reservations/{id}/cancel', 400, 'VALIDATION_ERROR', { params: { id }, json: { room_ids: [missing] } });
    await expectAnswer(V, 'POST', '/reservations/{id}/cancel', 200, null, { params: { id } });
    await expectAnswer(V, 'POST', '/reservations/{id}/cancel', 409, 'BOOKING_ALREADY_CANCELLED', { params: { id } });
    await expectAnswer(V, 'PATCH', '/reservations/{id}', 409, 'BOOKING_NOT_MODIFIABLE', { params: { id }, json: { guest: { first_name: 'X' } } });
    await expectAnswer(V, 'POST', '/reservations/{id}/modify-dates', 409, 'MODIFICATION_NOT_ALLOWED', { params: { id }, json: { checkin: day(61), checkout: day(63) } });

    const second = await expectAnswer(V, 'POST', '/reservations', 201, null, { json: { ...body, guest: { ...guest, email: 'second.docs@example.com' } } });
    const secondId = second.body.data.id as string;
    await expectAnswer(V, 'DELETE', '/reservations/{id}/rooms/{booking_id}', 200, null, { params: { id: secondId, booking_id: secondId } });
  });

  it('price check: matched, price_changed, sold_out; 400, 410 and 502', async () => {
    const offer = await v1(t, owner).offer();
    const token = `token=${encodeURIComponent(offer.priceCheckToken)}`;
    const matched = await expectAnswer(V, 'GET', '/search/price-check', 200, null, { query: token });
    expect(matched.body.data.status).toBe('matched');
    const changed = await expectAnswer(V, 'GET', '/search/price-check', 200, null, { query: token, headers: { 'x-test-scenario': 'price_changed' } });
    expect(changed.body.data.status).toBe('price_changed');
    const soldOut = await expectAnswer(V, 'GET', '/search/price-check', 200, null, { query: token, headers: { 'x-test-scenario': 'sold_out' } });
    expect(soldOut.body.data).toMatchObject({ status: 'sold_out', pricing: null, cancellation_policy: null, book_token: null });
    await expectAnswer(V, 'GET', '/search/price-check', 400, 'INVALID_TOKEN', { query: 'token=garbage' });
    await expectAnswer(V, 'GET', '/search/price-check', 400, 'VALIDATION_ERROR', { query: '' });
    await expectAnswer(V, 'GET', '/search/price-check', 502, 'UPSTREAM_ERROR', { query: token, headers: { 'x-test-scenario': 'upstream_error' } });
    offsetMs = 2 * 60 * 60 * 1000;
    try {
      await expectAnswer(V, 'GET', '/search/price-check', 410, 'TOKEN_EXPIRED', { query: token });
    } finally {
      offsetMs = 0;
    }
  });

  it('bookings: create, list, read, modify, fee, policy, cancel, voucher, with their errors', async () => {
    const flow = v1(t, owner);
    const offer = await flow.offer();
    const body = { book_token: offer.bookToken, booker_name: 'Docs Guest', booker_email: 'guest@example.com', guests_adult: 2, channel_booking_number: 'DOC-1' };
    await expectAnswer(V, 'POST', '/bookings', 400, 'VALIDATION_ERROR', { json: { book_token: offer.bookToken } });
    await expectAnswer(V, 'POST', '/bookings', 400, 'VALIDATION_ERROR', { json: body, headers: { 'idempotency-key': 'é' } });
    await expectAnswer(V, 'POST', '/bookings', 409, 'SOLD_OUT', { json: body, headers: { 'x-test-scenario': 'sold_out' } });
    await expectAnswer(V, 'POST', '/bookings', 502, 'UPSTREAM_ERROR', { json: body, headers: { 'x-test-scenario': 'upstream_error' } });
    const created = await expectAnswer(V, 'POST', '/bookings', 201, null, { json: body, headers: { 'idempotency-key': 'docs-create-1' } });
    const id = created.body.data.id as string;
    expect(created.headers.get('location')).toBe(`/channel/v1/bookings/${id}`);
    const replayed = await expectAnswer(V, 'POST', '/bookings', 201, null, { json: body, headers: { 'idempotency-key': 'docs-create-1' } });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    await expectAnswer(V, 'POST', '/bookings', 409, 'IDEMPOTENCY_KEY_REUSED', { json: { ...body, booker_name: 'Other' }, headers: { 'idempotency-key': 'docs-create-1' } });
    const used = await expectAnswer(V, 'POST', '/bookings', 422, 'BOOK_TOKEN_USED', { json: body });
    expect(used.body.error.details.booking_id).toBe(id);
    await expectAnswer(V, 'POST', '/bookings', 422, 'BOOK_TOKEN_INVALID', { json: { ...body, book_token: 'garbage' } });
    const pending = await expectAnswer(V, 'POST', '/bookings', 201, null, {
      json: { ...body, book_token: (await flow.offer({ from: offer.propertyId + 1 })).bookToken, channel_booking_number: 'DOC-2' },
      headers: { 'x-test-scenario': 'pending' },
    });
    expect(pending.body.data.status).toBe('pending');

    const list = await expectAnswer(V, 'GET', '/bookings', 200, null, { query: 'per_page=10&status=confirmed' });
    expect(list.body.data.map((b: { id: string }) => b.id)).toContain(id);
    await expectAnswer(V, 'GET', '/bookings', 200, null, { query: `affiliate_reference_id=DOC-1&checkin_from=${day(1)}` });
    await expectAnswer(V, 'GET', '/bookings', 400, 'VALIDATION_ERROR', { query: 'per_page=1000' });

    const longId = 'b'.repeat(65);
    const missing = '00000000-0000-4000-8000-000000000000';
    await expectAnswer(V, 'GET', '/bookings/{id}', 200, null, { params: { id } });
    await expectAnswer(V, 'GET', '/bookings/{id}', 404, 'NOT_FOUND', { params: { id: missing } });
    await expectAnswer(V, 'GET', '/bookings/{id}', 400, 'VALIDATION_ERROR', { params: { id: longId } });

    await expectAnswer(V, 'PATCH', '/bookings/{id}', 200, null, { params: { id }, json: { guest_phone: '+82-10-0000-0000', special_requests: null } });
    await expectAnswer(V, 'PATCH', '/bookings/{id}', 400, 'VALIDATION_ERROR', { params: { id }, json: {} });
    await expectAnswer(V, 'PATCH', '/bookings/{id}', 400, 'VALIDATION_ERROR', { params: { id }, json: { total_amount: 1 } });
    await expectAnswer(V, 'PATCH', '/bookings/{id}', 404, 'NOT_FOUND', { params: { id: missing }, json: { booker_name: 'X' } });

    await expectAnswer(V, 'GET', '/bookings/{id}/cancellation-fee', 200, null, { params: { id } });
    await expectAnswer(V, 'GET', '/bookings/{id}/cancellation-fee', 404, 'NOT_FOUND', { params: { id: missing } });
    await expectAnswer(V, 'GET', '/bookings/{id}/cancellation-fee', 400, 'VALIDATION_ERROR', { params: { id: longId } });
    await expectAnswer(V, 'GET', '/bookings/{id}/cancellation-policy', 200, null, { params: { id } });
    await expectAnswer(V, 'GET', '/bookings/{id}/cancellation-policy', 404, 'NOT_FOUND', { params: { id: missing } });
    await expectAnswer(V, 'GET', '/bookings/{id}/cancellation-policy', 400, 'VALIDATION_ERROR', { params: { id: longId } });

    await expectAnswer(V, 'GET', '/bookings/{id}/voucher', 501, 'NOT_IMPLEMENTED', { params: { id } });
    await expectAnswer(V, 'GET', '/bookings/{id}/voucher', 404, 'NOT_FOUND', { params: { id: missing } });
    await expectAnswer(V, 'GET', '/bookings/{id}/voucher', 400, 'VALIDATION_ERROR', { params: { id: longId } });

    await expectAnswer(V, 'PUT', '/bookings/{id}/cancel', 502, 'UPSTREAM_ERROR', { params: { id }, headers: { 'x-test-scenario': 'upstream_error' } });
    const cancelled = await expectAnswer(V, 'PUT', '/bookings/{id}/cancel', 200, null, { params: { id }, headers: { 'idempotency-key': 'docs-cancel-1' } });
    expect(cancelled.body.data).toMatchObject({ booking_id: id, status: 'cancelled' });
    await expectAnswer(V, 'PUT', '/bookings/{id}/cancel', 200, null, { params: { id }, headers: { 'idempotency-key': 'docs-cancel-1' } });
    await expectAnswer(V, 'PUT', '/bookings/{id}/cancel', 409, 'BOOKING_ALREADY_CANCELLED', { params: { id } });
    await expectAnswer(V, 'PUT', '/bookings/{id}/cancel', 404, 'NOT_FOUND', { params: { id: missing } });
    await expectAnswer(V, 'PUT', '/bookings/{id}/cancel', 400, 'VALIDATION_ERROR', { params: { id: longId } });
    // A cancelled booking: the fee it was cancelled with, and no more changes.
    await expectAnswer(V, 'GET', '/bookings/{id}/cancellation-fee', 200, null, { params: { id } });
    await expectAnswer(V, 'PATCH', '/bookings/{id}', 409, 'BOOKING_NOT_MODIFIABLE', { params: { id }, json: { booker_name: 'Late' } });

    // A checked-in booking (the property reports it): no fee preview, no cancelling.
    const stayingId = pending.body.data.id as string;
    const checkedIn = await t.request(`/admin/v1/bookings/${stayingId}/status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.service.adminToken.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'confirmed' }),
    });
    expect(checkedIn.status).toBe(200);
    expect(
      (await t.request(`/admin/v1/bookings/${stayingId}/status`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.service.adminToken.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'checked_in' }),
      })).status,
    ).toBe(200);
    await expectAnswer(V, 'GET', '/bookings/{id}/cancellation-fee', 409, 'BOOKING_NOT_CANCELLABLE', { params: { id: stayingId } });
    await expectAnswer(V, 'PUT', '/bookings/{id}/cancel', 409, 'BOOKING_NOT_CANCELLABLE', { params: { id: stayingId } });

    // An expired book_token.
    const late = await flow.offer({ from: offer.propertyId + 2 });
    offsetMs = 2 * 60 * 60 * 1000;
    try {
      await expectAnswer(V, 'POST', '/bookings', 422, 'BOOK_TOKEN_EXPIRED', { json: { ...body, book_token: late.bookToken } });
    } finally {
      offsetMs = 0;
    }
  });

  it('POST /bookings in production: 402 when the balance is short', async () => {
    const flow = v1(production, payer);
    const offer = await flow.offer();
    await expectAnswer(V, 'POST', '/bookings', 402, 'INSUFFICIENT_BALANCE', {
      service: production,
      as: apiKey(payer),
      json: { book_token: offer.bookToken, booker_name: 'Short' },
    });
  });

  it('GET /tax-invoices is 501', async () => {
    await expectAnswer(V, 'GET', '/tax-invoices', 501, 'NOT_IMPLEMENTED', { query: 'year=2026&month=11' });
  });

  it('webhooks: create, list, read, change, ping, deliveries, replay, delete, with their errors', async () => {
    // The receiver answers the ping and holds every later attempt open, so the replayed delivery is
    // still pending (in flight) when it is replayed again: a refused port would fail the attempt at
    // once and the second replay could find it finished.
    let received = 0;
    let ping: { headers: Record<string, unknown>; body: string } | undefined;
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        ping ??= { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      });
      if (++received === 1) res.writeHead(204).end();
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/docs-hook`;
    try {
    const created = await expectAnswer(V, 'POST', '/webhooks', 201, null, { json: { url, events: ['reservation.created'], description: 'docs' } });
    const id = created.body.data.id as string;
    expect(created.body.data.secret).toMatch(/^whsec_/);
    await expectAnswer(V, 'POST', '/webhooks', 400, 'VALIDATION_ERROR', { json: { url: 'not a url' } });
    await expectAnswer(V, 'POST', '/webhooks', 400, 'VALIDATION_ERROR', { json: { url, secret: 'mine' } });
    const missing = '00000000-0000-4000-8000-000000000000';
    const longId = 'w'.repeat(65);

    const list = await expectAnswer(V, 'GET', '/webhooks', 200, null);
    expect(list.body.data.map((w: { id: string }) => w.id)).toContain(id);
    await expectAnswer(V, 'GET', '/webhooks/{id}', 200, null, { params: { id } });
    await expectAnswer(V, 'GET', '/webhooks/{id}', 404, 'NOT_FOUND', { params: { id: missing } });
    await expectAnswer(V, 'GET', '/webhooks/{id}', 400, 'VALIDATION_ERROR', { params: { id: longId } });
    await expectAnswer(V, 'PATCH', '/webhooks/{id}', 200, null, { params: { id }, json: { description: null, enabled: false } });
    await expectAnswer(V, 'PATCH', '/webhooks/{id}', 200, null, { params: { id }, json: { enabled: true } });
    await expectAnswer(V, 'PATCH', '/webhooks/{id}', 400, 'VALIDATION_ERROR', { params: { id }, json: {} });
    await expectAnswer(V, 'PATCH', '/webhooks/{id}', 404, 'NOT_FOUND', { params: { id: missing }, json: { enabled: true } });

    const pinged = await expectAnswer(V, 'POST', '/webhooks/{id}/ping', 200, null, { params: { id } });
    const deliveryId = pinged.body.data.id as string;
    // The ping as the receiver got it fits the document's webhooks section: payload and headers.
    await expect.poll(() => ping, { timeout: 10_000 }).toBeDefined();
    const hook = docs.v1.webhooks['webhook.ping'].post;
    const payload = validatorAt(V, ['webhooks', 'webhook.ping', 'post', 'requestBody', 'content', 'application/json', 'schema']);
    expect(payload(JSON.parse(ping!.body)), ajv.errorsText(payload.errors)).toBe(true);
    // The required ones are there; an optional one (traceparent, sent only when the service traces) fits when it is.
    for (const header of hook.parameters as Json[]) {
      const value = ping!.headers[header.name];
      if (!header.required && value === undefined) continue;
      expect(value, header.name).toEqual(expect.any(String));
      expect(ajv.compile(header.schema)(value), `${header.name}: ${String(value)}`).toBe(true);
    }
    expect((hook.parameters as Json[]).filter((h) => h.required).map((h) => h.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    await expectAnswer(V, 'POST', '/webhooks/{id}/ping', 404, 'NOT_FOUND', { params: { id: missing } });
    await expectAnswer(V, 'POST', '/webhooks/{id}/ping', 400, 'VALIDATION_ERROR', { params: { id: longId } });
    const deliveries = await expectAnswer(V, 'GET', '/webhooks/{id}/deliveries', 200, null, { params: { id }, query: 'per_page=5' });
    expect(deliveries.body.data.map((d: { id: string }) => d.id)).toContain(deliveryId);
    await expectAnswer(V, 'GET', '/webhooks/{id}/deliveries', 400, 'VALIDATION_ERROR', { params: { id }, query: 'per_page=0' });
    await expectAnswer(V, 'GET', '/webhooks/{id}/deliveries', 404, 'NOT_FOUND', { params: { id: missing } });
    const params = { id, delivery_id: deliveryId };
    await expectAnswer(V, 'GET', '/webhooks/{id}/deliveries/{delivery_id}', 200, null, { params });
    await expectAnswer(V, 'GET', '/webhooks/{id}/deliveries/{delivery_id}', 404, 'NOT_FOUND', { params: { id, delivery_id: missing } });
    await expectAnswer(V, 'GET', '/webhooks/{id}/deliveries/{delivery_id}', 400, 'VALIDATION_ERROR', { params: { id, delivery_id: longId } });
    await expectAnswer(V, 'POST', '/webhooks/{id}/deliveries/{delivery_id}/replay', 202, null, { params });
    await expectAnswer(V, 'POST', '/webhooks/{id}/deliveries/{delivery_id}/replay', 409, 'DELIVERY_PENDING', { params });
    await expectAnswer(V, 'POST', '/webhooks/{id}/deliveries/{delivery_id}/replay', 404, 'NOT_FOUND', { params: { id, delivery_id: missing } });
    await expectAnswer(V, 'POST', '/webhooks/{id}/deliveries/{delivery_id}/replay', 400, 'VALIDATION_ERROR', { params: { id: longId, delivery_id: deliveryId } });

    await expectAnswer(V, 'DELETE', '/webhooks/{id}', 204, null, { params: { id } });
    await expectAnswer(V, 'DELETE', '/webhooks/{id}', 404, 'NOT_FOUND', { params: { id } });
    await expectAnswer(V, 'DELETE', '/webhooks/{id}', 400, 'VALIDATION_ERROR', { params: { id: longId } });

    // The limit per channel.
    const count = (await call(V, 'GET', '/webhooks')).body.data.length as number;
    for (let i = count; i < 20; i++) await expectAnswer(V, 'POST', '/webhooks', 201, null, { json: { url: `${url}/${i}` } });
    await expectAnswer(V, 'POST', '/webhooks', 409, 'WEBHOOK_LIMIT_REACHED', { json: { url } });
    } finally {
      receiver.closeAllConnections();
      receiver.close();
    }
  });
});

describe('v2 routes, called for real', () => {
  const V = 'v2';
  const stay = () => `checkin=${day(45)}&checkout=${day(47)}`;

  interface Link {
    method: string;
    href: string;
  }

  /** Steps 1 and 2 from property `from` on: the price-check link and the book link of a bookable rate. */
  async function links(service: TestService, as: Record<string, string>, from = 1): Promise<{ priceCheck: Link; book: Link }> {
    for (let id = from; id < from + 40; id++) {
      const step1 = await call(V, 'GET', '/properties/availability', { service, as, query: `${stay()}&occupancy=2&property_id=${id}` });
      expect(step1.status).toBe(200);
      for (const room of step1.body[0]?.rooms ?? []) {
        for (const rate of room.rates) {
          const priceCheck = (Object.values(rate.bed_groups) as { links: { price_check?: Link } }[])[0]?.links.price_check;
          if (!priceCheck) continue;
          const step2 = await call(V, 'GET', '/properties/{propertyId}/rooms/{roomId}/rates/{rateId}', { service, as, href: priceCheck.href });
          if (step2.body.links?.book) return { priceCheck, book: step2.body.links.book };
        }
      }
    }
    throw new Error('no bookable v2 rate');
  }

  it('content: the property list with page tokens, a property, its room types', async () => {
    const first = await expectAnswer(V, 'GET', '/properties', 200, null, { query: 'per_page=2' });
    expect(first.body.next_page_token).toEqual(expect.any(String));
    await expectAnswer(V, 'GET', '/properties', 200, null, { query: `per_page=2&page_token=${encodeURIComponent(first.body.next_page_token)}` });
    await expectAnswer(V, 'GET', '/properties', 400, 'INVALID_REQUEST', { query: 'page_token=garbage' });
    await expectAnswer(V, 'GET', '/properties', 400, 'INVALID_REQUEST', { query: 'per_page=0' });
    const id = first.body.properties[0].id as string;
    await expectAnswer(V, 'GET', '/properties/{id}', 200, null, { params: { id } });
    await expectAnswer(V, 'GET', '/properties/{id}', 404, 'NOT_FOUND', { params: { id: '999999' } });
    await expectAnswer(V, 'GET', '/properties/{id}', 400, 'INVALID_REQUEST', { params: { id: 'abc' } });
    await expectAnswer(V, 'GET', '/properties/{id}/roomtypes', 200, null, { params: { id } });
    await expectAnswer(V, 'GET', '/properties/{id}/roomtypes', 404, 'NOT_FOUND', { params: { id: '999999' } });
    await expectAnswer(V, 'GET', '/properties/{id}/roomtypes', 400, 'INVALID_REQUEST', { params: { id: 'x' } });
    const failing = { headers: { 'x-test-scenario': 'upstream_error' } };
    await expectAnswer(V, 'GET', '/properties', 502, 'UPSTREAM_ERROR', failing);
    await expectAnswer(V, 'GET', '/properties/{id}', 502, 'UPSTREAM_ERROR', { ...failing, params: { id: '461' } });
    await expectAnswer(V, 'GET', '/properties/{id}/roomtypes', 502, 'UPSTREAM_ERROR', { ...failing, params: { id: '462' } });
  });

  it('steps 1 and 2: availability and price check, with their token errors', async () => {
    await expectAnswer(V, 'GET', '/properties/availability', 200, null, { query: `${stay()}&occupancy=2&occupancy=1-7&property_id=1,2,3&currency=USD` });
    await expectAnswer(V, 'GET', '/properties/availability', 400, 'INVALID_REQUEST', { query: `${stay()}&property_id=1` });
    await expectAnswer(V, 'GET', '/properties/availability', 502, 'UPSTREAM_ERROR', {
      query: `${stay()}&occupancy=2&property_id=1`,
      headers: { 'x-test-scenario': 'upstream_error' },
    });
    const { priceCheck } = await links(t, apiKey(owner));
    const template = '/properties/{propertyId}/rooms/{roomId}/rates/{rateId}';
    const changed = await expectAnswer(V, 'GET', template, 200, null, { href: priceCheck.href, headers: { 'x-test-scenario': 'price_changed' } });
    expect(changed.body.status).toBe('price_changed');
    const soldOut = await expectAnswer(V, 'GET', template, 200, null, { href: priceCheck.href, headers: { 'x-test-scenario': 'sold_out' } });
    expect(soldOut.body).toMatchObject({ status: 'sold_out', occupancy_pricing: null, links: {} });
    await expectAnswer(V, 'GET', template, 403, 'FORBIDDEN', { href: priceCheck.href.replace('/rates/', '/rates/x') });
    await expectAnswer(V, 'GET', template, 400, 'INVALID_TOKEN', { params: { propertyId: '1', roomId: 'r', rateId: 'r' }, query: 'token=garbage' });
    await expectAnswer(V, 'GET', template, 400, 'INVALID_REQUEST', { params: { propertyId: '1', roomId: 'r', rateId: 'r' } });
    await expectAnswer(V, 'GET', template, 502, 'UPSTREAM_ERROR', { href: priceCheck.href, headers: { 'x-test-scenario': 'upstream_error' } });
    offsetMs = 2 * 60 * 60 * 1000;
    try {
      await expectAnswer(V, 'GET', template, 410, 'TOKEN_EXPIRED', { href: priceCheck.href });
    } finally {
      offsetMs = 0;
    }
  });

  it('steps 3 and 4: book, retrieve, cancel, with their errors', async () => {
    const { book } = await links(t, apiKey(owner), 3);
    const guests = { rooms: [{ given_name: 'Minji', family_name: 'Kim' }], affiliate_reference_id: 'DOC-V2' };
    await expectAnswer(V, 'POST', '/bookings', 400, 'INVALID_REQUEST', { json: guests });
    await expectAnswer(V, 'POST', '/bookings', 400, 'INVALID_REQUEST', { href: book.href, json: { rooms: [] } });
    await expectAnswer(V, 'POST', '/bookings', 400, 'INVALID_TOKEN', { query: 'token=garbage', json: guests });
    await expectAnswer(V, 'POST', '/bookings', 409, 'SOLD_OUT', { href: book.href, json: guests, headers: { 'x-test-scenario': 'sold_out' } });
    await expectAnswer(V, 'POST', '/bookings', 502, 'UPSTREAM_ERROR', { href: book.href, json: guests, headers: { 'x-test-scenario': 'upstream_error' } });
    const created = await expectAnswer(V, 'POST', '/bookings', 201, null, { href: book.href, json: guests, headers: { 'idempotency-key': 'docs-v2-book' } });
    await expectAnswer(V, 'POST', '/bookings', 201, null, { href: book.href, json: guests, headers: { 'idempotency-key': 'docs-v2-book' } });
    await expectAnswer(V, 'POST', '/bookings', 409, 'TOKEN_ALREADY_USED', { href: book.href, json: guests });
    const { retrieve, cancel } = created.body.links as { retrieve: Link; cancel: Link };

    const read = await expectAnswer(V, 'GET', '/bookings/retrieve', 200, null, { href: retrieve.href });
    expect(read.body.links.cancel).toBeDefined();
    await expectAnswer(V, 'GET', '/bookings/retrieve', 400, 'INVALID_TOKEN', { query: 'token=garbage' });
    await expectAnswer(V, 'GET', '/bookings/retrieve', 400, 'INVALID_TOKEN', { href: cancel.href.replace('/bookings/cancel', '/bookings/retrieve') });
    await expectAnswer(V, 'GET', '/bookings/retrieve', 400, 'INVALID_REQUEST', {});

    await expectAnswer(V, 'PUT', '/bookings/cancel', 400, 'INVALID_TOKEN', { query: 'token=garbage' });
    await expectAnswer(V, 'PUT', '/bookings/cancel', 502, 'UPSTREAM_ERROR', { href: cancel.href, headers: { 'x-test-scenario': 'upstream_error' } });
    const cancelled = await expectAnswer(V, 'PUT', '/bookings/cancel', 200, null, { href: cancel.href });
    expect(cancelled.body.status).toBe('cancelled');
    await expectAnswer(V, 'PUT', '/bookings/cancel', 409, 'TOKEN_ALREADY_USED', { href: cancel.href });
    const after = await expectAnswer(V, 'GET', '/bookings/retrieve', 200, null, { href: retrieve.href });
    expect(after.body.status).toBe('cancelled');

    // A cancel link past check-in.
    const { book: second } = await links(t, apiKey(owner), 6);
    const kept = await expectAnswer(V, 'POST', '/bookings', 201, null, { href: second.href, json: guests });
    offsetMs = 60 * 86_400_000;
    try {
      await expectAnswer(V, 'PUT', '/bookings/cancel', 410, 'TOKEN_EXPIRED', { href: kept.body.links.cancel.href });
    } finally {
      offsetMs = 0;
    }

    // An expired book link.
    const { book: late } = await links(t, apiKey(owner), 9);
    offsetMs = 2 * 60 * 60 * 1000;
    try {
      await expectAnswer(V, 'POST', '/bookings', 410, 'TOKEN_EXPIRED', { href: late.href, json: guests });
    } finally {
      offsetMs = 0;
    }
  });

  it('POST /bookings in production: 402 when the balance is short', async () => {
    const { book } = await links(production, apiKey(payer));
    await expectAnswer(V, 'POST', '/bookings', 402, 'INSUFFICIENT_BALANCE', {
      service: production,
      as: apiKey(payer),
      href: book.href,
      json: { rooms: [{ given_name: 'Short', family_name: 'Balance' }] },
    });
  });
});

describe('coverage', () => {
  it('every documented route was seen answering its success, 401, 403, 429, a 4xx of its own, 500 and 503', () => {
    const gaps: string[] = [];
    const unseen: string[] = [];
    for (const { version, method, template, op } of operations()) {
      const key = opKey(version, method, template);
      const statuses = seen.get(key) ?? new Set<number>();
      const success = Object.keys(op.responses).map(Number).filter((s) => s < 300);
      // The two unimplemented routes have no success: their documented answer is 501.
      const expectedSuccess = success.length ? success : [501];
      if (!expectedSuccess.some((s) => statuses.has(s))) gaps.push(`${key}: no success (${expectedSuccess})`);
      if (!statuses.has(401)) gaps.push(`${key}: no 401`);
      // A 4xx of the route itself (400, 404, 409, 410, 422...), where its document lists one.
      const own = (s: number) => s >= 400 && s < 500 && ![401, 403, 413, 415, 429].includes(s);
      if (Object.keys(op.responses).map(Number).some(own) && ![...statuses].some(own)) gaps.push(`${key}: no 4xx of its own`);
      for (const s of [500, 503]) if (!statuses.has(s)) gaps.push(`${key}: no ${s}`);
      // The OAuth endpoints have no scope to lack.
      for (const s of OAUTH.has(template) ? [429] : [403, 429]) if (!statuses.has(s)) gaps.push(`${key}: no ${s}`);
      for (const s of Object.keys(op.responses).map(Number)) if (!statuses.has(s)) unseen.push(`${key} ${s}`);
    }
    expect(gaps).toEqual([]);
    // Documented but not produced here: states that are costly to reach (the provider failing on
    // content routes, a checked-in booking's 409 on the fee preview, an itinerary gone).
    console.info(`documented statuses not produced by this file (${unseen.length}):\n  ${unseen.join('\n  ')}`);
  });
});
