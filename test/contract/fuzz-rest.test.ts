import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { claim, fingerprintOf, settle } from '../../src/services/bookings/index.js';
import { digest, SCOPES } from '../../src/services/access/index.js';
import { day } from '../helpers/flow.js';
import {
  addedRows,
  deepJsonText,
  exchange,
  expectErrorEnvelope,
  expectFixtures,
  expectNoChanges,
  expectNoPrototypePollution,
  expectServed,
  FUZZ_BODY_LIMIT,
  fuzzProperty,
  garbageHeaderValue,
  headerSafe,
  hostileJsonText,
  hostileString,
  malformedJsonText,
  mintToken,
  partnerState,
  pathSegment,
  PROTO_KEYS,
  queryValue,
  rowCounts,
  send as sendTo,
  startFuzzService,
  stateChanges,
  tainted,
  toWellFormed,
  type Answer,
  type Json,
  type PartnerState,
} from '../helpers/fuzz.js';
import { apiKey, uniqueIp } from '../helpers/service.js';
import { resolve } from '../helpers/openapi.js';

/**
 * Property-based fuzzing of every REST route (issue 7 part 5): every operation of the two OpenAPI
 * documents the service serves (so a route joins the day it is documented) and the token endpoint
 * get malformed, oversized and hostile requests (path and query values, duplicated and
 * prototype-polluting parameters, bodies that are not JSON, not objects, too big or too deep,
 * wrong content types, garbage Idempotency-Key, X-Request-Id and credentials). Whatever comes:
 *
 * - no 5xx (a route the document marks 501 NOT_IMPLEMENTED may answer that);
 * - the status is one the operation documents, and an error is exactly the documented shape for
 *   that status (the §2.1 envelope, or the RFC 6749 form of the token endpoint);
 * - a request that is bad by construction (garbage credential, malformed or oversized body,
 *   malformed Idempotency-Key, wrong content type) is refused with a 4xx;
 * - no partner-visible row changes (bookings, ledger, channel, apps, keys, tokens, webhooks and
 *   their deliveries, outbox, idempotency keys), except by a 2xx of a non-GET route, and two
 *   documented kinds of bookkeeping (expectStateKept): a valid Idempotency-Key stores the 4xx it
 *   was answered with; a booking the provider refused leaves a void, uncharged attempt row;
 * - nothing in this process got a polluted prototype (the service runs in it).
 *
 * Defects it found have tests of their own at the end, asserting the fixed answer. The outbox
 * dispatcher is off (EVENTS_POLL_INTERVAL_MS=0), so nothing changes rows behind a request's back
 * and a snapshot taken after the response is the request's doing.
 */

type Version = 'v1' | 'v2';

const BASE: Record<Version, string> = { v1: '/channel/v1', v2: '/api/channel/v2' };
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const BODY_LIMIT = FUZZ_BODY_LIMIT;
/** Runs per route: more where a body gives more to vary. */
const RUNS = { withBody: 60, other: 25 };

// ---- the service and the partner's resources ----
// At the top level (not in beforeAll): the documented operations must be known when the tests are
// collected, one test per operation.

const { t, owner, bearer, booked, offer, bookingId, webhookId, deliveryId } = await startFuzzService();
afterAll(() => t.close());

const v2Links = await v2Chain();

/** Real values of path parameters and tokens, so a hostile value elsewhere in the request is what is refused. */
const REAL = {
  booking: bookingId,
  webhook: webhookId,
  delivery: deliveryId,
  property: String(booked.propertyId),
};

/** v2 steps 1 to 3 for real: the price-check link's ids and token, a book token, retrieve and cancel tokens. */
async function v2Chain() {
  const get = (href: string, method = 'GET', body?: unknown) =>
    t.request(href, {
      method,
      headers: { ...apiKey(owner), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  for (let id = booked.propertyId; id < booked.propertyId + 30; id++) {
    const res = await get(`/api/channel/v2/properties/availability?checkin=${day(50)}&checkout=${day(52)}&occupancy=2&property_id=${id}`);
    expect(res.status).toBe(200);
    const [property] = (await res.json()) as Json[];
    for (const room of property?.rooms ?? []) {
      for (const rate of room.rates) {
        const link = (Object.values(rate.bed_groups) as Json[]).find((b) => b.links.price_check)?.links.price_check;
        if (!link) continue;
        const checked = await (await get(link.href)).json();
        if (!checked.links?.book) continue;
        // A second book token of the same offer, left unused.
        const fresh = await (await get(link.href)).json();
        if (!fresh.links?.book) continue;
        const bookedV2 = await get(checked.links.book.href, 'POST', { rooms: [{ given_name: 'Fuzz', family_name: 'Guest' }] });
        expect(bookedV2.status).toBe(201);
        const made = await bookedV2.json();
        const url = new URL(link.href, 'http://x');
        const [, , , , , propertyId, , roomId, , rateId] = url.pathname.split('/');
        return {
          priceCheck: { propertyId: propertyId!, roomId: roomId!, rateId: rateId!, token: url.searchParams.get('token')! },
          bookToken: new URL(fresh.links.book.href, 'http://x').searchParams.get('token')!,
          retrieveToken: new URL(made.links.retrieve.href, 'http://x').searchParams.get('token')!,
          cancelToken: new URL(made.links.cancel.href, 'http://x').searchParams.get('token')!,
        };
      }
    }
  }
  throw new Error('no bookable v2 rate');
}

// ---- the operations, from the documents the service serves ----

interface Operation {
  version: Version;
  method: string;
  template: string;
  op: Json;
  doc: Json;
  name: string;
}

const docs = {} as Record<Version, Json>;
for (const version of ['v1', 'v2'] as const) {
  const res = await t.request(`${BASE[version]}/openapi.json`);
  expect(res.status).toBe(200);
  docs[version] = await res.json();
}
const operations: Operation[] = [];
for (const version of ['v1', 'v2'] as const) {
  for (const [template, item] of Object.entries<Json>(docs[version].paths)) {
    for (const method of METHODS) {
      if (!item[method]) continue;
      operations.push({ version, method: method.toUpperCase(), template, op: item[method], doc: docs[version], name: `${version} ${method.toUpperCase()} ${template}` });
    }
  }
}
const tokenOperation = operations.find((o) => o.version === 'v1' && o.template === '/oauth/token' && o.method === 'POST')!;
const revokeOperation = operations.find((o) => o.version === 'v1' && o.template === '/oauth/revoke' && o.method === 'POST')!;
const apiOperations = operations.filter((o) => o !== tokenOperation && o !== revokeOperation);


const parametersOf = (o: Operation, where: string): Json[] => ((o.op.parameters ?? []) as Json[]).filter((p) => p.in === where);
const jsonBodySchema = (o: Operation): Json | undefined => {
  const schema = o.op.requestBody?.content?.['application/json']?.schema;
  return schema === undefined ? undefined : resolve(o.doc, schema);
};
const takesIdempotencyKey = (o: Operation) => parametersOf(o, 'header').some((p) => p.name.toLowerCase() === 'idempotency-key');
/** Changes state without a body to say how: cancel, delete, ping, replay. A real id or token plus odd headers would just do it. */
const actsWithoutBody = (o: Operation) => o.method !== 'GET' && !jsonBodySchema(o);

// ---- sample (valid-looking) values, the base each hostile value is put into ----

/** The real value of a path parameter of `o`, the resource of the owner that the route names. */
function realPathValue(o: Operation, name: string): string {
  if (o.version === 'v2' && o.template.includes('/rooms/')) return v2Links.priceCheck[name as 'propertyId' | 'roomId' | 'rateId'];
  if (name === 'delivery_id') return REAL.delivery;
  if (o.template.startsWith('/webhooks')) return REAL.webhook;
  // A v1 booking is its own reservation (itinerary).
  if (name === 'booking_id' || o.template.startsWith('/bookings') || o.template.startsWith('/reservations')) return REAL.booking;
  return REAL.property;
}

/** The real value of a required query parameter. Tokens are the route's own kind of token. */
function realQueryValue(o: Operation, name: string): string {
  if (name === 'token') {
    if (o.version === 'v1') return offer.priceCheckToken;
    if (o.template.includes('/rooms/')) return v2Links.priceCheck.token;
    if (o.template === '/bookings' && o.method === 'POST') return v2Links.bookToken;
    if (o.template === '/bookings/retrieve') return v2Links.retrieveToken;
    if (o.template === '/bookings/cancel') return v2Links.cancelToken;
    return 'x';
  }
  const values: Record<string, string> = {
    checkin: day(30),
    checkout: day(32),
    adults: '2',
    occupancy: '2',
    property_id: REAL.property,
  };
  return values[name] ?? sampleOf(o.doc, parametersOf(o, 'query').find((p) => p.name === name)?.schema)?.toString() ?? 'x';
}

/** Values the document's schemas cannot suggest (patterns, formats), by field name. */
const SAMPLE_FIELDS: Record<string, unknown> = {
  book_token: offer.bookToken,
  book_tokens: [v2Links.bookToken],
  booker_email: 'guest@example.com',
  guest_phone: '+82 10 1234 5678',
  guest_country: 'KR',
  bank_code: 'KB004',
  account_number: '123-456-7890',
  url: 'http://127.0.0.1:9/fuzz-sample',
  events: ['reservation.no_show'],
  client_id: owner.client_id,
  client_secret: owner.client_secret,
};

/** A value that fits `schema` as far as a simple reading of it goes (enough to get past the first field). */
function sampleOf(doc: Json, node: Json, name?: string): unknown {
  if (name !== undefined && name in SAMPLE_FIELDS) return SAMPLE_FIELDS[name];
  const schema = resolve(doc, node);
  if (!schema || typeof schema !== 'object') return 'x';
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return sampleOf(doc, (branches as Json[]).find((b) => resolve(doc, b)?.type !== 'null') ?? branches[0]);
  const type = Array.isArray(schema.type) ? schema.type.find((x: string) => x !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries<Json>(schema.properties ?? {}).map(([key, value]) => [key, sampleOf(doc, value, key)]));
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => sampleOf(doc, schema.items ?? {}));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    default:
      if (schema.format === 'date') return day(30);
      if (schema.format === 'date-time') return new Date().toISOString();
      if (schema.format === 'email') return 'guest@example.com';
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
  }
}

/** Dotted paths of the fields of a body schema: top level, and one level into objects and arrays of objects. */
function fieldPaths(doc: Json, node: Json): string[][] {
  const schema = resolve(doc, node);
  const out: string[][] = [];
  for (const [key, value] of Object.entries<Json>(schema?.properties ?? {})) {
    out.push([key]);
    const child = resolve(doc, value);
    const type = Array.isArray(child?.type) ? child.type : [child?.type];
    if (type.includes('object')) for (const inner of Object.keys(child.properties ?? {})) out.push([key, inner]);
    if (type.includes('array') && resolve(doc, child.items)?.properties) {
      for (const inner of Object.keys(resolve(doc, child.items).properties)) out.push([key, '0', inner]);
    }
  }
  return out;
}

// ---- JSON text with raw (hostile) parts ----

/** A piece of JSON text put into a body as it is: numbers JSON cannot write, deep nesting, duplicate keys. */
class Raw {
  constructor(readonly text: string) {}
}

function jsonText(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (value instanceof Map) return `{${[...value].map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value && typeof value === 'object') return jsonText(new Map(Object.entries(value)));
  return JSON.stringify(value) ?? 'null';
}

function valueAt(value: unknown, path: string[]): unknown {
  return path.reduce((at: unknown, key) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined), value);
}

/** `value` with `path` set to `replacement` (or removed); objects become Maps so any key survives. */
function withField(value: unknown, path: string[], replacement: Raw | undefined): unknown {
  const asMap = value instanceof Map ? new Map(value) : value && typeof value === 'object' && !Array.isArray(value) ? new Map(Object.entries(value)) : null;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    const index = Number(head);
    copy[index] = rest.length ? withField(copy[index], rest, replacement) : (replacement ?? null);
    return copy;
  }
  if (!asMap) return value;
  if (rest.length) asMap.set(head!, withField(asMap.get(head!), rest, replacement));
  else if (replacement) asMap.set(head!, replacement);
  else asMap.delete(head!);
  return asMap;
}

// ---- requests ----

/** A request body; an oversized one is described (size and unit) and made only when sent. */
interface Body {
  kind: 'fuzzed' | 'malformed' | 'not-an-object' | 'wrong-type' | 'no-type' | 'oversized' | 'ignored';
  text?: string;
  oversized?: { size: number; unit: string };
  contentType?: string;
  /** Sent as a stream, without Content-Length. */
  stream?: boolean;
}

const bodyText = (b: Body) => (b.oversized ? b.oversized.unit.repeat(Math.ceil(b.oversized.size / b.oversized.unit.length)).slice(0, b.oversized.size) : b.text!);

interface RestCase {
  credential: { kind: 'key' } | { kind: 'bearer' } | { kind: 'garbage'; headers: Record<string, string> };
  path: Record<string, { real: boolean; segment: string }>;
  query: [name: string, value: string][];
  headers: Record<string, string>;
  body?: Body;
  /** A real token of the route in the query (v2 links, the v1 price check). */
  realToken: boolean;
  idempotencyKey?: { key: string; valid: boolean };
  /** Hostile pieces the request was built from, for reading a failure. */
  notes: string[];
}

const WRONG_CONTENT_TYPES = [
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'text/json',
  'application/octet-stream',
  'application/jsonp',
  'json',
  'application/javascript',
] as const;

const RAW_PATH_SEGMENTS = ['%00', '%', '%ZZ', '%E0%A4%A', '%C0%AE', '%FF', '%2e%2e%2f', '%252e', '%u0000', '%20', '+', ';', ';a=b', '%3B', '%23', '%3F', '@', ':'] as const;

const credentialArb = (o: Operation): fc.Arbitrary<RestCase['credential']> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant({ kind: 'key' as const }) },
    { weight: 3, arbitrary: fc.constant({ kind: 'bearer' as const }) },
    {
      weight: 1,
      arbitrary: fc
        .oneof(
          garbageHeaderValue.map((v) => ({ 'x-api-key': v })),
          garbageHeaderValue.map((v) => ({ authorization: `Bearer ${v}` })),
          garbageHeaderValue.map((v) => ({ authorization: v })),
          fc.constant({ authorization: `Basic ${Buffer.from(`${owner.client_id}:${owner.client_secret}`).toString('base64')}` }),
          fc.constant({ 'x-api-key': owner.api_key.slice(0, -1) }),
          fc.constant({ 'x-api-key': `${owner.api_key}x` }),
          fc.constant({ authorization: `Bearer ${bearer.slice(0, -1)}` }),
          fc.constant({ authorization: `Bearer ${owner.api_key}` }),
          fc.constant({ 'x-api-key': bearer }),
        )
        // An empty or blank value is no credential at all (still 401), so keep them.
        .map((headers) => ({ kind: 'garbage' as const, headers })),
    },
  );

const hostileSegment: fc.Arbitrary<{ real: boolean; segment: string }> = fc.oneof(
  { weight: 4, arbitrary: hostileString.map((s) => ({ real: false, segment: pathSegment(s) })) },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_PATH_SEGMENTS).map((segment) => ({ real: false, segment })) },
);

function pathArb(o: Operation): fc.Arbitrary<RestCase['path']> {
  const names = parametersOf(o, 'path').map((p) => p.name as string);
  const one = (name: string) =>
    fc.oneof({ weight: 2, arbitrary: fc.constant({ real: true, segment: encodeURIComponent(realPathValue(o, name)) }) }, { weight: 3, arbitrary: hostileSegment });
  return fc.record(Object.fromEntries(names.map((name) => [name, one(name)])) as Record<string, fc.Arbitrary<{ real: boolean; segment: string }>>);
}

/** Hostile query strings: documented names with hostile values, duplicated, missing, and prototype keys. */
function queryArb(o: Operation): fc.Arbitrary<{ pairs: [string, string][]; realToken: boolean }> {
  const documented = parametersOf(o, 'query');
  const required = documented.filter((p) => p.required).map((p) => p.name as string);
  const names = [...documented.map((p) => p.name as string), ...PROTO_KEYS, '__proto__[polluted]', 'constructor[prototype][polluted]', 'a[]', '', 'per_page[]', 'page[0]'];
  const nameArb = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: hostileString.map((s) => encodeURIComponent(toWellFormed(s))) });
  const taintedParam = documented.length
    ? fc
        .constantFrom(...documented.map((p) => p.name as string))
        .chain((name) => fc.tuple(fc.constant(name), tainted(realQueryValue(o, name)).map((v) => encodeURIComponent(toWellFormed(v)))))
    : fc.tuple(fc.constantFrom(...names), queryValue);
  const extra = fc.array(fc.oneof({ weight: 3, arbitrary: fc.tuple(nameArb, queryValue) }, { weight: 2, arbitrary: taintedParam }), { minLength: 0, maxLength: 5 });
  return fc.record({ extra, dropped: fc.subarray(required, { maxLength: Math.min(1, required.length) }), realToken: fc.boolean() }).map(({ extra, dropped, realToken }) => {
    const base: [string, string][] = required
      .filter((name) => !dropped.includes(name))
      .map((name) => [name, encodeURIComponent(name === 'token' && !realToken ? 'x' : realQueryValue(o, name))]);
    return { pairs: [...base, ...extra], realToken: required.includes('token') && realToken && !dropped.includes('token') };
  });
}

/** An Idempotency-Key that is well-formed (1 to 255 visible ASCII characters) but odd, or malformed. */
const idempotencyKeyArb = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 255 }).map((key) => ({ key, valid: true })),
  fc.constantFrom("'; DROP TABLE idempotency_keys; --", '__proto__', '{"a":1}', '..%2F..').map((key) => ({ key, valid: true })),
  fc
    .oneof(
      fc.constantFrom('', ' ', 'a b', 'ключ', 'é', 'a\tb'),
      fc.integer({ min: 256, max: 5_000 }).map((n) => 'k'.repeat(n)),
      garbageHeaderValue,
    )
    .map(headerSafe)
    // What fetch trims off a header value (leading and trailing spaces and tabs), it never sends:
    // the service sees the trimmed key, which may well be valid.
    .map((key) => ({ key, valid: /^[\x21-\x7e]{1,255}$/.test(key.trim()) })),
);

function headersArb(o: Operation): fc.Arbitrary<{ headers: Record<string, string>; idempotencyKey?: { key: string; valid: boolean } }> {
  return fc
    .record(
      {
        requestId: garbageHeaderValue,
        idempotencyKey: idempotencyKeyArb,
        accept: fc.oneof(garbageHeaderValue, fc.constantFrom('text/csv', 'application/xml', '*/*;q=0', 'application/json;q=0')),
        scenario: garbageHeaderValue.filter((v) => !/price_changed|sold_out|upstream_error|upstream_timeout|pending/.test(v)),
        forwardedFor: garbageHeaderValue,
        language: garbageHeaderValue,
      },
      { requiredKeys: [] },
    )
    .map((h) => {
      const headers: Record<string, string> = {};
      if (h.requestId !== undefined) headers['x-request-id'] = h.requestId;
      if (h.idempotencyKey !== undefined) headers['idempotency-key'] = h.idempotencyKey.key;
      if (h.accept !== undefined) headers.accept = h.accept;
      if (h.scenario !== undefined) headers['x-test-scenario'] = h.scenario;
      if (h.forwardedFor !== undefined) headers['x-forwarded-for'] = h.forwardedFor;
      if (h.language !== undefined) headers['accept-language'] = h.language;
      return { headers, ...(h.idempotencyKey && { idempotencyKey: h.idempotencyKey }) };
    });
}

const oversizedArb = fc
  .tuple(fc.integer({ min: BODY_LIMIT + 1, max: BODY_LIMIT * 3 }), fc.boolean(), fc.constantFrom('a', '[', '{"a":"'))
  .map(([size, stream, unit]): Body => ({ oversized: { size, unit }, contentType: 'application/json', stream, kind: 'oversized' }));

function bodyArb(o: Operation): fc.Arbitrary<RestCase['body']> {
  const schema = jsonBodySchema(o);
  if (o.method === 'GET') return fc.constant(undefined);
  if (!schema) {
    // No documented body: none, an oversized one, or a small one the route should ignore.
    return fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: oversizedArb },
      { weight: 1, arbitrary: hostileJsonText.filter((s) => Buffer.byteLength(s) <= BODY_LIMIT).map((text) => ({ text, contentType: 'application/json', kind: 'ignored' as const })) },
    );
  }
  const base = sampleOf(o.doc, schema);
  const paths = fieldPaths(o.doc, schema);
  // A field replaced by any hostile JSON, removed, or (a string field) its sample with one bad character in it.
  const change = fc.constantFrom(...paths).chain((path) => {
    const sample = valueAt(base, path);
    return fc.tuple(
      fc.constant(path),
      fc.oneof(
        { weight: 4, arbitrary: hostileJsonText.map((text): Raw | undefined => new Raw(text)) },
        { weight: 1, arbitrary: fc.constant(undefined) },
        { weight: typeof sample === 'string' ? 3 : 0, arbitrary: tainted(String(sample)).map((text): Raw | undefined => new Raw(JSON.stringify(text))) },
      ),
    );
  });
  const fuzzed = fc
    .record({
      changes: fc.oneof({ weight: 3, arbitrary: change.map((one) => [one]) }, { weight: 1, arbitrary: fc.array(change, { minLength: 2, maxLength: 3 }) }),
      extra: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS), hostileString), hostileJsonText), { maxLength: 2 }),
    })
    .map(({ changes, extra }) => {
      let value = changes.reduce((acc, [path, raw]) => withField(acc, path, raw), base as unknown);
      for (const [key, text] of extra) value = withField(value, [key], new Raw(text));
      return { text: jsonText(value), contentType: 'application/json', kind: 'fuzzed' as const };
    })
    .filter((b) => Buffer.byteLength(b.text) <= BODY_LIMIT);
  const small = (arb: fc.Arbitrary<string>) => arb.filter((s) => Buffer.byteLength(s) <= BODY_LIMIT);
  return fc.oneof(
    { weight: 6, arbitrary: fuzzed },
    { weight: 2, arbitrary: small(malformedJsonText).map((text) => ({ text, contentType: 'application/json', kind: 'malformed' as const })) },
    {
      weight: 1,
      arbitrary: small(fc.oneof(deepJsonText, hostileJsonText.filter((s) => !s.startsWith('{'))))
        .map((text) => ({ text, contentType: 'application/json', kind: 'not-an-object' as const })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...WRONG_CONTENT_TYPES), fc.constant(jsonText(base)))
        .map(([contentType, text]) => ({ text, contentType, kind: 'wrong-type' as const })),
    },
    { weight: 1, arbitrary: fc.constant({ text: jsonText(base), kind: 'no-type' as const }) },
    { weight: 1, arbitrary: oversizedArb },
  );
}

/** A whole hostile request for `o`. */
function caseArb(o: Operation): fc.Arbitrary<RestCase> {
  return fc
    .record({ credential: credentialArb(o), path: pathArb(o), query: queryArb(o), headers: headersArb(o), body: bodyArb(o) })
    .map(({ credential, path, query, headers, body }) => {
      const notes: string[] = [];
      if (headers.idempotencyKey && !takesIdempotencyKey(o)) notes.push('idempotency-key on a route without it');
      const out: RestCase = { credential, path, query: query.pairs, headers: headers.headers, realToken: query.realToken, notes };
      if (body) out.body = body;
      if (headers.idempotencyKey) out.idempotencyKey = headers.idempotencyKey;
      return out;
    })
    .filter((c) => {
      // A route that acts without a body, called on a real resource: only with something in the
      // request that must make it refuse (else a ping, a delete or a cancel would simply happen).
      if (!actsWithoutBody(o)) return true;
      const real = Object.values(c.path).some((p) => p.real) || c.realToken;
      return !real || mustRefuse(o, c).length > 0;
    });
}

const isOversized = (c: RestCase) => c.body !== undefined && Buffer.byteLength(bodyText(c.body)) > BODY_LIMIT;

/** Why a request has to be refused, whatever else it holds. */
function mustRefuse(o: Operation, c: RestCase): string[] {
  const reasons: string[] = [];
  if (c.credential.kind === 'garbage') reasons.push('garbage credential');
  if (isOversized(c)) reasons.push('oversized body');
  if (c.idempotencyKey && !c.idempotencyKey.valid && takesIdempotencyKey(o)) reasons.push('malformed Idempotency-Key');
  if (jsonBodySchema(o) && ['malformed', 'not-an-object', 'wrong-type', 'no-type'].includes(c.body?.kind ?? '')) reasons.push(`${c.body!.kind} body`);
  return reasons;
}

function urlOf(o: Operation, c: RestCase): string {
  const path = o.template.replace(/\{(\w+)\}/g, (_, name: string) => c.path[name]!.segment);
  const query = c.query.map(([k, v]) => `${k}=${v}`).join('&');
  return `${BASE[o.version]}${path}${query ? `?${query}` : ''}`;
}

function requestOf(o: Operation, c: RestCase): { url: string; init: RequestInit & { duplex?: 'half' } } {
  const headers: Record<string, string> = { ...c.headers };
  if (c.credential.kind === 'key') headers['x-api-key'] = owner.api_key;
  else if (c.credential.kind === 'bearer') headers.authorization = `Bearer ${bearer}`;
  else Object.assign(headers, c.credential.headers);
  const init: RequestInit & { duplex?: 'half' } = { method: o.method, headers };
  if (c.body) {
    if (c.body.contentType !== undefined) headers['content-type'] = c.body.contentType;
    if (c.body.stream) {
      // No Content-Length: the limit must hold while the body streams in.
      const bytes = new TextEncoder().encode(bodyText(c.body));
      init.body = new ReadableStream({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 8192) controller.enqueue(bytes.slice(i, i + 8192));
          controller.close();
        },
      });
      init.duplex = 'half';
    } else {
      init.body = bodyText(c.body);
    }
  }
  return { url: urlOf(o, c), init };
}

// ---- checking an answer ----

/** The documented schema name of an error status of `o` (ErrorEnvelope or OAuthError). */
function errorSchemaName(o: Operation, status: number): string {
  if (status === 413 && !o.op.responses['413']) return 'ErrorEnvelope';
  const response = resolve(o.doc, o.op.responses[String(status)]);
  const schema = response?.content?.['application/json']?.schema;
  // The envelope, its code narrowed to the route's (allOf [ErrorEnvelope, codes]); or the RFC 6749 form.
  const ref = (schema?.$ref ?? schema?.allOf?.[0]?.$ref) as string | undefined;
  if (ref) return ref.split('/').pop()!;
  if (Array.isArray(schema?.properties?.error?.enum)) return 'OAuthError';
  return '(none)';
}

function describeCase(o: Operation, c: RestCase, url: string): string {
  return JSON.stringify({ route: o.name, url: url.slice(0, 300), credential: c.credential, headers: c.headers, body: c.body && { ...c.body, text: bodyText(c.body).slice(0, 200), length: bodyText(c.body).length }, notes: c.notes }).slice(0, 1500);
}

/** The response is one the document allows, in its documented error form. */
function expectDocumentedAnswer(o: Operation, answer: Answer, where: string, sentBody: boolean): void {
  const { status, body, headers } = answer;
  const allowed5xx = status === 501 && o.op.responses['501'] !== undefined && body?.error?.code === 'NOT_IMPLEMENTED';
  expectServed(answer, where, allowed5xx);
  // 413 is the service-wide body limit (BODY_LIMIT_BYTES, docs/operations.md): any request with a body may get it.
  const documented = o.op.responses[String(status)] !== undefined || (status === 413 && sentBody);
  expect(documented, `${where}: status ${status} is not documented for ${o.name}: ${answer.text.slice(0, 300)}`).toBe(true);
  if (status < 400) return;
  expect(headers.get('content-type') ?? '', `${where}: an error is JSON`).toMatch(/^application\/json/);
  const kind = errorSchemaName(o, status);
  if (kind === 'ErrorEnvelope') {
    expectErrorEnvelope(answer, where);
    const codes = resolve(o.doc, o.op.responses[String(status)] ?? {})?.content?.['application/json']?.schema?.allOf?.[1]?.properties.error.properties.code.enum;
    if (codes) expect(codes, `${where}: the code is one the route documents for ${status}`).toContain(body.error.code);
    if (status === 401) expect(headers.get('www-authenticate'), `${where}: WWW-Authenticate`).toBeTruthy();
    // v2 names a bad request INVALID_REQUEST (docs/spec/DECISIONS.md "v2"), never v1's VALIDATION_ERROR.
    if (o.version === 'v2') expect(body.error.code, `${where}: a v2 code`).not.toBe('VALIDATION_ERROR');
  } else if (kind === 'OAuthError') {
    const schema = resolve(o.doc, o.op.responses[String(status)]).content['application/json'].schema;
    expect(Object.keys(body ?? {}).every((k) => k === 'error' || k === 'error_description'), `${where}: OAuth error fields: ${answer.text.slice(0, 300)}`).toBe(true);
    expect(schema.properties.error.enum, `${where}: OAuth error code`).toContain(body.error);
    if (body.error_description !== undefined) expect(typeof body.error_description).toBe('string');
  } else {
    throw new Error(`${where}: status ${status} of ${o.name} documents no known error schema (${kind})`);
  }
}

/**
 * What a request may have changed: nothing, unless it is a non-GET route answering 2xx. Two kinds
 * of bookkeeping are documented and allowed on a refusal, exactly: a valid Idempotency-Key holds
 * the 4xx it was answered with (docs/spec/DECISIONS.md: client errors are replayed too), and a booking the
 * provider refused (409 SOLD_OUT or PRICE_CHANGED) leaves its attempt as a `void` row, uncharged
 * and with the token released (docs/spec/DECISIONS.md: void rows are internal, never shown to partners).
 */
function expectStateKept(o: Operation, before: PartnerState, after: PartnerState, answer: Answer, idempotencyKey: string | undefined, where: string): void {
  if (o.method !== 'GET' && answer.status >= 200 && answer.status < 300) return;
  const changes = stateChanges(before, after);
  if (changes.idempotency_keys && idempotencyKey !== undefined && answer.status >= 400 && answer.status < 500) {
    const { added, othersChanged } = addedRows(before, after, 'idempotency_keys');
    if (!othersChanged && added.length === 1 && added[0].key === idempotencyKey && added[0].response_status === answer.status && added[0].channel_id === owner.user_id) {
      delete changes.idempotency_keys;
    }
  }
  if (changes.bookings && answer.status === 409 && ['SOLD_OUT', 'PRICE_CHANGED'].includes(answer.body?.error?.code)) {
    const { added, othersChanged } = addedRows(before, after, 'bookings');
    if (!othersChanged && added.length > 0 && added.every((b) => b.status === 'void' && b.charged === false && b.book_token_jti === null)) delete changes.bookings;
  }
  expectNoChanges(changes, answer, where);
}

const send = (url: string, init: RequestInit & { ip?: string }) => sendTo(t, url, init);

async function runCase(o: Operation, c: RestCase): Promise<void> {
  const { url, init } = requestOf(o, c);
  const where = describeCase(o, c, url);
  const { answer, before, after } = await exchange(t, url, init);

  expectDocumentedAnswer(o, answer, where, c.body !== undefined);

  const reasons = mustRefuse(o, c);
  if (reasons.length) {
    expect(answer.status >= 400 && answer.status < 500, `${where}: must be refused (${reasons.join(', ')}), got ${answer.status}`).toBe(true);
    if (isOversized(c)) {
      expect({ status: answer.status, code: answer.body?.error?.code, limit: answer.body?.error?.details?.limit_bytes }, where).toEqual({ status: 413, code: 'PAYLOAD_TOO_LARGE', limit: BODY_LIMIT });
    } else if (c.credential.kind === 'garbage') {
      expect({ status: answer.status, code: answer.body?.error?.code }, where).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    }
  }

  const key = takesIdempotencyKey(o) && c.idempotencyKey?.valid ? c.idempotencyKey.key.trim() : undefined;
  expectStateKept(o, before, after, answer, key, where);
  expectNoPrototypePollution();
}

// ---- the properties ----

describe('fuzzing every documented REST route', () => {
  it('finds the routes in the documents, with the fixtures the fuzz needs', async () => {
    expect(apiOperations.length).toBeGreaterThanOrEqual(38);
    expect(new Set(apiOperations.flatMap((o) => o.op['x-required-scopes'] ?? [])).size).toBe(SCOPES.length);
    expect(apiOperations.filter((o) => jsonBodySchema(o)).length).toBeGreaterThanOrEqual(6);
    await expectFixtures(t, { bookings: 2, webhook_endpoints: 1, webhook_deliveries: 1, access_tokens: 1 });
  });

  it.each(apiOperations.map((o) => [o.name, o] as const))('%s', async (_name, o) => {
    await fuzzProperty(t, caseArb(o), jsonBodySchema(o) ? RUNS.withBody : RUNS.other, (c: RestCase) => runCase(o, c));
  }, 120_000);
});

// ---- the token endpoint ----

interface TokenCase {
  contentType: string | undefined;
  body: string;
  authorization: string | undefined;
  headers: Record<string, string>;
  invalid: string[];
}

const basicOf = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

const tokenFieldArb = (real: string) =>
  fc.oneof({ weight: 1, arbitrary: fc.constant({ value: real as unknown, valid: true }) }, { weight: 3, arbitrary: hostileString.map((value) => ({ value: value as unknown, valid: false })) });

/**
 * How an OAuth request (either endpoint) carries its fields: form-urlencoded, JSON, client
 * credentials in HTTP Basic, or broken (garbage Basic, malformed JSON, another content type, a
 * repeated parameter). `jsonKeys` are the names the hostile JSON values are put under.
 */
function oauthEncodingArb(jsonKeys: string[]) {
  return fc.record({
    encoding: fc.constantFrom('form', 'json', 'json-typed', 'basic', 'basic-garbage', 'malformed-json', 'wrong-type', 'duplicated'),
    basicGarbage: fc.oneof(
      garbageHeaderValue,
      hostileString.map((s) => Buffer.from(toWellFormed(s)).toString('base64')),
      fc.tuple(hostileString, hostileString).map(([a, b]) => Buffer.from(`${toWellFormed(a)}:${toWellFormed(b)}`).toString('base64')),
      fc.constantFrom('%', '%ZZ:x', `${owner.client_id}:%E0%A4%A`, `%:${owner.client_secret}`).map((s) => Buffer.from(s).toString('base64')),
    ),
    jsonValues: fc.array(fc.tuple(fc.constantFrom(...jsonKeys, ...PROTO_KEYS), hostileJsonText), { minLength: 1, maxLength: 3 }),
    malformed: malformedJsonText,
    wrongType: fc.constantFrom(...WRONG_CONTENT_TYPES.filter((x) => !x.startsWith('application/x-www-form-urlencoded')), undefined),
    requestId: fc.option(garbageHeaderValue),
  });
}

type OAuthEncoding = ReturnType<typeof oauthEncodingArb> extends fc.Arbitrary<infer E> ? E : never;

/** The request of `fields` (client_id and client_secret among them) in encoding `e`; `invalid` says why it must be refused. */
function oauthCase(fields: [string, unknown][], invalid: string[], e: OAuthEncoding): TokenCase {
  const headers: Record<string, string> = e.requestId === null ? {} : { 'x-request-id': e.requestId };
  const form = (pairs: [string, unknown][]) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(toWellFormed(String(v)))}`).join('&');
  const field = (name: string) => fields.find(([k]) => k === name)?.[1];
  const withoutClient = fields.filter(([k]) => k !== 'client_id' && k !== 'client_secret');
  switch (e.encoding) {
    case 'form':
      return { contentType: 'application/x-www-form-urlencoded', body: form(fields), authorization: undefined, headers, invalid };
    case 'json':
      return { contentType: 'application/json', body: jsonText(new Map(fields)), authorization: undefined, headers, invalid };
    case 'json-typed': {
      // Right names, hostile JSON values of any type.
      const map = new Map<string, unknown>(fields);
      for (const [k, text] of e.jsonValues) map.set(k, new Raw(text));
      return { contentType: 'application/json', body: jsonText(map), authorization: undefined, headers, invalid: ['hostile JSON values'] };
    }
    case 'basic':
      return {
        contentType: 'application/x-www-form-urlencoded',
        body: form(withoutClient),
        authorization: basicOf(encodeURIComponent(toWellFormed(String(field('client_id')))), encodeURIComponent(toWellFormed(String(field('client_secret'))))),
        headers,
        invalid,
      };
    case 'basic-garbage':
      return { contentType: 'application/x-www-form-urlencoded', body: form(withoutClient), authorization: `Basic ${e.basicGarbage}`, headers, invalid: ['garbage Basic credentials'] };
    case 'malformed-json':
      return { contentType: 'application/json', body: e.malformed, authorization: undefined, headers, invalid: ['malformed JSON'] };
    case 'wrong-type':
      return { contentType: e.wrongType, body: form(fields), authorization: undefined, headers, invalid: ['wrong content type'] };
    case 'duplicated':
      return { contentType: 'application/x-www-form-urlencoded', body: form([...fields, ['client_id', field('client_id')]]), authorization: undefined, headers, invalid: ['a repeated parameter'] };
  }
}

/** Sends an OAuth case to `path`, from an address of its own (the 20-per-minute limit is not what is fuzzed). */
function sendOAuthCase(path: string, c: TokenCase): Promise<{ answer: Answer; before: PartnerState; after: PartnerState }> {
  const headers: Record<string, string> = { ...c.headers };
  if (c.contentType !== undefined) headers['content-type'] = c.contentType;
  if (c.authorization !== undefined) headers.authorization = c.authorization;
  return exchange(t, path, { method: 'POST', headers, body: c.body, ip: uniqueIp() });
}

const tokenCaseArb: fc.Arbitrary<TokenCase> = fc
  .record({
    grantType: fc.oneof(
      { weight: 1, arbitrary: fc.constant({ value: 'client_credentials' as unknown, valid: true }) },
      { weight: 2, arbitrary: fc.oneof(hostileString, fc.constantFrom('password', 'authorization_code', 'CLIENT_CREDENTIALS', 'client_credentials ')).map((value) => ({ value: value as unknown, valid: false })) },
    ),
    clientId: tokenFieldArb(owner.client_id),
    clientSecret: tokenFieldArb(owner.client_secret),
    scope: fc.option(fc.oneof(hostileString, fc.constantFrom(...SCOPES), fc.constant(SCOPES.join(' ')), fc.constant(`${SCOPES[0]} admin`))),
    e: oauthEncodingArb(['grant_type', 'client_id', 'client_secret', 'scope']),
  })
  .map((r): TokenCase => {
    const fields: [string, unknown][] = [
      ['grant_type', r.grantType.value],
      ['client_id', r.clientId.value],
      ['client_secret', r.clientSecret.value],
      ...(r.scope === null ? [] : [['scope', r.scope] as [string, unknown]]),
    ];
    const invalid = [r.grantType, r.clientId, r.clientSecret].every((f) => f.valid) ? [] : ['a bad grant_type, client_id or client_secret'];
    return oauthCase(fields, invalid, r.e);
  });

describe('fuzzing POST /channel/v1/oauth/token', () => {
  it('answers hostile token requests in the RFC 6749 form and issues nothing it should not', async () => {
    expect(tokenOperation).toBeDefined();
    await fuzzProperty(t, tokenCaseArb, 120, async (c: TokenCase) => {
      const { answer, before, after } = await sendOAuthCase('/channel/v1/oauth/token', c);
      const where = JSON.stringify({ ...c, body: c.body.slice(0, 300) }).slice(0, 1200);
      expectDocumentedAnswer(tokenOperation, answer, where, true);
      if (c.invalid.length) {
        // json-typed may leave every field as it was (a hostile value for an unused key).
        const mayPass = c.invalid[0] === 'hostile JSON values';
        if (!mayPass) expect(answer.status >= 400 && answer.status < 500, `${where}: must be refused, got ${answer.status}`).toBe(true);
      }
      if (answer.status === 200) {
        expect(answer.body.token_type, where).toBe('Bearer');
        expect(rowCounts(after).access_tokens, where).toBe(rowCounts(before).access_tokens! + 1);
      } else {
        expectNoChanges(stateChanges(before, after), answer, where);
      }
      expectNoPrototypePollution();
    });
  }, 120_000);
});

// ---- the revocation endpoint ----

describe('fuzzing POST /channel/v1/oauth/revoke', () => {
  it("answers hostile revocations in the RFC 6749 form and revokes nothing but the client's own token", async () => {
    expect(revokeOperation).toBeDefined();
    const mint = (who: { client_id: string; client_secret: string }) => mintToken(t, who, uniqueIp());
    // The owner's token this fuzz may revoke (not `bearer`, which the other properties use), and a
    // token of another channel that no request of the owner may revoke.
    const sacrificial = await mint(owner);
    const stranger = await t.channel({ name: 'Fuzz Stranger' });
    const strangers = await mint(stranger);
    const revokeCaseArb = fc
      .record({
        token: fc.oneof(
          { weight: 2, arbitrary: fc.constantFrom(sacrificial, strangers, owner.api_key, `${sacrificial} `).map((value) => ({ value: value as unknown, valid: true })) },
          { weight: 2, arbitrary: hostileString.map((value) => ({ value: value as unknown, valid: value !== '' })) },
        ),
        hint: fc.option(fc.oneof(hostileString, fc.constantFrom('access_token', 'refresh_token', 'api_key'))),
        clientId: tokenFieldArb(owner.client_id),
        clientSecret: tokenFieldArb(owner.client_secret),
        e: oauthEncodingArb(['token', 'token_type_hint', 'client_id', 'client_secret']),
      })
      .map((r): TokenCase => {
        const fields: [string, unknown][] = [
          ['token', r.token.value],
          ['client_id', r.clientId.value],
          ['client_secret', r.clientSecret.value],
          ...(r.hint === null ? [] : [['token_type_hint', r.hint] as [string, unknown]]),
        ];
        const invalid = [r.token, r.clientId, r.clientSecret].every((f) => f.valid) ? [] : ['a bad token, client_id or client_secret'];
        return oauthCase(fields, invalid, r.e);
      });
    const prisma = t.service.deps.db.prisma;
    const rowOf = (token: string) => prisma.accessToken.findUniqueOrThrow({ where: { tokenHash: digest(token) } });
    await fuzzProperty(t, revokeCaseArb, 120, async (c: TokenCase) => {
      const sacrificialBefore = (await rowOf(sacrificial)).revokedAt;
      const { answer, before, after } = await sendOAuthCase('/channel/v1/oauth/revoke', c);
      const where = JSON.stringify({ ...c, body: c.body.slice(0, 300) }).slice(0, 1200);
      expectDocumentedAnswer(revokeOperation, answer, where, true);
      if (c.invalid.length && c.invalid[0] !== 'hostile JSON values') {
        expect(answer.status >= 400 && answer.status < 500, `${where}: must be refused, got ${answer.status}`).toBe(true);
      }
      if (answer.status === 200) expect(answer.text, `${where}: no content`).toBe('');
      // The only row a revocation may change: the owner's sacrificial token, revoked once, by a 200.
      const changes = stateChanges(before, after);
      if (changes.access_tokens && answer.status === 200 && sacrificialBefore === null && (await rowOf(sacrificial)).revokedAt !== null) {
        // Exactly one row differs, and it is that token's.
        const rows = (text: string) => (JSON.parse(text) as Json[]).map((r) => JSON.stringify(r));
        const gone = rows(before.access_tokens!).filter((r) => !rows(after.access_tokens!).includes(r));
        const { added } = addedRows(before, after, 'access_tokens');
        const only = [...gone, ...added.map((r) => JSON.stringify(r))].every((r) => (JSON.parse(r) as Json).token_hash === digest(sacrificial));
        if (gone.length === 1 && added.length === 1 && only) delete changes.access_tokens;
      }
      expectNoChanges(changes, answer, where);
      expect((await rowOf(strangers)).revokedAt, `${where}: another channel's token revoked`).toBeNull();
      expect((await rowOf(bearer)).revokedAt, where).toBeNull();
      expectNoPrototypePollution();
    });
    // The stranger's token still works, and the API key sent for revocation too.
    expect((await send('/channel/v1/channels/me', { headers: { authorization: `Bearer ${strangers}` } })).status).toBe(200);
    expect((await send('/channel/v1/channels/me', { headers: apiKey(owner) })).status).toBe(200);
  }, 120_000);
});

// ---- regressions: the defects this fuzz found, fixed, shown by fixed requests ----

describe('regressions found by the fuzz', () => {
  const call = (method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) =>
    send(path, {
      method,
      headers: { ...apiKey(owner), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
      ...(init.body === undefined ? {} : { body: init.body }),
    });

  it('a NUL in a booking text field is 400 VALIDATION_ERROR naming the field, not a failed write (500)', async () => {
    const before = await partnerState(t);
    const cases: [string, string, string, string][] = [
      ['PATCH', `/channel/v1/bookings/${REAL.booking}`, JSON.stringify({ booker_name: 'a\u0000b' }), 'booker_name'],
      ['PATCH', `/channel/v1/bookings/${REAL.booking}`, JSON.stringify({ special_requests: '\u0000' }), 'special_requests'],
      ['POST', '/channel/v1/bookings', JSON.stringify({ book_token: offer.bookToken, booker_name: 'Guest', guest_last_name: 'x\u0000' }), 'guest_last_name'],
      ['GET', `/channel/v1/bookings?affiliate_reference_id=${encodeURIComponent('a\u0000')}`, '', 'affiliate_reference_id'],
    ];
    for (const [method, path, body, field] of cases) {
      const answer = await call(method, path, body ? { body } : {});
      expect({ status: answer.status, code: answer.body?.error?.code, fields: answer.body?.error?.details?.fields?.map((f: Json) => f.field) }, `${method} ${path}`).toEqual({
        status: 400,
        code: 'VALIDATION_ERROR',
        fields: [field],
      });
    }
    expect(stateChanges(before, await partnerState(t))).toEqual({});
  });

  it('lone surrogates in a booking or webhook text field are 400 VALIDATION_ERROR (two in a row failed the embedded database)', async () => {
    const before = await partnerState(t);
    const cases: [string, string, string, string][] = [
      ['POST', '/channel/v1/webhooks', '{"url":"http://127.0.0.1:9/x","description":"\\udc00\\udc00x"}', 'description'],
      ['PATCH', `/channel/v1/webhooks/${REAL.webhook}`, '{"description":"\\ud800"}', 'description'],
      ['PATCH', `/channel/v1/bookings/${REAL.booking}`, '{"guest_first_name":"\\udc00\\udc00"}', 'guest_first_name'],
    ];
    for (const [method, path, body, field] of cases) {
      const answer = await call(method, path, { body });
      expect({ status: answer.status, code: answer.body?.error?.code, fields: answer.body?.error?.details?.fields?.map((f: Json) => f.field) }, `${method} ${path}`).toEqual({
        status: 400,
        code: 'VALIDATION_ERROR',
        fields: [field],
      });
    }
    expect(stateChanges(before, await partnerState(t))).toEqual({});
  });

  it('a body nested deeper than the call stack, with an Idempotency-Key, is a 400 and not a 500', async () => {
    const deep = `{"book_token":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const answer = await call('POST', '/channel/v1/bookings', { body: deep, headers: { 'idempotency-key': `deep-${crypto.randomUUID()}` } });
    expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
  });

  it('an Idempotency-Key keeps a refusal that quotes a NUL the client sent, and replays it', async () => {
    const key = `nul-${crypto.randomUUID()}`;
    const first = await call('PUT', '/channel/v1/bookings/%00/cancel', { headers: { 'idempotency-key': key } });
    expect({ status: first.status, code: first.body?.error?.code }).toEqual({ status: 404, code: 'NOT_FOUND' });
    // Before the fix the answer could not be stored: the first was a 500 and the key stayed held (409 IN_PROGRESS).
    const again = await call('PUT', '/channel/v1/bookings/%00/cancel', { headers: { 'idempotency-key': key } });
    expect({ status: again.status, code: again.body?.error?.code, replayed: again.headers.get('idempotent-replayed') }).toEqual({ status: 404, code: 'NOT_FOUND', replayed: 'true' });
  });

  it('an Idempotency-Key keeps a stored answer that quotes NUL or lone surrogates (PostgreSQL JSON holds neither), with U+FFFD in their place', async () => {
    const key = `quote-${crypto.randomUUID()}`;
    const fingerprint = fingerprintOf(['POST', '/x', { '\ud800': 1 }]);
    expect(await claim(t.service.deps, owner.user_id, key, fingerprint, 60_000)).toEqual({ kind: 'run' });
    const body = { error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: '(body)', reason: 'Unrecognized key: "\ud800\udc00\udc00"' }] }, message: 'a\u0000b' } };
    await settle(t.service.deps, owner.user_id, key, { status: 400, body });
    expect(await claim(t.service.deps, owner.user_id, key, fingerprint, 60_000)).toEqual({
      kind: 'replay',
      response: { status: 400, body: { error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: '(body)', reason: 'Unrecognized key: "\ud800\udc00\ufffd"' }] }, message: 'a\ufffdb' } } },
    });
    await t.service.deps.db.prisma.idempotencyKey.deleteMany({ where: { key } });
  });

  it('v2 POST /bookings and PUT /bookings/cancel document the Idempotency-Key they honour', () => {
    for (const [path, method] of [['/bookings', 'post'], ['/bookings/cancel', 'put']] as const) {
      const names = ((docs.v2.paths[path][method].parameters ?? []) as Json[]).filter((p) => p.in === 'header').map((p) => p.name.toLowerCase());
      expect(names, `v2 ${method} ${path}`).toContain('idempotency-key');
    }
  });

  it('GET /tax-invoices is 501 whatever the planned query holds (a repeated year was an undocumented 400)', async () => {
    const answer = await call('GET', '/channel/v1/tax-invoices?year=&year=2026&month=%00');
    expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status: 501, code: 'NOT_IMPLEMENTED' });
  });

  it('the token endpoint answers malformed Basic credentials and a NUL client_id as invalid_client, not server_error', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const basic of ['%ZZ:x', `${owner.client_id}:%E0%A4%A`, '%:%']) {
      const answer = await send('/channel/v1/oauth/token', {
        method: 'POST',
        headers: { ...form, authorization: basicOf(basic.split(':')[0]!, basic.split(':')[1]!) },
        body: 'grant_type=client_credentials',
        ip: uniqueIp(),
      });
      expect({ basic, status: answer.status, error: answer.body?.error }).toEqual({ basic, status: 401, error: 'invalid_client' });
    }
    const nul = await send('/channel/v1/oauth/token', {
      method: 'POST',
      headers: form,
      body: 'grant_type=client_credentials&client_id=a%00b&client_secret=x',
      ip: uniqueIp(),
    });
    expect({ status: nul.status, error: nul.body?.error }).toEqual({ status: 401, error: 'invalid_client' });
  });
});

// ---- defects the fuzz found, fixed since ----

describe('defects the fuzz found, fixed since (each asserts the right answer)', () => {
  it('channel-profile-text: PUT /channels/me with a NUL in name is 400 VALIDATION_ERROR', async () => {
    const answer = await send('/channel/v1/channels/me', {
      method: 'PUT',
      headers: { ...apiKey(owner), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Fuzz\u0000Owner' }),
    });
    expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
  });

  it('channel-profile-text: PUT /channels/me with lone surrogates in company is 400 VALIDATION_ERROR (a 500 on PGlite, stored as U+FFFD on PostgreSQL)', async () => {
    const answer = await send('/channel/v1/channels/me', {
      method: 'PUT',
      headers: { ...apiKey(owner), 'content-type': 'application/json' },
      body: '{"company":"\\udc00\\udc00x"}',
    });
    expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
  });

});
