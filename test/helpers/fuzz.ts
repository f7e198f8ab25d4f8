import fc from 'fast-check';
import { expect } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { v1, type Offer } from './flow.js';
import { accessToken, startTestService, type TestService } from './service.js';

/**
 * The one harness of the fuzz tests (test/contract/fuzz-rest.test.ts, test/contract/fuzz-graphql.test.ts):
 * the service with the partner's resources the fuzz needs, hostile values as fast-check
 * arbitraries, sending a request and reading its answer, a snapshot of everything a partner can
 * change (to show that a refused request changed nothing), and the checks both surfaces make.
 *
 * FUZZ_RUNS sets the runs per property, FUZZ_SEED replays a failure (fast-check prints the seed
 * and path of a failing run; `FUZZ_SEED=<seed> npx vitest run test/contract/fuzz-rest.test.ts -t '<route>'`).
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** Small enough that oversized bodies are cheap to send; large enough for every real body. */
export const FUZZ_BODY_LIMIT = 65_536;

/** The service under fuzz and the partner's resources in it. */
export interface FuzzFixtures {
  t: TestService;
  owner: IssuedCredentials;
  /** An access token of the owner (client credentials). */
  bearer: string;
  flow: ReturnType<typeof v1>;
  /** The offer the owner's booking was made from. */
  booked: Offer;
  /** An unused offer: a real price-check token and book token, for requests that are bad elsewhere. */
  offer: Offer;
  bookingId: string;
  webhookId: string;
  /** A failed delivery of the owner's webhook. */
  deliveryId: string;
}

/**
 * A service for a fuzz test, with a channel that has a booking, an unused offer, a webhook and a
 * failed delivery. The outbox dispatcher is off (EVENTS_POLL_INTERVAL_MS=0), so nothing changes
 * rows behind a request's back and a snapshot taken after the response is the request's doing.
 * The caller closes `t`.
 */
export async function startFuzzService(): Promise<FuzzFixtures> {
  const t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0', BODY_LIMIT_BYTES: String(FUZZ_BODY_LIMIT) });
  const owner = await t.channel({ name: 'Fuzz Owner' });
  const bearer = await mintToken(t, owner);
  const flow = v1(t, owner);
  const booked = await flow.offer();
  const bookingRes = await flow.book({ book_token: booked.bookToken, booker_name: 'Fuzz Guest', guests_adult: 2 });
  expect(bookingRes.status).toBe(201);
  const offer = await flow.offer({ from: booked.propertyId });
  const webhookRes = await flow.call('POST', '/webhooks', { url: 'http://127.0.0.1:9/fuzz', events: ['reservation.no_show'] });
  expect(webhookRes.status).toBe(201);
  const webhookId = ((await webhookRes.json()) as { data: { id: string } }).data.id;
  const deliveryId = crypto.randomUUID();
  await t.service.deps.db.prisma.webhookDelivery.create({
    data: {
      id: deliveryId,
      endpointId: webhookId,
      channelId: owner.user_id,
      type: 'reservation.created',
      body: '{}',
      status: 'failed',
      nextAttemptAt: new Date(),
      createdAt: new Date(),
    },
  });
  const bookingId = ((await bookingRes.json()) as { data: { id: string } }).data.id;
  return { t, owner, bearer, flow, booked, offer, bookingId, webhookId, deliveryId };
}

/** An access token of `who` from the token endpoint (client credentials), as from `ip` when given. */
export function mintToken(t: TestService, who: { client_id: string; client_secret: string }, ip?: string): Promise<string> {
  return accessToken(t, who, ip === undefined ? {} : { ip });
}

export function fuzzParameters<T>(numRuns: number): fc.Parameters<T> {
  const runs = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : numRuns;
  return { numRuns: runs, ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}) };
}

/**
 * `check` for fc.asyncProperty, with shrinking cut short: once a run has failed, runs after
 * `limitMs` pass at once, so fast-check reports the smallest failure found by then instead of
 * shrinking (one request per step) for minutes.
 */
export function boundedShrinking<T>(check: (value: T) => Promise<void>, limitMs = 15_000): (value: T) => Promise<void> {
  let failedAt: number | undefined;
  return async (value) => {
    if (failedAt !== undefined && Date.now() - failedAt > limitMs) return;
    try {
      await check(value);
    } catch (error) {
      if (failedAt === undefined) {
        // Shrinking reports the smallest failure; the first one, before any state it left behind, is often the clearer.
        console.error(`first failure: ${String((error as Error).message).slice(0, 3000)}`);
        failedAt = Date.now();
      }
      throw error;
    }
  };
}

// ---- hostile values ----

/** Strings that have broken parsers, validators and databases before. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '%00',
  '%',
  '%ZZ',
  '%E0%A4%A',
  '%2F',
  '%5C',
  '\ud800',
  'x\udfffy',
  '\u202e\u0644\u0627',
  '\u200b',
  '\ufeff',
  '😀',
  'ß',
  'İ',
  '１２３',
  '١٢٣',
  'null',
  'undefined',
  'true',
  'NaN',
  'Infinity',
  '-Infinity',
  '-0',
  '0x1F',
  '1e309',
  '-1',
  '0',
  '00001',
  '1.0',
  '1,2',
  ' 1',
  '1 ',
  '99999999999999999999999999999999999999',
  '-99999999999',
  '2147483648',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  "' OR '1'='1",
  "'; DROP TABLE bookings; --",
  '" OR ""="',
  '1; SELECT pg_sleep(10)',
  '$ne',
  '{"$gt":""}',
  '{"__proto__":{"polluted":true}}',
  '"}]}',
  '\\',
  '\\u0000',
  '${7*7}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '../../../../etc/passwd',
  '..\\..\\windows',
  '\r\nX-Injected: 1',
  '\n',
  '\t',
  '2030-02-30',
  '2030-13-01',
  '0000-00-00',
  '9999-12-31',
  '-271821-04-20',
  '+275760-09-13T00:00:00.000Z',
  '2030-01-10T25:61:61Z',
  '1970-01-01T00:00:00Z',
  'ck_live_0000',
  'oat_0000',
  'Bearer',
  'http://169.254.169.254/latest/meta-data',
  'http://[::1]:9/',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'gopher://127.0.0.1:6379/_FLUSHALL',
  'a'.repeat(256),
  'é'.repeat(300),
  '😀'.repeat(200),
];

const repeated = fc
  .tuple(fc.constantFrom('a', '\u0000', '😀', '9', '%', ' ', 'é', '\\'), fc.integer({ min: 200, max: 12_000 }))
  .map(([unit, n]) => unit.repeat(n));

/** A hostile string: a known troublemaker, arbitrary code units (lone surrogates too), a long run, or a mix. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: repeated },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...HOSTILE_STRINGS), fc.string({ maxLength: 8 }), fc.constantFrom(...HOSTILE_STRINGS))
      .map((parts) => parts.join('')),
  },
);

/** What a nearly valid string gets slipped into it. */
export const TAINTS = ['\u0000', '\ud800', '\udc00', '\u202e', '\r\n', '\n', '\t', '%00', '\\', '"', "'", '\u200b', '\ufffe', '\u0085', '\u2028', ' '] as const;

/** `base` (a value that passes) with a hostile character or sequence put in at some place: only that is wrong. */
export function tainted(base: string): fc.Arbitrary<string> {
  return fc
    // NUL first among them: PostgreSQL text cannot hold it, so it is what most often gets through to a write.
    .tuple(fc.oneof({ weight: 3, arbitrary: fc.constant('\u0000') }, { weight: 4, arbitrary: fc.constantFrom(...TAINTS) }), fc.nat({ max: base.length }), fc.integer({ min: 1, max: 3 }))
    .map(([taint, at, times]) => base.slice(0, at) + taint.repeat(times) + base.slice(at));
}

/** Numbers at and beyond every boundary JSON can carry. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    -1,
    0,
    -0,
    0.5,
    1.5,
    -1.5,
    2 ** 31 - 1,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 32,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53) - 2,
    1e21,
    1e308,
    -1e308,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    Number.EPSILON,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Number literals that JSON.stringify cannot make: overflow, underflow, long mantissas. */
const numberText = fc.oneof(
  hostileNumber.map((n) => JSON.stringify(n)),
  fc.constantFrom('1e400', '-1e400', '1e-400', '123456789012345678901234567890', '-0.0', '0.0000000000000000000001', '1E+2'),
);

/** `depth` nested arrays or objects, as JSON text (deeper than JSON.stringify could write). */
export const deepJsonText = fc
  .tuple(fc.constantFrom('array', 'object'), fc.integer({ min: 100, max: 20_000 }))
  .map(([kind, depth]) => (kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)));

/** Keys that pollute prototypes when merged naively. */
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

const protoObjectText = fc.constantFrom(
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"__proto__":null}',
  '{"a":1,"a":2}',
  '{"":""}',
);

/** Any JSON value as text, hostile: strings, numbers, deep nesting, prototype keys, big arrays. */
export const hostileJsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: hostileString.map((s) => JSON.stringify(s)) },
    { weight: 4, arbitrary: numberText },
    { weight: 2, arbitrary: fc.constantFrom('true', 'false', 'null', '[]', '{}') },
    { weight: 1, arbitrary: deepJsonText },
    { weight: 1, arbitrary: protoObjectText },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 5_000 }).map((n) => `[${'1,'.repeat(n)}1]`) },
    { weight: 2, arbitrary: fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`) },
    {
      weight: 2,
      arbitrary: fc
        .array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.string({ maxLength: 6 })), tie('value')), { maxLength: 4 })
        .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
    },
  ),
})).value;

/** Text that is not JSON at all, or JSON cut short. */
export const malformedJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', '{', '}', '{"a":', '{"a":1,}', "{'a':1}", '{a:1}', '[1,2', 'nul', 'tru', 'NaN', 'undefined', '\u0000', '{"a":"\\x"}', '{"a":"\\u12"}', '{"a":1}garbage', '{"a":1}{"b":2}', '<?xml version="1.0"?><a/>', '--boundary--'),
  fc.string({ unit: 'binary', maxLength: 60 }).filter((s) => !isJson(s)),
  hostileJsonText.filter((s) => s.length > 2).chain((s) => fc.integer({ min: 1, max: s.length - 1 }).map((cut) => s.slice(0, cut))).filter((s) => !isJson(s)),
);

function isJson(text: string): boolean {
  try {
    // A leading byte order mark is dropped by the Fetch body readers (UTF-8 decode): still JSON.
    JSON.parse(text.replace(/^\ufeff/, ''));
    return true;
  } catch {
    return false;
  }
}

/** A value for an HTTP header that fetch can send (no NUL, CR or LF; Latin-1), but still garbage. */
export const garbageHeaderValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'null', 'undefined', '../../', "' OR 1=1 --", 'é', '\u00ff\u0080', 'a'.repeat(256), 'a'.repeat(8_000), '%00', '{}', '[]', '-1', '0'),
  fc.string({ unit: 'binary-ascii', maxLength: 300 }),
  fc.string({ unit: 'grapheme-ascii', minLength: 256, maxLength: 400 }),
).map(headerSafe);

/** `value` with what a Request refuses in a header (NUL, CR, LF, non-Latin-1) replaced. */
export function headerSafe(value: string): string {
  return value.replace(/[\u0000\r\n]/g, '?').replace(/[^\u0000-\u00ff]/g, '?');
}

/** Percent-encodes a path segment, keeping it one segment that URL parsing leaves alone. */
export function pathSegment(value: string): string {
  // encodeURIComponent leaves '.' alone, and a segment of dots is resolved away by URL parsing.
  const encoded = encodeURIComponent(toWellFormed(value)).replace(/\./g, '%2E');
  return encoded === '' ? '%20' : encoded;
}

/** Lone surrogates cannot be percent-encoded (URIError); they become U+FFFD, as a client would send them. */
export function toWellFormed(value: string): string {
  return value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** Raw query-string pieces: percent-encoded hostile strings, and raw sequences a client could send. */
export const queryValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: hostileString.map((s) => encodeURIComponent(toWellFormed(s))) },
  { weight: 1, arbitrary: fc.constantFrom('%00', '%', '%ZZ', '%E0%A4%A', '%u0000', '+', '%2B', '&', '=', '==', '%26%3D', '%C0%AE', '%FF%FE') },
);

// ---- the state a partner can change ----

/**
 * Tables no partner request writes: the migration log, settings (the token signing secret) and
 * operator credentials. Every other table of the service's schema is in the snapshot, so a table
 * added later is watched the day it is migrated.
 */
const NOT_PARTNER_STATE = new Set(['_prisma_migrations', 'settings', 'operator_credentials']);

/** The tables the snapshot covers (at least those the issue names). */
export const PARTNER_TABLES_REQUIRED = [
  'channels',
  'apps',
  'api_keys',
  'access_tokens',
  'ledger_entries',
  'bookings',
  'outbox_events',
  'idempotency_keys',
  'webhook_endpoints',
  'webhook_deliveries',
  'webhook_attempts',
];

export type PartnerState = Record<string, string>;

const snapshotSql = new WeakMap<TestService, Promise<string>>();

/** One query: each table's rows as JSON text, in a stable order, so two snapshots compare exactly. */
function sqlFor(t: TestService): Promise<string> {
  let sql = snapshotSql.get(t);
  if (!sql) {
    sql = t.service.deps.db
      .rows<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
      )
      .then((tables) => {
        const names = tables.map((r) => r.table_name).filter((name) => !NOT_PARTNER_STATE.has(name));
        return `SELECT ${names.map((name) => `(SELECT coalesce(json_agg(r ORDER BY r::text), '[]')::text FROM "${name}" r) AS "${name}"`).join(', ')}`;
      });
    snapshotSql.set(t, sql);
  }
  return sql;
}

/** Every row a partner's request can change, as JSON text per table. */
export async function partnerState(t: TestService): Promise<PartnerState> {
  const [row] = await t.service.deps.db.rows<PartnerState>(await sqlFor(t));
  return row!;
}

/** The tables whose rows differ, with both versions (shortened) to read in a failure. */
export function stateChanges(before: PartnerState, after: PartnerState): Record<string, { before: string; after: string }> {
  const changed: Record<string, { before: string; after: string }> = {};
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (before[table] !== after[table]) changed[table] = { before: (before[table] ?? '').slice(0, 1500), after: (after[table] ?? '').slice(0, 1500) };
  }
  return changed;
}

/** Number of rows per table, for a test that wants to see its fixtures are there. */
export function rowCounts(state: PartnerState): Record<string, number> {
  return Object.fromEntries(Object.entries(state).map(([table, text]) => [table, (JSON.parse(text) as unknown[]).length]));
}

/** Rows of `table` in `after` that `before` does not have, and whether any row of `before` changed or went. */
export function addedRows(before: PartnerState, after: PartnerState, table: string): { added: Json[]; othersChanged: boolean } {
  const old = (JSON.parse(before[table]!) as Json[]).map((r) => JSON.stringify(r));
  const now = new Set((JSON.parse(after[table]!) as Json[]).map((r) => JSON.stringify(r)));
  const added = (JSON.parse(after[table]!) as Json[]).filter((r) => !old.includes(JSON.stringify(r)));
  return { added, othersChanged: old.some((r) => !now.has(r)) };
}

/** The fixtures are there: the snapshot covers the required tables and holds at least `counts` rows. */
export async function expectFixtures(t: TestService, counts: Record<string, number>): Promise<void> {
  const snapshot = await partnerState(t);
  expect(Object.keys(snapshot)).toEqual(expect.arrayContaining(PARTNER_TABLES_REQUIRED));
  expect(rowCounts(snapshot)).toMatchObject(counts);
}

// ---- running a property: send, snapshot, check ----

/** An answer as the checks read it. */
export interface Answer {
  status: number;
  contentType: string;
  text: string;
  /** The parsed body, or undefined when there is none or it does not parse. */
  body: Json;
  requestId: string | null;
  headers: Headers;
}

export interface SendOptions {
  /** Abort the request after this long (a GraphQL subscription would never end). */
  timeoutMs?: number;
  /** How to read the body (default: JSON); a throw leaves `body` undefined. */
  parse?: (text: string, contentType: string) => Json;
}

export async function send(t: TestService, path: string, init: RequestInit & { ip?: string }, options: SendOptions = {}): Promise<Answer> {
  const { timeoutMs, parse = (text: string) => JSON.parse(text) } = options;
  const res = await t.request(path, timeoutMs === undefined ? init : { ...init, signal: AbortSignal.timeout(timeoutMs) });
  const headers = new Headers(res.headers);
  const contentType = headers.get('content-type') ?? '';
  const text = await res.text();
  let body: Json = undefined;
  try {
    body = text ? parse(text, contentType) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, contentType, text, body, requestId: headers.get('x-request-id'), headers };
}

/** The snapshot each service's next exchange compares with. */
const lastState = new WeakMap<TestService, PartnerState>();

/**
 * Sends and takes the partner state after it: `before` is the state after the previous exchange
 * (or at the start of the property), `after` the state now.
 */
export async function exchange(t: TestService, path: string, init: RequestInit & { ip?: string }, options: SendOptions = {}): Promise<{ answer: Answer; before: PartnerState; after: PartnerState }> {
  const answer = await send(t, path, init, options);
  // Taken before any check: the next run compares with this state, whatever this one shows
  // (fast-check runs on after a failure, to shrink it).
  const before = lastState.get(t)!;
  const after = await partnerState(t);
  lastState.set(t, after);
  return { answer, before, after };
}

/** One fuzz property: `runs` runs (FUZZ_RUNS, FUZZ_SEED) of `check`, from the state as it is now. */
export async function fuzzProperty<T>(t: TestService, arbitrary: fc.Arbitrary<T>, runs: number, check: (value: T) => Promise<void>): Promise<void> {
  lastState.set(t, await partnerState(t));
  await fc.assert(fc.asyncProperty(arbitrary, boundedShrinking(check)), fuzzParameters(runs));
}

/** Nothing changed that the request was not allowed to change (`changes`: what is left of stateChanges). */
export function expectNoChanges(changes: Record<string, unknown>, answer: Answer, where: string): void {
  expect(changes, `${where}: answered ${answer.status} ${answer.text.slice(0, 300)} but changed rows`).toEqual({});
}

/** No server error (unless `serverErrorAllowed`), and a request id on the answer. */
export function expectServed(answer: Answer, where: string, serverErrorAllowed = false): void {
  expect(answer.status < 500 || serverErrorAllowed, `${where}: a server error ${answer.status}: ${answer.text.slice(0, 300)}`).toBe(true);
  expect(answer.requestId ?? '', `${where}: X-Request-Id`).toMatch(UUID);
}

/** The error envelope of docs/spec/channel-api.md §2.1, exactly: error {code, message, details} and meta {request_id, timestamp}. */
export function expectErrorEnvelope(answer: Answer, where: string): void {
  const { body, headers } = answer;
  expect(Object.keys(body ?? {}).sort(), `${where}: envelope fields: ${answer.text.slice(0, 300)}`).toEqual(['error', 'meta']);
  expect(Object.keys(body.error).sort(), `${where}: error fields`).toEqual(['code', 'details', 'message']);
  expect(body.error.code, `${where}: error.code`).toMatch(/^[A-Z][A-Z0-9_]*$/);
  expect(typeof body.error.message, `${where}: error.message`).toBe('string');
  expect(body.error.details === null || (typeof body.error.details === 'object' && !Array.isArray(body.error.details)), `${where}: error.details`).toBe(true);
  expect(Object.keys(body.meta).sort(), `${where}: meta fields`).toEqual(['request_id', 'timestamp']);
  expect(body.meta.request_id, `${where}: meta.request_id`).toBe(headers.get('x-request-id'));
  expect(new Date(body.meta.timestamp).toISOString(), `${where}: meta.timestamp`).toBe(body.meta.timestamp);
}

// ---- the test process itself ----

/** The service runs in this process: a polluted prototype would show here. */
export function expectNoPrototypePollution(): void {
  const probe = {} as Record<string, unknown>;
  expect({ polluted: probe.polluted, objectKeys: Object.keys(Object.prototype), arrayKeys: Object.keys(Array.prototype) }).toEqual({
    polluted: undefined,
    objectKeys: [],
    arrayKeys: [],
  });
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
