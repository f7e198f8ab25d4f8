import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, validate } from 'graphql';
import type { Client } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { documentCost, operationHash, servedSchema } from '../../src/graphql/index.js';
import { servedValidationRules } from '../../src/graphql/plugins/incrementalDelivery.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { day, v1 } from '../helpers/flow.js';
import { APOLLO_ACCEPT, assemble, gate, multipartPayloads, overWs, readUntil, ssePayloads, type Payload } from '../helpers/incremental.js';
import { graphqlWsClient } from '../helpers/graphql.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * @defer and @stream (issue 17, item 6; docs/decisions.md "Incremental delivery"): over HTTP as
 * multipart/mixed and as an event stream, over graphql-ws as successive `next` messages; a client
 * accepting JSON only gets the whole result at once; errors in later payloads masked as top-level
 * ones; limits, cost and the rate limit as for any operation; refused in subscriptions.
 *
 * The documents are the constants below, so that a change of the schema (bookings, properties and
 * webhooks becoming Relay connections; Booking.property, Property.availability) touches only them
 * and the helpers next to them that know where their data sits (deferredBookings, streamedList,
 * streamedItemPath). Multipart, SSE and graphql-ws are read with test/helpers/incremental.ts.
 */

// ---- documents (port these when the schema changes) ----

/** A front end's booking view: the channel at once, the channel's bookings when they are ready. */
const DEFER_BOOKINGS = /* GraphQL */ `
  query BookingView {
    channel { name }
    ... @defer(label: "bookings") { bookings(first: 5) { edges { node { bookingId status } } } }
  }
`;
/** Its cost: two root fields, 1 point each (the deferred one too). */
const DEFER_BOOKINGS_COST = 2;
/** The deferred part of DEFER_BOOKINGS, as the data of its payload. */
const deferredBookings = (ids: string[]) => ({ bookings: { edges: ids.map((id) => ({ node: { bookingId: id, status: expect.any(String) } })) } });

/** Property content deferred: the payload waits for the provider's answer (the catalog's getMany). */
const DEFER_PROPERTY = /* GraphQL */ `
  query PropertyView {
    channel { name }
    ... @defer(label: "property") { property(id: "3") { propertyId name } }
  }
`;

/** A streamed list: one property in the first payload, the others after it. */
const STREAM_PROPERTIES = /* GraphQL */ `
  query Properties {
    properties(ids: [1, 2, 3]) { edges @stream(initialCount: 1, label: "more") { node { propertyId name } } }
  }
`;
/** Where STREAM_PROPERTIES' list is in the data, and the path of its item `i`. */
const streamedList = (data: any) => (data.properties.edges as { node: { propertyId: number; name: string } }[]).map((e) => e.node);
const streamedItemPath = (i: number) => ['properties', 'edges', i];

/** @defer inside a mutation's result (allowed), and on the mutation's root field (refused). */
const DEFER_IN_MUTATION = /* GraphQL */ `
  mutation Rename { updateChannel(input: { name: "Deferred Travel" }) { name ... @defer { tier } } }
`;
const DEFER_ON_MUTATION_ROOT = /* GraphQL */ `
  mutation { ... @defer { updateChannel(input: { name: "Nope" }) { name } } }
`;

/** @defer in a subscription: in the event's selection, in a fragment it uses, on its root field. */
const DEFER_IN_SUBSCRIPTION = /* GraphQL */ `subscription { bookingEvents { id ... @defer { type } } }`;
const DEFER_IN_SUBSCRIPTION_FRAGMENT = /* GraphQL */ `
  fragment Kind on BookingEvent { type }
  subscription { bookingEvents { id ...Kind @defer } }
`;
const DEFER_ON_SUBSCRIPTION_ROOT = /* GraphQL */ `subscription { ... @defer { bookingEvents { id } } }`;
/** Turned off: accepted (a variable may turn it on; a subscription still delivers each event whole). */
const DEFER_OFF_IN_SUBSCRIPTION = [
  /* GraphQL */ `subscription { bookingEvents { id ... @defer(if: false) { type } } }`,
  /* GraphQL */ `subscription ($d: Boolean!) { bookingEvents { id ... @defer(if: $d) { type } } }`,
];

/** `n` deferred fragments: each @defer is a directive for GRAPHQL_MAX_DIRECTIVES. */
const manyDefers = (n: number) => `{ channel { name ${Array.from({ length: n }, () => '... @defer { userId }').join(' ')} } }`;

/**
 * The cost limit's document of test/graphql/graphql-limits.test.ts (600 points with $n = 40),
 * with its last page deferred and the lists streamed: the same cost.
 */
const CATALOG = 'edges { node { propertyId roomTypes { roomtypeId ratePlans { rateplanId } } } }';
const COST_QUERY = `query Catalog($n: Int!) {
  ${Array.from({ length: 5 }, (_, i) => `p${i}: properties(first: 100) { ${CATALOG} }`).join('\n  ')}
  last: properties(first: $n) { ${CATALOG} }
}`;
const COST_QUERY_DEFERRED = `query Catalog($n: Int!) {
  ${Array.from({ length: 5 }, (_, i) => `p${i}: properties(first: 100) { ${CATALOG.replace('edges', 'edges @stream(initialCount: 1)')} }`).join('\n  ')}
  ... @defer { last: properties(first: $n) { ${CATALOG} } }
}`;

// ---- graphql-ws ----

const clients: Client[] = [];

const wsClient = (port: number, credentials: IssuedCredentials): Client => graphqlWsClient(port, credentials, clients);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('@defer and @stream', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  let bookingId: string;
  let ws: Client;

  const post = (query: string, accept: string, options: { who?: IssuedCredentials; variables?: Record<string, unknown> } = {}) =>
    t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept, ...apiKey(options.who ?? creds) },
      body: JSON.stringify({ query, variables: options.variables }),
    });

  beforeAll(async () => {
    t = await startTestService();
    creds = await t.channel({ name: 'Deferring Travel' });
    const flow = v1(t, creds);
    const offer = await flow.offer();
    const booked = await flow.book({ book_token: offer.bookToken, booker_name: 'Defer Red', guests_adult: 2 });
    expect(booked.status).toBe(201);
    bookingId = ((await booked.json()) as { data: { id: string } }).data.id;
    ws = wsClient(await t.service.listen(0), creds);
  });
  afterAll(() => t?.close());

  /** DEFER_BOOKINGS' payloads: the channel, reported charge and hasNext; then the bookings, labelled. */
  const bookingViewPayloads = () => [
    { data: { channel: { name: 'Deferring Travel' } }, hasNext: true, extensions: { rateLimit: expect.objectContaining({ cost: DEFER_BOOKINGS_COST }) } },
    { incremental: [{ data: deferredBookings([bookingId]), path: [], label: 'bookings' }], hasNext: false },
  ];

  describe('multipart/mixed over HTTP', () => {
    it('sends the first payload (hasNext: true) before the deferred fragment is ready, then the fragment (hasNext: false)', async () => {
      const catalog = t.service.deps.catalog;
      const getMany = catalog.getMany.bind(catalog);
      const provider = gate();
      const asked = vi.spyOn(catalog, 'getMany').mockImplementationOnce(async (...args) => {
        await provider.promise;
        return getMany(...args);
      });

      const res = await post(DEFER_PROPERTY, 'multipart/mixed');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('multipart/mixed; boundary="-"');
      expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();

      // Read until the first part is complete (its closing delimiter has arrived): the provider
      // has been asked for the property and has not answered.
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let body = await readUntil(reader, (text) => text.split('\r\n---').length >= 3);
      expect(asked).toHaveBeenCalledTimes(1);
      const [first] = multipartPayloads(res.headers.get('content-type'), `${body}--\r\n`);
      expect(first).toEqual({
        data: { channel: { name: 'Deferring Travel' } },
        hasNext: true,
        extensions: { rateLimit: expect.objectContaining({ cost: 2 }) },
      });

      provider.open();
      body += await readUntil(reader, () => false);
      const payloads = multipartPayloads(res.headers.get('content-type'), body);
      expect(payloads).toHaveLength(2);
      expect(payloads[1]).toEqual({
        incremental: [{ data: { property: { propertyId: 3, name: expect.any(String) } }, path: [], label: 'property' }],
        hasNext: false,
      });
    });

    it('renders a booking first, then its property with the availability for new dates (the front end of issue 17)', async () => {
      const query = /* GraphQL */ `
        query Booking($id: ID!, $stay: StayInput!) {
          booking(id: $id) {
            bookingId status checkin checkout
            ... @defer(label: "property") { property { name availability(stay: $stay) { nights roomTypes { rates { priceCheckToken } } } } }
          }
        }
      `;
      const stay = { checkin: day(50), checkout: day(52), adults: 2 };
      const res = await post(query, 'multipart/mixed', { variables: { id: bookingId, stay } });
      const payloads = multipartPayloads(res.headers.get('content-type'), await res.text());
      expect(payloads).toHaveLength(2);
      expect(payloads[0]).toMatchObject({ data: { booking: { bookingId, status: 'CONFIRMED' } }, hasNext: true });
      expect(payloads[0]!.data.booking).not.toHaveProperty('property');
      const [part] = payloads[1]!.incremental!;
      expect(part).toMatchObject({ path: ['booking'], label: 'property', data: { property: { name: expect.any(String), availability: { nights: 2 } } } });
      expect(payloads[1]!.hasNext).toBe(false);
      const rates = (part!.data as any).property.availability.roomTypes.flatMap((r: { rates: unknown[] }) => r.rates);
      expect(rates.some((r: { priceCheckToken: string | null }) => r.priceCheckToken)).toBe(true);
    });

    it('defers a booking list (as Apollo Client asks for it), with the label', async () => {
      const res = await post(DEFER_BOOKINGS, APOLLO_ACCEPT);
      expect(res.status).toBe(200);
      expect(multipartPayloads(res.headers.get('content-type'), await res.text())).toEqual(bookingViewPayloads());
    });

    it('@stream: initialCount items first, each further item at its index; together the whole list', async () => {
      const res = await post(STREAM_PROPERTIES, 'multipart/mixed');
      const payloads = multipartPayloads(res.headers.get('content-type'), await res.text());
      expect(payloads[0]!.hasNext).toBe(true);
      expect(streamedList(payloads[0]!.data)).toHaveLength(1);
      expect(payloads.at(-1)!.hasNext).toBe(false);
      const parts = payloads.slice(1).flatMap((p) => p.incremental ?? []);
      expect(parts.map((p) => p.path)).toEqual([streamedItemPath(1), streamedItemPath(2)]);
      for (const part of parts) expect(part.label).toBe('more');

      const whole = (await (await post(STREAM_PROPERTIES, 'application/json')).json()) as Payload;
      expect(assemble(payloads)).toEqual(whole.data);
      expect(streamedList(whole.data).map((p) => p.propertyId)).toEqual([1, 2, 3]);
    });

    it('@defer inside a mutation\'s result is delivered after it; on the mutation\'s root field it is refused', async () => {
      const res = await post(DEFER_IN_MUTATION, 'multipart/mixed');
      const payloads = multipartPayloads(res.headers.get('content-type'), await res.text());
      expect(payloads[0]).toMatchObject({ data: { updateChannel: { name: 'Deferred Travel' } }, hasNext: true });
      expect(payloads[1]).toEqual({ incremental: [{ data: { tier: expect.any(String) }, path: ['updateChannel'] }], hasNext: false });
      await post(`mutation { updateChannel(input: { name: "Deferring Travel" }) { name } }`, 'application/json');

      const refused = await post(DEFER_ON_MUTATION_ROOT, APOLLO_ACCEPT);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({
        errors: [expect.objectContaining({ message: 'Defer directive cannot be used on root mutation type "Mutation".' })],
        extensions: { rateLimit: expect.any(Object) },
      });
    });

    it('over GET too (with a credential header, so CSRF prevention lets it through)', async () => {
      const url = `/graphql?query=${encodeURIComponent(DEFER_BOOKINGS)}`;
      const res = await t.request(url, { headers: { accept: 'multipart/mixed', ...apiKey(creds) } });
      expect(res.status).toBe(200);
      const payloads = multipartPayloads(res.headers.get('content-type'), await res.text());
      expect(payloads.map((p) => p.hasNext)).toEqual([true, false]);
      // Without one, a GET is refused as before.
      expect((await t.request(url, { headers: { accept: 'multipart/mixed' } })).status).toBe(403);
    });
  });

  it('SSE over HTTP: each payload is a `next` event, then `complete`', async () => {
    const res = await post(DEFER_BOOKINGS, 'text/event-stream');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const { payloads, completed } = ssePayloads(await res.text());
    expect(completed).toBe(true);
    expect(payloads).toEqual(bookingViewPayloads());
  });

  it('graphql-ws: successive `next` messages, then `complete`', async () => {
    const deferred = await overWs(ws, DEFER_BOOKINGS);
    expect(deferred.refused).toBeUndefined();
    expect(deferred.payloads).toEqual(bookingViewPayloads());
    const streamed = await overWs(ws, STREAM_PROPERTIES);
    expect(streamed.payloads.length).toBeGreaterThanOrEqual(2);
    expect(streamedList(streamed.payloads[0]!.data)).toHaveLength(1);
    expect(streamed.payloads.at(-1)!.hasNext).toBe(false);
    expect(streamedList(assemble(streamed.payloads)).map((p) => p.propertyId)).toEqual([1, 2, 3]);
  });

  describe('a client accepting JSON only', () => {
    it('gets the whole result in one JSON response (the operation runs without incremental delivery): the data the payloads add up to', async () => {
      for (const accept of ['application/json', 'application/graphql-response+json']) {
        const res = await post(DEFER_BOOKINGS, accept);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe(`${accept}; charset=utf-8`);
        const body = (await res.json()) as Payload;
        expect(body).toEqual({
          data: { channel: { name: 'Deferring Travel' }, ...deferredBookings([bookingId]) },
          extensions: { rateLimit: expect.objectContaining({ cost: DEFER_BOOKINGS_COST }) },
        });
        expect(body.hasNext).toBeUndefined();
      }
      const streamed = (await (await post(STREAM_PROPERTIES, 'application/json')).json()) as Payload;
      expect(streamedList(streamed.data)).toHaveLength(3);
      // The same data as the incremental payloads put together.
      const res = await post(DEFER_BOOKINGS, 'multipart/mixed');
      const whole = (await (await post(DEFER_BOOKINGS, 'application/json')).json()) as Payload;
      expect(assemble(multipartPayloads(res.headers.get('content-type'), await res.text()))).toEqual(whole.data);
    });

    it('a subscription from such a client is still 406 NOT_ACCEPTABLE (it cannot be answered at once)', async () => {
      const res = await post('subscription { bookingEvents { id } }', 'application/json');
      expect(res.status).toBe(406);
      expect(((await res.json()) as Payload).errors?.map((e) => e.extensions?.code)).toEqual(['NOT_ACCEPTABLE']);
    });
  });

  describe('errors inside deferred payloads', () => {
    it('an internal error is masked as INTERNAL_ERROR, with its path; the first payload is unaffected (multipart and graphql-ws)', async () => {
      for (const transport of ['multipart', 'graphql-ws'] as const) {
        vi.spyOn(t.service.deps.catalog, 'getMany').mockRejectedValueOnce(new Error('connect ECONNREFUSED 10.1.2.3:5432 (secret-db)'));
        const http = async () => post(DEFER_PROPERTY, 'multipart/mixed').then(async (r) => multipartPayloads(r.headers.get('content-type'), await r.text()));
        const payloads = transport === 'multipart' ? await http() : (await overWs(ws, DEFER_PROPERTY)).payloads;
        expect(payloads[0], transport).toMatchObject({ data: { channel: { name: 'Deferring Travel' } }, hasNext: true });
        expect(payloads[1], transport).toEqual({
          incremental: [
            {
              data: { property: null },
              path: [],
              label: 'property',
              errors: [
                {
                  message: 'An internal error occurred; quote the request id to support',
                  locations: [expect.any(Object)],
                  path: ['property'],
                  extensions: { code: 'INTERNAL_ERROR' },
                },
              ],
            },
          ],
          hasNext: false,
        });
        expect(JSON.stringify(payloads)).not.toContain('secret-db');
      }
    });

    it('a domain error keeps its code and details (a credential without reservations:read)', async () => {
      const reader = await t.channel({ name: 'Profile Only', scopes: ['channels:read'] });
      const res = await post(DEFER_BOOKINGS, 'multipart/mixed', { who: reader });
      const payloads = multipartPayloads(res.headers.get('content-type'), await res.text());
      expect(payloads[0]).toMatchObject({ data: { channel: { name: 'Profile Only' } }, hasNext: true });
      const [part] = payloads[1]!.incremental!;
      expect(part!.data).toBeNull();
      expect(part!.errors).toEqual([
        expect.objectContaining({
          path: ['bookings'],
          extensions: { code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'reservations:read' } },
        }),
      ]);
    });
  });

  describe('limits, cost and the rate limit', () => {
    it('@defer counts as a directive: 20 run, 21 are refused with DIRECTIVE_LIMIT_EXCEEDED before anything is sent', async () => {
      const ok = await post(manyDefers(20), APOLLO_ACCEPT);
      expect(ok.status).toBe(200);
      expect(multipartPayloads(ok.headers.get('content-type'), await ok.text()).at(-1)!.hasNext).toBe(false);
      const refused = await post(manyDefers(21), APOLLO_ACCEPT);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as Payload).errors).toEqual([
        expect.objectContaining({ extensions: { code: 'DIRECTIVE_LIMIT_EXCEEDED', details: { limit: 20, found: 21 } } }),
      ]);
    });

    it('a deferred fragment costs what its fields cost; @stream\'s initialCount changes nothing; the cost limit refuses as before', async () => {
      expect(documentCost(parse(DEFER_BOOKINGS))).toBe(DEFER_BOOKINGS_COST);
      for (const n of [40, 41]) {
        expect(documentCost(parse(COST_QUERY_DEFERRED), { n })).toBe(documentCost(parse(COST_QUERY), { n }));
      }
      expect(documentCost(parse(STREAM_PROPERTIES))).toBe(documentCost(parse(STREAM_PROPERTIES.replace(/@stream\([^)]*\)/, ''))));
      const refused = await post(COST_QUERY_DEFERRED, APOLLO_ACCEPT, { variables: { n: 41 } });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as Payload).errors).toEqual([
        expect.objectContaining({ extensions: { code: 'COST_LIMIT_EXCEEDED', details: { limit: 600, found: 601 } } }),
      ]);
      const accepted = await post(COST_QUERY_DEFERRED, 'multipart/mixed', { variables: { n: 40 } });
      const payloads = multipartPayloads(accepted.headers.get('content-type'), await accepted.text());
      expect(payloads[0]!.extensions?.rateLimit?.cost).toBe(600);
      expect(assemble(payloads).last.edges).toHaveLength(40);
    });

    it('an operation is charged once, not per payload, and reports the charge on its first payload only', async () => {
      const remaining = async (res: Response) => {
        const payloads = multipartPayloads(res.headers.get('content-type'), await res.text());
        expect(payloads.slice(1).every((p) => p.extensions === undefined)).toBe(true);
        return { header: Number(res.headers.get('x-ratelimit-remaining')), reported: payloads[0]!.extensions!.rateLimit! };
      };
      const before = await remaining(await post(STREAM_PROPERTIES, 'multipart/mixed'));
      const after = await remaining(await post(STREAM_PROPERTIES, 'multipart/mixed'));
      expect(after.reported.cost).toBe(1);
      expect(before.header - after.header).toBe(after.reported.cost);
      expect(after.reported.remaining).toBe(after.header);
    });

    it('field conflicts are reported once (the plugin\'s merge rule replaces graphql-js\'s instead of running beside it)', async () => {
      const body = (await (await post('{ a: channel { name } a: app { name } }', 'application/json')).json()) as Payload;
      expect(body.errors).toHaveLength(1);
      expect(body.errors![0]!.message).toMatch(/^Fields "a" conflict/);
      // @stream arguments must agree where one field is selected twice.
      const streams = (await (
        await post('{ properties(ids: [1]) { edges @stream(initialCount: 1) { node { propertyId } } edges @stream(initialCount: 0) { node { name } } } }', 'application/json')
      ).json()) as Payload;
      expect(streams.errors).toHaveLength(1);
    });
  });

  describe('subscriptions', () => {
    const message = /^@(defer|stream) is not supported in a subscription/;

    it('refuse @defer in the event\'s selection or a fragment it uses, with a validation error (SSE, JSON, graphql-ws)', async () => {
      for (const query of [DEFER_IN_SUBSCRIPTION, DEFER_IN_SUBSCRIPTION_FRAGMENT]) {
        const sse = await post(query, 'text/event-stream');
        expect(sse.status).toBe(200);
        const { payloads, completed } = ssePayloads(await sse.text());
        expect(completed).toBe(true);
        expect(payloads).toHaveLength(1);
        expect(payloads[0]!.data).toBeUndefined();
        expect(payloads[0]!.errors?.map((e) => [e.message, e.extensions?.code])).toEqual([[expect.stringMatching(message), 'GRAPHQL_VALIDATION_FAILED']]);

        const json = await post(query, 'application/graphql-response+json');
        expect(json.status).toBe(400);
        expect(((await json.json()) as Payload).errors?.[0]?.message).toMatch(message);

        const overSocket = await overWs(ws, query);
        expect(overSocket.payloads).toEqual([]);
        expect(overSocket.refused?.map((e) => e.message)).toEqual([expect.stringMatching(message)]);
      }
    });

    it('refuse @defer on the subscription root field (useDeferStream\'s own rule), once', async () => {
      const res = await post(DEFER_ON_SUBSCRIPTION_ROOT, 'application/graphql-response+json');
      expect(res.status).toBe(400);
      expect(((await res.json()) as Payload).errors?.map((e) => e.message)).toEqual([
        'Defer directive cannot be used on root subscription type "Subscription".',
      ]);
    });

    it('accept @defer turned off (`if: false`, or a variable)', () => {
      for (const query of DEFER_OFF_IN_SUBSCRIPTION) expect(validate(servedSchema, parse(query), servedValidationRules())).toEqual([]);
      expect(validate(servedSchema, parse(DEFER_IN_SUBSCRIPTION), servedValidationRules()).map((e) => e.message)).toEqual([
        expect.stringMatching(message),
      ]);
    });
  });
});

// ---- persisted operations ----

describe('a persisted operation with @defer', () => {
  let t: TestService;
  let creds: IssuedCredentials;

  beforeAll(async () => {
    // Validated at start against the served schema and rules: a @defer document is valid.
    const file = join(tmpdir(), `persisted-defer-${process.pid}.json`);
    writeFileSync(file, JSON.stringify([DEFER_BOOKINGS]));
    t = await startTestService({ GRAPHQL_PERSISTED_OPERATIONS_FILE: file, GRAPHQL_PERSISTED_ONLY: 'true' });
    creds = await t.channel({ name: 'Persisted Travel' });
  });
  afterAll(() => t?.close());

  it('loads, and runs by its hash with incremental delivery', async () => {
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', ...apiKey(creds) },
      body: JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: operationHash(DEFER_BOOKINGS) } } }),
    });
    expect(res.status).toBe(200);
    const payloads = multipartPayloads(res.headers.get('content-type'), await res.text());
    expect(payloads.map((p) => p.hasNext)).toEqual([true, false]);
    expect(payloads[0]!.data).toEqual({ channel: { name: 'Persisted Travel' } });
    expect(payloads[1]!.incremental).toEqual([{ data: deferredBookings([]), path: [], label: 'bookings' }]);
  });
});
