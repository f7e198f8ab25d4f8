import fc from 'fast-check';
import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
  type IntrospectionQuery,
} from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { day } from '../helpers/flow.js';
import {
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
  HOSTILE_STRINGS,
  hostileJsonText,
  hostileNumber,
  hostileString,
  malformedJsonText,
  PROTO_KEYS,
  send as sendTo,
  startFuzzService,
  stateChanges,
  tainted,
  toWellFormed,
  type Answer,
  type Json,
  type SendOptions,
} from '../helpers/fuzz.js';
import { apiKey } from '../helpers/service.js';

/**
 * Property-based fuzzing of the GraphQL endpoint (issue 7 part 5). Every root query and mutation
 * field of the schema the service serves (introspection: a new field joins the day it is added) is
 * called with hostile argument values (wrong types, huge and NUL-laden strings, unicode, numbers
 * beyond every range, invalid enum values, deeply nested and prototype-polluting input objects),
 * passed as variables, as inline literals, or through wrongly typed variables; and the endpoint
 * itself gets malformed documents, malformed JSON bodies, wrong content types and methods, and
 * garbage credentials. Whatever comes:
 *
 * - no 5xx, and no INTERNAL_ERROR;
 * - every error carries `extensions.code`;
 * - the HTTP status is what GraphQL over HTTP prescribes for `application/graphql-response+json`:
 *   4xx for a request error (no `data`), 200 once execution started (`data` present, even null),
 *   and the answer is in the media type asked for;
 * - nothing a partner can change changed, unless a mutation succeeded (data, no error, and not a
 *   DomainError result); no prototype in this process (the service runs in it) got polluted.
 *
 * Defects it found have tests of their own at the end, asserting the fixed answer. Subscriptions are not
 * fuzzed here (a live one never ends). The outbox dispatcher is off (EVENTS_POLL_INTERVAL_MS=0), so
 * a snapshot after a response shows only what the request did.
 */

const GRAPHQL_RESPONSE = 'application/graphql-response+json';
const BODY_LIMIT = FUZZ_BODY_LIMIT;
const RUNS_PER_FIELD = 30;
const RUNS_MALFORMED = 150;

// ---- the service, the partner's resources and the schema it serves ----
// At the top level (not in beforeAll): the root fields must be known when the tests are collected,
// one test per field.

const { t, owner, bearer, booked, offer, bookingId, webhookId, deliveryId } = await startFuzzService();
afterAll(() => t.close());

const REAL = {
  booking: bookingId,
  webhook: webhookId,
  delivery: deliveryId,
  property: booked.propertyId,
  /** The booking's global id (Node.id), for `node` and `nodes`. */
  bookingNode: await (async () => {
    const res = await t.graphql('query ($id: ID!) { booking(id: $id) { id } }', { id: bookingId }, apiKey(owner));
    expect(res.errors).toBeUndefined();
    return (res.data as { booking: { id: string } }).booking.id;
  })(),
};

const schema: GraphQLSchema = await (async () => {
  const res = await t.graphql(getIntrospectionQuery(), undefined, apiKey(owner));
  expect(res.errors).toBeUndefined();
  return buildClientSchema(res.data as unknown as IntrospectionQuery);
})();

interface RootField {
  operation: 'query' | 'mutation';
  field: GraphQLField<unknown, unknown>;
  name: string;
}

const rootFields: RootField[] = [
  ...Object.values(schema.getQueryType()!.getFields()).map((field) => ({ operation: 'query' as const, field, name: `query ${field.name}` })),
  ...Object.values(schema.getMutationType()!.getFields()).map((field) => ({ operation: 'mutation' as const, field, name: `mutation ${field.name}` })),
];

// ---- values: one tree, written as JSON (variables) or as a GraphQL literal ----

type Value =
  | { k: 'string'; v: string }
  | { k: 'number'; text: string }
  | { k: 'bool'; v: boolean }
  | { k: 'null' }
  | { k: 'enum'; name: string }
  | { k: 'list'; items: Value[] }
  | { k: 'object'; fields: [string, Value][] }
  /** JSON text as it is (variables only; as a literal, its shape in GraphQL syntax). */
  | { k: 'raw'; json: string; literal: string };

const str = (v: string): Value => ({ k: 'string', v });
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

function toJson(value: Value): string {
  switch (value.k) {
    case 'string':
      return JSON.stringify(value.v);
    case 'number':
      return value.text;
    case 'bool':
      return String(value.v);
    case 'null':
      return 'null';
    case 'enum':
      return JSON.stringify(value.name);
    case 'list':
      return `[${value.items.map(toJson).join(',')}]`;
    case 'object':
      return `{${value.fields.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`;
    case 'raw':
      return value.json;
  }
}

function toLiteral(value: Value): string {
  switch (value.k) {
    case 'string':
      // JSON's escapes are GraphQL's; a lone surrogate becomes an escape GraphQL refuses (a syntax error).
      return JSON.stringify(value.v);
    case 'number':
      return value.text;
    case 'bool':
      return String(value.v);
    case 'null':
      return 'null';
    case 'enum':
      return NAME.test(value.name) && !['true', 'false', 'null'].includes(value.name) ? value.name : JSON.stringify(value.name);
    case 'list':
      return `[${value.items.map(toLiteral).join(' ')}]`;
    case 'object':
      return `{${value.fields.map(([k, v]) => `${k}: ${toLiteral(v)}`).join(' ')}}`;
    case 'raw':
      return value.literal;
  }
}

const deepValue: fc.Arbitrary<Value> = fc
  .tuple(fc.constantFrom('list', 'object'), fc.integer({ min: 50, max: 5_000 }))
  .map(([kind, depth]) =>
    kind === 'list'
      ? { k: 'raw', json: '['.repeat(depth) + ']'.repeat(depth), literal: '['.repeat(depth) + ']'.repeat(depth) }
      : { k: 'raw', json: '{"a":'.repeat(depth) + '1' + '}'.repeat(depth), literal: '{a: '.repeat(depth) + '1' + '}'.repeat(depth) },
  );

const numberValue: fc.Arbitrary<Value> = fc.oneof(
  hostileNumber.map((n) => ({ k: 'number' as const, text: JSON.stringify(n) })),
  fc.constantFrom('1e400', '-1e400', '123456789012345678901234567890', '-0', '0.1e-400').map((text) => ({ k: 'number' as const, text })),
);

/** Any value at all, of any kind: what a field of another type gets. */
const anyValue: fc.Arbitrary<Value> = fc.letrec<{ value: Value }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 5, arbitrary: hostileString.map(str) },
    { weight: 3, arbitrary: numberValue },
    { weight: 1, arbitrary: fc.boolean().map((v): Value => ({ k: 'bool', v })) },
    { weight: 1, arbitrary: fc.constant<Value>({ k: 'null' }) },
    { weight: 1, arbitrary: deepValue },
    { weight: 2, arbitrary: fc.array(tie('value'), { maxLength: 4 }).map((items): Value => ({ k: 'list', items })) },
    {
      weight: 2,
      arbitrary: fc
        .array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.string({ maxLength: 6 })), tie('value')), { maxLength: 3 })
        .map((fields): Value => ({ k: 'object', fields })),
    },
    { weight: 1, arbitrary: hostileJsonText.map((json): Value => ({ k: 'raw', json, literal: json })) },
  ),
})).value;

/** A value of `type` that passes, as far as a type can say: real ids and tokens where the name asks for one. */
function sampleValue(type: GraphQLInputType, name: string, field: string): Value {
  if (isNonNullType(type)) return sampleValue(type.ofType, name, field);
  // By name first (a list sample for a list, a single one for a single value).
  const named = SAMPLE_BY_NAME[name];
  if (named !== undefined && isListType(type) === (named.k === 'list')) return named;
  if (isListType(type)) return { k: 'list', items: [sampleValue(type.ofType, name, field)] };
  if (isEnumType(type)) return { k: 'enum', name: type.getValues()[0]!.name };
  if (isInputObjectType(type)) {
    return { k: 'object', fields: Object.values(type.getFields()).map((f) => [f.name, sampleValue(f.type, f.name, field)] as [string, Value]) };
  }
  const scalar = getNamedType(type).name;
  switch (scalar) {
    case 'ID':
      if (/delivery/i.test(field) && name === 'id') return str(REAL.delivery);
      if (/webhook/i.test(field) || name === 'webhookId') return str(REAL.webhook);
      // property(id:) takes the propertyId (or the global id); node and nodes take global ids.
      if (field === 'property' && name === 'id') return str(String(REAL.property));
      if (field === 'node' || field === 'nodes') return str(REAL.bookingNode);
      return str(REAL.booking);
    case 'Int':
      return { k: 'number', text: '1' };
    case 'Float':
      return { k: 'number', text: '1.5' };
    case 'Boolean':
      return { k: 'bool', v: true };
    case 'DateTime':
      return str(new Date().toISOString());
    case 'Date':
      return str(day(30));
    case 'Money':
      return { k: 'number', text: '1000' };
    default:
      return str('x');
  }
}

const SAMPLE_BY_NAME: Record<string, Value> = {
  bookToken: str(offer.bookToken),
  token: str(offer.priceCheckToken),
  url: str('http://127.0.0.1:9/fuzz-sample'),
  checkin: str(day(30)),
  checkout: str(day(32)),
  bookerEmail: str('guest@example.com'),
  email: str('guest@example.com'),
  guestPhone: str('+82 10 1234 5678'),
  guestCountry: str('KR'),
  bankCode: str('KB004'),
  accountNumber: str('123-456-7890'),
  propertyId: { k: 'number', text: String(booked.propertyId) },
  propertyIds: { k: 'list', items: [{ k: 'number', text: String(booked.propertyId) }] },
  adults: { k: 'number', text: '2' },
  occupancy: { k: 'list', items: [str('2')] },
  checkIn: str(day(30)),
  checkOut: str(day(32)),
  first: { k: 'number', text: '10' },
  events: { k: 'list', items: [{ k: 'enum', name: 'RESERVATION_NO_SHOW' }] },
};

/** A hostile value of `type`: the right kind with a bad value, or a value of another kind. */
function hostileValue(type: GraphQLInputType, name: string, field: string, depth = 0, rightKindOnly = false): fc.Arbitrary<Value> {
  const inner = isNonNullType(type) ? type.ofType : type;
  const sample = sampleValue(inner, name, field);
  const rightKind = ((): fc.Arbitrary<Value> => {
    if (isListType(inner)) {
      const item = depth < 2 ? hostileValue(inner.ofType, name, field, depth + 1, rightKindOnly) : anyValue;
      return fc.oneof(
        fc.array(item, { minLength: 1, maxLength: 4 }).map((items): Value => ({ k: 'list', items })),
        fc.integer({ min: 101, max: 3_000 }).map((n): Value => ({ k: 'list', items: Array.from({ length: n }, () => sampleValue(inner.ofType, name, field)) })),
        fc.constant<Value>({ k: 'list', items: [] }),
      );
    }
    if (isEnumType(inner)) {
      const names = inner.getValues().map((v) => v.name);
      // No invalid name gets past coercion: any value of the enum, then.
      if (rightKindOnly) return fc.constantFrom(...names).map((n): Value => ({ k: 'enum', name: n }));
      return fc.oneof(
        hostileString.filter((s) => !names.includes(s)).map((s): Value => ({ k: 'enum', name: s })),
        fc.constantFrom(...names).map((n): Value => ({ k: 'enum', name: n.toUpperCase() === n ? n.toLowerCase() : n.toUpperCase() })),
        fc.constantFrom(...names).map((n): Value => ({ k: 'enum', name: n.replace(/_/g, '.') })),
      );
    }
    if (isInputObjectType(inner)) {
      const fields = Object.values(inner.getFields());
      const base = sample.k === 'object' ? sample.fields : [];
      const changed = fc.constantFrom(...fields).chain((f) =>
        fc.tuple(fc.constant(f.name), depth < 3 ? fc.oneof(hostileValue(f.type, f.name, field, depth + 1), fc.constant<Value | undefined>(undefined)) : anyValue),
      );
      const build = (changes: [string, Value | undefined][], extra: [string, Value][]): Value => {
        const out = new Map(base);
        for (const [key, value] of changes) {
          if (value === undefined) out.delete(key);
          else out.set(key, value);
        }
        return { k: 'object', fields: [...out, ...extra] };
      };
      // Mostly one field of the right kind gone bad (so the resolver's own rules are what answers);
      // else several changes, fields removed, unknown and prototype keys (what coercion refuses).
      const oneField = fc
        .constantFrom(...fields)
        .chain((f) => (depth < 3 ? rightKindOf(f.type, f.name, field, depth + 1) : anyValue).map((v) => build([[f.name, v]], [])));
      const anything = fc
        .record({
          changes: fc.array(changed, { minLength: 1, maxLength: 2 }),
          extra: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.constantFrom('unknownField', 'id', 'channelId', 'balance', 'tier')), anyValue), { maxLength: 2 }),
        })
        .map(({ changes, extra }) => build(changes, extra));
      return fc.oneof({ weight: 3, arbitrary: oneField }, { weight: 1, arbitrary: anything });
    }
    const scalar = getNamedType(inner).name;
    switch (scalar) {
      case 'Int':
        if (rightKindOnly) return fc.constantFrom(-(2 ** 31), -1, 0, 101, 1000, 2 ** 31 - 1).map((n): Value => ({ k: 'number', text: String(n) }));
        return fc.oneof(
          fc.constantFrom(-1, 0, -(2 ** 31), 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 101, 1000, 1_000_000).map((n): Value => ({ k: 'number', text: String(n) })),
          fc.integer().map((n): Value => ({ k: 'number', text: String(n) })),
        );
      case 'Float':
        return rightKindOnly ? hostileNumber.map((n): Value => ({ k: 'number', text: JSON.stringify(n) })) : numberValue;
      case 'Money':
        return rightKindOnly ? fc.constantFrom(-1, 0, Number.MAX_SAFE_INTEGER).map((n): Value => ({ k: 'number', text: String(n) })) : numberValue;
      case 'Boolean':
        return fc.boolean().map((v): Value => ({ k: 'bool', v }));
      default: {
        if (rightKindOnly && scalar === 'DateTime') {
          // Instants JavaScript parses, at the edges of what it and PostgreSQL can hold.
          return fc
            .constantFrom('+275760-09-13T00:00:00.000Z', '-271821-04-20T00:00:00.000Z', '0001-01-01T00:00:00Z', '1970-01-01', '9999-12-31T23:59:59.999Z', '2030-02-28T24:00:00Z', '1')
            .map(str);
        }
        if (rightKindOnly && scalar === 'Date') {
          // Calendar days the scalar takes, at the edges of what JavaScript and PostgreSQL hold, in the past and far ahead.
          return fc.constantFrom('0001-01-01', '1970-01-01', '2024-02-29', '9999-12-31', day(-1), day(0), day(400)).map(str);
        }
        const base = sample.k === 'string' ? sample.v : 'x';
        return fc.oneof({ weight: 3, arbitrary: hostileString.map(str) }, { weight: 3, arbitrary: tainted(base).map(str) });
      }
    }
  })();
  if (rightKindOnly) return rightKind;
  return fc.oneof({ weight: 5, arbitrary: rightKind }, { weight: 1, arbitrary: anyValue }, { weight: 1, arbitrary: fc.constant<Value>({ k: 'null' }) });
}

/** A hostile value of the kind `type` takes (a string for a String, an object for an input object): past coercion, into the resolver. */
function rightKindOf(type: GraphQLInputType, name: string, field: string, depth: number): fc.Arbitrary<Value> {
  return hostileValue(type, name, field, depth, true);
}

// ---- requests ----

type Credential = { kind: 'key' } | { kind: 'bearer' } | { kind: 'garbage'; headers: Record<string, string> };

const credentialArb: fc.Arbitrary<Credential> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'key' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'bearer' as const }) },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        garbageHeaderValue.map((v) => ({ 'x-api-key': v })),
        garbageHeaderValue.map((v) => ({ authorization: `Bearer ${v}` })),
        garbageHeaderValue.map((v) => ({ authorization: v })),
        fc.constant({ 'x-api-key': owner.api_key.slice(0, -1) }),
        fc.constant({ authorization: `Bearer ${owner.api_key}` }),
      )
      // The header must be non-empty to count for CSRF prevention; an empty one is no credential (and no preflight).
      .map((headers) => ({ kind: 'garbage' as const, headers })),
  },
);

function credentialHeaders(c: Credential): Record<string, string> {
  if (c.kind === 'key') return { 'x-api-key': owner.api_key };
  if (c.kind === 'bearer') return { authorization: `Bearer ${bearer}` };
  return c.headers;
}

interface FieldCase {
  credential: Credential;
  accept: string;
  mode: 'variables' | 'inline' | 'mistyped-variables';
  args: [name: string, value: Value | undefined][];
}

/** Every argument of `field`, at least one of them hostile; the others real-looking, hostile or left out. */
function fieldCaseArb(root: RootField): fc.Arbitrary<FieldCase> {
  const args = root.field.args as readonly GraphQLArgument[];
  const forced = args.length ? fc.nat({ max: args.length - 1 }) : fc.constant(-1);
  return fc
    .record({
      credential: credentialArb,
      accept: fc.constantFrom(GRAPHQL_RESPONSE, GRAPHQL_RESPONSE, GRAPHQL_RESPONSE, 'application/json', `${GRAPHQL_RESPONSE}, application/json;q=0.9`),
      mode: fc.constantFrom('variables', 'variables', 'inline', 'mistyped-variables'),
      forced,
      values: fc.tuple(
        ...args.map((arg) =>
          fc.record({
            hostile: hostileValue(arg.type, arg.name, root.field.name),
            role: fc.constantFrom('sample', 'hostile', ...(isNonNullType(arg.type) ? [] : ['omitted' as const])),
          }),
        ),
      ),
    })
    .map(({ credential, accept, mode, forced, values }) => ({
      credential,
      accept,
      mode,
      args: args.map((arg, i): [string, Value | undefined] => {
        const { hostile, role } = values[i]!;
        if (i === forced || role === 'hostile') return [arg.name, hostile];
        if (role === 'omitted') return [arg.name, undefined];
        return [arg.name, sampleValue(arg.type, arg.name, root.field.name)];
      }),
    }));
}

/** The document and variables of a case: `{ field(args) { __typename } }`. */
function documentOf(root: RootField, c: FieldCase): { query: string; variables: string } {
  const selection = isCompositeType(getNamedType(root.field.type)) ? ' { __typename }' : '';
  const given = c.args.filter(([, v]) => v !== undefined) as [string, Value][];
  const types = new Map((root.field.args as readonly GraphQLArgument[]).map((a) => [a.name, String(a.type)]));
  if (c.mode === 'inline') {
    const args = given.map(([name, v]) => `${name}: ${toLiteral(v)}`).join(', ');
    return { query: `${root.operation} Fuzz { ${root.field.name}${args ? `(${args})` : ''}${selection} }`, variables: '{}' };
  }
  // Variables of the argument's type, or (mistyped) of another type: validation must refuse them.
  const declared = (name: string) => (c.mode === 'mistyped-variables' ? (types.get(name)!.startsWith('String') ? 'Int' : 'String') : types.get(name)!);
  const defs = given.map(([name]) => `$${name}: ${declared(name)}`).join(', ');
  const args = given.map(([name]) => `${name}: $${name}`).join(', ');
  return {
    query: `${root.operation} Fuzz${defs ? `(${defs})` : ''} { ${root.field.name}${args ? `(${args})` : ''}${selection} }`,
    variables: `{${given.map(([name, v]) => `${JSON.stringify(name)}:${toJson(v)}`).join(',')}}`,
  };
}

// ---- checking an answer ----

/** A live subscription would never end; none is meant to start here, and the timeout makes one fail rather than hang. */
const SEND: SendOptions = {
  timeoutMs: 10_000,
  parse: (text, contentType) => (contentType.startsWith('text/event-stream') ? fromEventStream(text) : JSON.parse(text)),
};

const send = (path: string, init: RequestInit) => sendTo(t, path, init, SEND);

/** GraphQL over SSE: the result of the one `next` event of a query or mutation (and nothing after `complete`). */
function fromEventStream(text: string): Json {
  const events = text
    .split(/\n\n/)
    .map((block) => Object.fromEntries(block.split('\n').filter((l) => l.includes(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()])))
    .filter((e) => e.event);
  const next = events.filter((e) => e.event === 'next');
  expect(events.map((e) => e.event), `event stream ${text.slice(0, 200)}`).toEqual(['next', 'complete']);
  return JSON.parse(next[0]!.data!);
}

/**
 * A GraphQL answer as GraphQL over HTTP prescribes (for `accept`), with a code on every error
 * and no INTERNAL_ERROR. A refusal before GraphQL (the service-wide 413 body limit) is in the
 * REST error envelope (docs/spec/channel-api.md §2.1).
 */
function expectGraphQLAnswer(answer: Answer, accept: string | undefined, where: string): void {
  const { status, body } = answer;
  expectServed(answer, where);
  // Nothing the client accepts can be sent (Accept: text/csv, garbage): 406, and no body can be in a form it reads.
  if (status === 406 && !acceptsJson(accept) && answer.text === '') return;
  if (status === 413) {
    expect({ code: body?.error?.code, limit: body?.error?.details?.limit_bytes, meta: typeof body?.meta?.request_id }, where).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      limit: BODY_LIMIT,
      meta: 'string',
    });
    expectErrorEnvelope(answer, where);
    return;
  }
  // A method /graphql does not serve (PUT, PATCH, DELETE): refused before GraphQL, in the envelope.
  // (A GET of a mutation is Yoga's own 405, Allow: POST, a GraphQL request error, checked below.)
  if (status === 405 && body?.error !== undefined) {
    expect({ code: body?.error?.code, allow: answer.headers.get('allow'), meta: typeof body?.meta?.request_id }, where).toEqual({
      code: 'METHOD_NOT_ALLOWED',
      allow: 'GET, POST, OPTIONS',
      meta: 'string',
    });
    expectErrorEnvelope(answer, where);
    return;
  }
  expect(body !== null && typeof body === 'object' && !Array.isArray(body), `${where}: a GraphQL response object: ${status} ${answer.text.slice(0, 300)}`).toBe(true);
  expect(Object.keys(body).every((k) => ['data', 'errors', 'extensions'].includes(k)), `${where}: response keys ${Object.keys(body)}`).toBe(true);
  const eventStream = accept === 'text/event-stream';
  // Asked for, it must be application/graphql-response+json; with no preference (no Accept, */*), the
  // rules are those of the media type the server chose (GraphQL over HTTP: no Accept means application/json).
  const asked = accept?.startsWith(GRAPHQL_RESPONSE) ? GRAPHQL_RESPONSE : accept?.startsWith('application/json') ? 'application/json' : null;
  // An event stream once it runs; a request refused before it runs is a 4xx with its errors.
  if (eventStream && status === 200) expect(answer.contentType, `${where}: media type`).toContain('text/event-stream');
  else if (asked) expect(answer.contentType, `${where}: media type`).toContain(asked);
  else if (accept === undefined) expect(answer.contentType, `${where}: no Accept is application/json`).toContain('application/json');
  const wantsGraphQLResponse = answer.contentType.startsWith(GRAPHQL_RESPONSE);
  const errors = (body.errors ?? []) as Json[];
  expect(Array.isArray(errors), `${where}: errors is a list`).toBe(true);
  if (!('data' in body)) expect(errors.length, `${where}: a response without data has errors`).toBeGreaterThan(0);
  for (const error of errors) {
    expect(typeof error.message, `${where}: error.message`).toBe('string');
    expect(error.extensions?.code, `${where}: every error has extensions.code: ${JSON.stringify(error).slice(0, 300)}`).toMatch(/^[A-Z][A-Z0-9_]*$/);
    expect(error.extensions.code, `${where}: ${error.message}`).not.toBe('INTERNAL_ERROR');
  }
  if (eventStream) {
    if (status !== 200) expect(status >= 400 && status < 500 && !('data' in body), `${where}: an event stream is a 200, or a request error (4xx, no data)`).toBe(true);
  } else if (wantsGraphQLResponse) {
    if (!('data' in body)) expect(status >= 400 && status < 500, `${where}: a request error is a 4xx, got ${status}: ${answer.text.slice(0, 300)}`).toBe(true);
    else expect(status, `${where}: execution started (data present) is 200`).toBe(200);
  } else if ('data' in body) {
    expect(status, `${where}: data present is 200`).toBe(200);
  } else {
    expect(status === 200 || (status >= 400 && status < 500), `${where}: ${status}`).toBe(true);
  }
}

/** A mutation that did something: data for the field, no error, and not a DomainError outcome. */
function succeeded(answer: Answer, field: string): boolean {
  const result = answer.body?.data?.[field];
  return answer.status === 200 && !answer.body?.errors?.length && result !== null && result !== undefined && !String(result.__typename ?? '').endsWith('Error');
}

// ---- defects found here whose fix lies outside the files of this test's change ----

interface Request {
  method: string;
  contentType?: string;
  accept?: string;
  /** Arguments were sent as variables. */
  variables: boolean;
  field?: string;
  /** Everything sent (URL and body), to look for a NUL in it. */
  sent: string;
}

/**
 * Whether an Accept header admits a JSON answer, read as Yoga reads it (no header, or an empty one,
 * admits anything; parameters dropped; an entry with a charset other than utf-8 skipped).
 */
const acceptsJson = (accept: string | undefined) =>
  (accept || '*/*')
    .replace(/\s/g, '')
    .toLowerCase()
    .split(',')
    .some((entry) => {
      const [type, ...params] = entry.split(';');
      const charset = params.find((p) => p.includes('charset='));
      return (charset === undefined || charset === 'charset=utf-8') && ['*/*', 'application/*', 'application/json', 'application/graphql-response+json'].includes(type!);
    });

/** Sends, checks the answer, and checks what changed. */
async function check(request: Request, init: RequestInit, path: string, where: string, mayChange: (answer: Answer) => boolean): Promise<void> {
  const { answer, before, after } = await exchange(t, path, init, SEND);
  expectGraphQLAnswer(answer, request.accept, where);
  if (!mayChange(answer)) expectNoChanges(stateChanges(before, after), answer, where);
  expectNoPrototypePollution();
}

// ---- the properties ----

describe('fuzzing every root field of the GraphQL schema', () => {
  it('finds the root fields in the served schema, with the fixtures the fuzz needs', async () => {
    expect(rootFields.filter((f) => f.operation === 'query').length).toBeGreaterThanOrEqual(15);
    expect(rootFields.filter((f) => f.operation === 'mutation').length).toBeGreaterThanOrEqual(9);
    await expectFixtures(t, { bookings: 1, webhook_endpoints: 1, webhook_deliveries: 1, access_tokens: 1 });
  });

  it.each(rootFields.map((f) => [f.name, f] as const))('%s', async (_name, root) => {
    await fuzzProperty(t, fieldCaseArb(root), RUNS_PER_FIELD, async (c: FieldCase) => {
      const { query, variables } = documentOf(root, c);
      const body = `{"query":${JSON.stringify(query)},"variables":${variables}}`;
      const where = `${root.name} ${c.mode} as ${JSON.stringify(c.credential)} accept ${c.accept}: ${body.slice(0, 600)}`;
      await check(
        { method: 'POST', contentType: 'application/json', accept: c.accept, variables: c.mode !== 'inline', field: root.field.name, sent: body },
        { method: 'POST', headers: { 'content-type': 'application/json', accept: c.accept, ...credentialHeaders(c.credential) }, body },
        '/graphql',
        where,
        (answer) => root.operation === 'mutation' && succeeded(answer, root.field.name),
      );
    });
  }, 120_000);
});

// ---- the endpoint itself: documents, bodies, content types, methods ----

const VALID = ['{ channel { name } }', `{ booking(id: "${REAL.booking}") { bookingId status } }`, 'query Q($n: Int) { properties(first: $n) { edges { node { propertyId } } } }', `mutation { cancelBooking(id: "${crypto.randomUUID()}") { __typename } }`];

/** Documents that are broken in one way each: syntax, validation, limits, operations. */
const hostileDocument: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '{',
    '}',
    '{ }',
    'query',
    '{ channel }',
    '{ channel { nope } }',
    '{ __schema { types { name } } }',
    '{ __typename }',
    'subscription { bookingEvents { id } }',
    'query A { channel { name } } query B { channel { name } }',
    'query A { channel { name } } query A { channel { name } }',
    'fragment F on Query { ...F } { ...F }',
    'query ($a: Int, $a: Int) { channel { name } }',
    '{ channel { name } } garbage',
    '{ channel { name @skip(if: "yes") } }',
    '{ channel { name @nope } }',
    '{ property(id: $undefined) { propertyId } }',
    '"""unterminated',
    '{ channel(id: 1) { name } }',
    'mutation { updateChannel }',
    '{ properties(first: 100) { edges { node { propertyId roomTypes { roomtypeId ratePlans { rateplanId } } } } } a: properties(first: 100) { edges { node { propertyId roomTypes { roomtypeId ratePlans { rateplanId } } } } } b: properties(first: 100) { edges { node { propertyId roomTypes { roomtypeId ratePlans { rateplanId } } } } } c: properties(first: 100) { edges { node { propertyId roomTypes { roomtypeId ratePlans { rateplanId } } } } } d: properties(first: 100) { edges { node { propertyId roomTypes { roomtypeId ratePlans { rateplanId } } } } } e: properties(first: 100) { edges { node { propertyId roomTypes { roomtypeId ratePlans { rateplanId } } } } } }',
    `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: channel { name }`).join(' ')} }`,
    `{ channel { ${Array(30).fill('name @include(if: true)').join(' ')} } }`,
    `{ ${'__type(name: "Query") { ofType { '.repeat(1)}${'ofType { '.repeat(12)}name${' }'.repeat(14)} }`,
    `{ properties(ids: [${Array.from({ length: 1200 }, (_, i) => i).join(',')}]) { edges { node { propertyId } } } }`,
    '\u0000',
    '{ channel { name } }\u0000',
    '\ufeff{ channel { name } }',
  ),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.constantFrom(...VALID).chain((doc) => fc.nat({ max: doc.length - 1 }).map((cut) => doc.slice(0, cut))),
  fc.tuple(fc.constantFrom(...VALID), fc.constantFrom(...HOSTILE_STRINGS), fc.nat()).map(([doc, bad, at]) => doc.slice(0, at % doc.length) + bad + doc.slice(at % doc.length)),
  fc.integer({ min: 20, max: 3_000 }).map((depth) => `{ ${'a { '.repeat(depth)}b${' }'.repeat(depth)} }`),
  fc.integer({ min: 20, max: 3_000 }).map((depth) => `{ property(id: ${'['.repeat(depth)}1${']'.repeat(depth)}) { propertyId } }`),
);

interface EndpointCase {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  request: Request;
}

const jsonBody = (fields: Record<string, string>) => `{${Object.entries(fields).map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;

const endpointCaseArb: fc.Arbitrary<EndpointCase> = fc
  .record({
    credential: credentialArb,
    accept: fc.option(fc.oneof(fc.constantFrom(GRAPHQL_RESPONSE, 'application/json', '*/*', 'text/event-stream'), garbageHeaderValue), { nil: undefined }),
    document: fc.oneof(hostileDocument, fc.constantFrom(...VALID)),
    variables: fc.oneof(hostileJsonText, malformedJsonText, fc.constant('{}'), fc.constant('{"n": 1}')),
    extra: hostileJsonText,
    shape: fc.constantFrom(
      'json-hostile-document',
      'json-hostile-document',
      'json-hostile-variables',
      'json-wrong-types',
      'json-malformed',
      'json-not-object',
      'json-batch',
      'json-persisted',
      'json-oversized',
      'wrong-content-type',
      'form',
      'multipart',
      'get',
      'get-mutation',
      'other-method',
    ),
    malformed: malformedJsonText,
    notObject: fc.oneof(deepJsonText, hostileJsonText.filter((s) => !s.startsWith('{'))),
    contentType: fc.oneof(
      fc.constantFrom('text/plain', 'text/plain; charset=utf-8', 'application/xml', 'application/octet-stream', 'text/json', 'application/graphql', 'application/json; charset=utf-16', 'application/x-json'),
      garbageHeaderValue,
      fc.constant(undefined),
    ),
    method: fc.constantFrom('PUT', 'PATCH', 'DELETE'),
    oversize: fc.integer({ min: BODY_LIMIT + 1, max: BODY_LIMIT * 2 }),
  })
  // A subscription the server may answer as an event stream (no Accept, */*, text/event-stream, or
  // anything else it reads as allowing one) would be live: that is not a malformed request.
  .filter((r) => !/subscription/i.test(r.document) || r.accept === GRAPHQL_RESPONSE || r.accept === 'application/json')
  .map((r): EndpointCase => {
    const headers: Record<string, string> = { ...credentialHeaders(r.credential), ...(r.accept === undefined ? {} : { accept: r.accept }) };
    const query = JSON.stringify(r.document);
    const base = { accept: r.accept, variables: false, field: undefined } as const;
    const post = (body: string, contentType: string | undefined, variables = false): EndpointCase => ({
      method: 'POST',
      path: '/graphql',
      headers: { ...headers, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
      body,
      request: { ...base, method: 'POST', ...(contentType === undefined ? {} : { contentType }), variables, sent: body },
    });
    switch (r.shape) {
      case 'json-hostile-document':
        return post(jsonBody({ query }), 'application/json');
      case 'json-hostile-variables':
        return post(jsonBody({ query: JSON.stringify(VALID[2]), variables: r.variables }), 'application/json', true);
      case 'json-wrong-types':
        return post(jsonBody({ query: r.extra, variables: r.variables, operationName: r.extra, extensions: r.extra }), 'application/json', true);
      case 'json-malformed':
        return post(r.malformed, 'application/json');
      case 'json-not-object':
        return post(r.notObject, 'application/json');
      case 'json-batch':
        return post(`[${jsonBody({ query })},${jsonBody({ query })}]`, 'application/json');
      case 'json-persisted':
        return post(jsonBody({ extensions: `{"persistedQuery":{"version":1,"sha256Hash":${r.extra}}}` }), 'application/json');
      case 'json-oversized':
        return post(jsonBody({ query: JSON.stringify(`{ channel { name } } #${'x'.repeat(r.oversize)}`) }), 'application/json');
      case 'wrong-content-type':
        return post(r.document, r.contentType);
      case 'form':
        return post(`query=${encodeURIComponent(toWellFormed(r.document))}&variables=${encodeURIComponent(toWellFormed(r.variables))}`, 'application/x-www-form-urlencoded', true);
      case 'multipart': {
        const parts = [`--b\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${jsonBody({ query })}\r\n`, `--b\r\nContent-Disposition: form-data; name="map"\r\n\r\n${r.extra}\r\n`];
        const body = `${r.extra.length % 2 ? parts.join('') : parts[1]}--b--\r\n`;
        return post(body, 'multipart/form-data; boundary=b');
      }
      case 'get':
      case 'get-mutation': {
        const document = r.shape === 'get' ? r.document : 'mutation { deleteWebhook(id: "x") }';
        const path = `/graphql?query=${encodeURIComponent(toWellFormed(document))}&variables=${encodeURIComponent(toWellFormed(r.variables))}`;
        return { method: 'GET', path, headers, request: { ...base, method: 'GET', variables: true, sent: path } };
      }
      case 'other-method':
        return { method: r.method, path: '/graphql', headers: { ...headers, 'content-type': 'application/json' }, body: jsonBody({ query }), request: { ...base, method: r.method, sent: query } };
    }
  });

describe('fuzzing the GraphQL endpoint itself', () => {
  it('answers malformed documents, bodies, content types and methods with coded errors and changes nothing', async () => {
    await fuzzProperty(t, endpointCaseArb, RUNS_MALFORMED, async (c: EndpointCase) => {
      const where = `${c.method} ${c.path.slice(0, 300)} ${JSON.stringify(c.headers)} ${c.body?.slice(0, 400) ?? ''}`;
      await check(c.request, { method: c.method, headers: c.headers, ...(c.body === undefined ? {} : { body: c.body }) }, c.path, where, () => false);
    });
  }, 120_000);
});

// ---- defects the fuzz found, fixed since ----

describe('defects the fuzz found, fixed since (each asserts the right answer)', () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    send('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', accept: GRAPHQL_RESPONSE, ...apiKey(owner), ...headers }, body });

  it('variable-coercion-errors: a variable of the wrong type is a 400 request error with BAD_USER_INPUT', async () => {
    const answer = await post(JSON.stringify({ query: 'query ($id: ID!) { booking(id: $id) { id } }', variables: { id: { a: 1 } } }));
    expect({ status: answer.status, data: 'data' in answer.body, code: answer.body?.errors?.[0]?.extensions?.code }).toEqual({ status: 400, data: false, code: 'BAD_USER_INPUT' });
    expect(answer.body.errors[0].message).toMatch(/^Variable "\$id" got invalid value/);
  });

  it('variable-coercion-errors: a missing or null required variable and an invalid enum value are BAD_USER_INPUT too', async () => {
    for (const body of [
      { query: 'query ($id: ID!) { booking(id: $id) { id } }', variables: {} },
      { query: 'query ($id: ID!) { booking(id: $id) { id } }' },
      { query: 'query ($id: ID!) { booking(id: $id) { id } }', variables: { id: null } },
      { query: 'query ($s: BookingStatus) { bookings(filter: { status: $s }) { __typename } }', variables: { s: 'NOPE' } },
      { query: 'subscription ($t: [BookingEventType!]) { bookingEvents(types: $t) { __typename } }', variables: { t: ['NOPE'] } },
    ]) {
      const answer = await post(JSON.stringify(body));
      expect({ body, status: answer.status, code: answer.body?.errors?.[0]?.extensions?.code }).toEqual({ body, status: 400, code: 'BAD_USER_INPUT' });
    }
  });

  it('variable-coercion-errors: with plain application/json the request error keeps 200, as validation errors do', async () => {
    const answer = await post(JSON.stringify({ query: 'query ($id: ID!) { booking(id: $id) { id } }', variables: { id: 1.5 } }), { accept: 'application/json' });
    expect({ status: answer.status, code: answer.body?.errors?.[0]?.extensions?.code }).toEqual({ status: 200, code: 'BAD_USER_INPUT' });
  });

  it('channel-profile-text: updateChannel with a NUL in the name is a VALIDATION_ERROR', async () => {
    const answer = await post(JSON.stringify({ query: 'mutation ($i: UpdateChannelInput!) { updateChannel(input: $i) { name } }', variables: { i: { name: 'a\u0000b' } } }));
    expect(answer.body?.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
  });

  it('query-string-malformed-variables: a GET with variables that are not JSON is a 400 BAD_REQUEST', async () => {
    const answer = await send(`/graphql?query=${encodeURIComponent('{ channel { name } }')}&variables=%7B`, { headers: { accept: GRAPHQL_RESPONSE, ...apiKey(owner) } });
    expect({ status: answer.status, code: answer.body?.errors?.[0]?.extensions?.code }).toEqual({ status: 400, code: 'BAD_REQUEST' });
  });

  it('query-string-malformed-variables: a form POST with variables that are not JSON is a 400 BAD_REQUEST', async () => {
    const answer = await send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: GRAPHQL_RESPONSE, ...apiKey(owner) },
      body: `query=${encodeURIComponent('{ channel { name } }')}&variables=%5B`,
    });
    expect({ status: answer.status, code: answer.body?.errors?.[0]?.extensions?.code }).toEqual({ status: 400, code: 'BAD_REQUEST' });
  });

  const multipart = (body: string) =>
    send('/graphql', { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b', accept: GRAPHQL_RESPONSE, ...apiKey(owner) }, body });
  const part = (name: string, value: string) => `--b\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

  it('multipart-request-errors: multipart/form-data is not read (no field takes a file): 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const body of ['--b--\r\n', `${part('operations', '{"query":"{ channel { name } }"}')}${part('map', '[1]')}--b--\r\n`]) {
      const answer = await multipart(body);
      expect({ status: answer.status, code: answer.body?.errors?.[0]?.extensions?.code }).toEqual({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    }
  });

  it('empty-406-415: a body in text/plain, or with no content type, is a 415 that says why, with a code', async () => {
    for (const headers of [{ 'content-type': 'text/plain' }, {}] as Record<string, string>[]) {
      const answer = await send('/graphql', { method: 'POST', headers: { ...headers, accept: GRAPHQL_RESPONSE, ...apiKey(owner) }, body: '{ channel { name } }' });
      expect({ headers, status: answer.status, type: answer.contentType, code: answer.body?.errors?.[0]?.extensions?.code }).toEqual({
        headers,
        status: 415,
        type: expect.stringContaining(GRAPHQL_RESPONSE),
        code: 'UNSUPPORTED_MEDIA_TYPE',
      });
    }
  });

  it('empty-406-415: a subscription POSTed accepting JSON only is a 406 NOT_ACCEPTABLE; an Accept admitting no JSON keeps the empty 406', async () => {
    const document = JSON.stringify({ query: 'subscription { bookingEvents { __typename } }' });
    const answer = await post(document, { accept: 'application/json' });
    expect({ status: answer.status, type: answer.contentType, code: answer.body?.errors?.[0]?.extensions?.code }).toEqual({
      status: 406,
      type: expect.stringContaining('application/json'),
      code: 'NOT_ACCEPTABLE',
    });
    const csv = await post(JSON.stringify({ query: '{ channel { name } }' }), { accept: 'text/csv' });
    expect({ status: csv.status, text: csv.text }).toEqual({ status: 406, text: '' });
  });

  it('graphql-other-methods: PUT /graphql is 405 Method Not Allowed, with Allow, in the error envelope', async () => {
    const answer = await send('/graphql', { method: 'PUT', headers: { 'content-type': 'application/json', ...apiKey(owner) }, body: '{"query":"{ channel { name } }"}' });
    expect({ status: answer.status, allow: answer.headers.get('allow'), code: answer.body?.error?.code }).toEqual({ status: 405, allow: 'GET, POST, OPTIONS', code: 'METHOD_NOT_ALLOWED' });
  });

});
