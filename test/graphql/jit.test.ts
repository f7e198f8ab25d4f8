import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { v1 } from '../helpers/flow.js';
import { dataOf, gql, graphqlWsClient, type Gql } from '../helpers/graphql.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * graphql-jit (src/graphql/plugins/jit.ts, docs/decisions.md "graphql-jit"). A document runs on
 * Yoga's executor the first time (GRAPHQL_JIT_AFTER=1, the default) and compiled from the second:
 * each case below is answered once by each, and the answers must be the same bytes (status,
 * content type and body; only the rate limit's `remaining`, which every request spends, differs).
 * The compiler's calls are counted: what must stay on Yoga's executor is never compiled, and a
 * document is compiled once.
 */

const compiled = vi.hoisted(() => ({ documents: [] as string[] }));
vi.mock('graphql-jit', async (importOriginal) => {
  const jit = await importOriginal<typeof import('graphql-jit')>();
  return {
    ...jit,
    compileQuery: (...args: Parameters<typeof jit.compileQuery>) => {
      compiled.documents.push(args[1].loc?.source.body ?? '');
      return jit.compileQuery(...args);
    },
  };
});

let t: TestService;
let who: IssuedCredentials;
let propertyId: string;
let bookingId: string;
let cancelledId: string;
let bookingGid: string;
let propertyGid: string;

beforeAll(async () => {
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0' });
  who = await t.channel({ name: 'Jit' });
  const flow = v1(t, who);
  const ids: string[] = [];
  for (const name of ['Jit Guest', 'Jit Cancelled']) {
    const offer = await flow.offer();
    const res = await flow.book({ book_token: offer.bookToken, booker_name: name, guests_adult: 2 });
    expect(res.status).toBe(201);
    ids.push(((await res.json()) as { data: { id: string } }).data.id);
    propertyId = String(offer.propertyId);
  }
  [bookingId, cancelledId] = ids as [string, string];
  const cancel = dataOf(await gql(t, who, 'mutation($id: ID!) { cancelBooking(id: $id) { __typename } }', { id: cancelledId }));
  expect(cancel.cancelBooking.__typename).toBe('CancelBookingSuccess');
  const ids2 = dataOf(await gql(t, who, 'query($id: ID!) { booking(id: $id) { id property { id } } }', { id: bookingId }));
  bookingGid = ids2.booking.id;
  propertyGid = ids2.booking.property.id;
}, 120_000);

afterAll(async () => t?.close());

/** One answer as a partner reads it: status, content type and body text (the rate limit's `remaining` set aside). */
async function answer(query: string, variables: unknown, headers: Record<string, string> = {}) {
  const res = await t.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...apiKey(who), ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.text()).replace(/"(remaining|reset)":\d+/g, '"$1":0');
  return { status: res.status, type: res.headers.get('content-type'), body };
}

let unique = 0;
/** The same document as a text Yoga has not seen (trailing blanks: same tokens, same locations). */
const fresh = (query: string) => `${query}${' '.repeat(++unique)}`;

interface Case {
  name: string;
  query: () => string;
  variables?: () => unknown;
  /** Variables of the document's earlier runs, when the case's own are refused (the document is compiled with these). */
  warm?: () => unknown;
  /** Whether the document is compiled (false: it stays on Yoga's executor). */
  jit: boolean;
}

const PROPERTY = 'query($id: ID!) { property(id: $id) { propertyId name city starRating roomTypes { roomtypeId name maxOccupancy } } }';
const BOOKINGS = `query Dashboard($first: Int, $status: BookingStatus) {
  bookings(first: $first, filter: { status: $status }) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id bookingId bookerName checkin checkout createdAt currency guestsAdult status cancellationFee cancellationDeadline
      property { id name roomTypes { id name } } events { id type occurredAt } } }
  }
}`;

const cases: Case[] = [
  { name: 'the bench query (property and its room types)', query: () => PROPERTY, variables: () => ({ id: propertyId }), jit: true },
  { name: 'a property that does not exist', query: () => PROPERTY, variables: () => ({ id: '987654321' }), jit: true },
  {
    name: 'a property page in the language of @inContext (a variable): texts, images with sizes, rooms',
    query: () => `query($id: ID!, $language: Language!) @inContext(language: $language) { property(id: $id) {
      descriptions { headline dining } policies { pets } amenities { code name } heroImage(sizes: [MEDIUM]) { caption links { size width href } }
      roomTypes { name areaSqm views bedGroups { description } occupancy { maxTotal ageCategories { category minAge maxAge } } ratePlans { name amenities { name } } } } }`,
    variables: () => ({ id: propertyId, language: 'ZH_CN' }),
    jit: true,
  },
  {
    name: 'a language of @inContext graphql-js refuses (a variable) on a compiled document',
    query: () => `query($id: ID!, $language: Language!) @inContext(language: $language) { property(id: $id) { descriptions { headline } } }`,
    variables: () => ({ id: propertyId, language: 'zh-CN' }),
    warm: () => ({ id: propertyId, language: 'JA_JP' }),
    jit: true,
  },
  { name: 'a variable of the wrong type on a compiled document', query: () => PROPERTY, variables: () => ({ id: { a: 1 } }), warm: () => ({ id: propertyId }), jit: true },
  { name: 'a missing required variable on a compiled document', query: () => PROPERTY, variables: () => ({}), warm: () => ({ id: propertyId }), jit: true },
  { name: 'a null required variable on a compiled document', query: () => PROPERTY, variables: () => ({ id: null }), warm: () => ({ id: propertyId }), jit: true },
  { name: 'connections, scalars (Date, DateTime, Money), enums and nested lists', query: () => BOOKINGS, variables: () => ({ first: 5 }), jit: true },
  { name: 'an enum variable graphql-js refuses', query: () => BOOKINGS, variables: () => ({ first: 5, status: "NOPE" }), warm: () => ({ first: 5 }), jit: true },
  { name: 'an Int variable out of range', query: () => BOOKINGS, variables: () => ({ first: 2 ** 40 }), warm: () => ({ first: 5 }), jit: true },
  { name: 'a page size the field refuses (an error with a path, data null)', query: () => BOOKINGS, variables: () => ({ first: 1000 }), warm: () => ({ first: 5 }), jit: true },
  {
    name: 'abstract types: node and nodes with fragments, unknown and foreign ids',
    query: () => `query($ids: [ID!]!, $id: ID!) {
      node(id: $id) { __typename id ... on Booking { bookingId bookerName property { name } } }
      nodes(ids: $ids) { __typename id ... on Property { name city } ... on Booking { bookingId } }
    }`,
    variables: () => ({ id: bookingGid, ids: [propertyGid, bookingGid, 'nope', 'UHJvcGVydHk6OTk5OTk5OQ=='] }),
    jit: true,
  },
  {
    name: 'a partial result: a field error beside data (a cancelled booking has no cancellation quote)',
    query: () => `{ a: cancellationQuote(id: "${cancelledId}") { refundAmount currency } b: cancellationQuote(id: "${bookingId}") { refundAmount cancellationFee currency final } c: booking(id: "${bookingId}") { bookingId } }`,
    jit: true,
  },
  {
    name: 'a DomainError union member (cancelling a cancelled booking)',
    query: () => `mutation($id: ID!) { cancelBooking(id: $id) { __typename ... on DomainError { code message } ... on CancelBookingSuccess { booking { bookingId } } } }`,
    variables: () => ({ id: cancelledId }),
    jit: true,
  },
  {
    name: 'a DomainError union member (a book token that is no token)',
    query: () => `mutation($input: CreateBookingInput!) { createBooking(input: $input) { __typename ... on BookTokenError { code message bookingId } ... on CreateBookingSuccess { booking { bookingId } } } }`,
    variables: () => ({ input: { bookToken: 'not-a-token', bookerName: 'Nobody', guestsAdult: 2 } }),
    jit: true,
  },
  {
    name: 'two fragments that apply to one type (graphql-jit would answer their fields in another order: stays on the executor)',
    query: () => `mutation($input: CreateBookingInput!) { createBooking(input: $input) { __typename ... on DomainError { code message } ... on BookTokenError { bookingId } } }`,
    variables: () => ({ input: { bookToken: 'not-a-token', bookerName: 'Nobody', guestsAdult: 2 } }),
    jit: false,
  },
  {
    name: 'a fragment before a field (stays on the executor)',
    query: () => `query($id: ID!) { booking(id: $id) { ...Who bookingId } } fragment Who on Booking { bookerName checkin }`,
    variables: () => ({ id: bookingId }),
    jit: false,
  },
  {
    name: 'named fragments after the fields, nested',
    query: () => `query($id: ID!) { booking(id: $id) { bookingId ...Who } } fragment Who on Booking { bookerName property { id ...Place } } fragment Place on Property { name city }`,
    variables: () => ({ id: bookingId }),
    jit: true,
  },
  {
    name: 'an input object variable graphql-js refuses (unknown field)',
    query: () => `mutation($input: CreateBookingInput!) { createBooking(input: $input) { __typename } }`,
    variables: () => ({ input: { bookToken: 'x', bookerName: 'Nobody', nope: 1 } }),
    warm: () => ({ input: { bookToken: 'not-a-token', bookerName: 'Nobody' } }),
    jit: true,
  },
  {
    name: 'introspection and __typename',
    query: () => '{ __typename __type(name: "Booking") { name kind fields { name type { name kind ofType { name kind } } } } }',
    jit: true,
  },
  { name: '@skip and @include (stay on the executor)', query: () => 'query($s: Boolean!) { app { name ... @skip(if: $s) { appId scopes } clientId @include(if: $s) } }', variables: () => ({ s: false }), jit: false },
  {
    name: 'a document with two operations (stays on the executor)',
    query: () => 'query A { app { name } } query B { channel { app { name } } }',
    variables: () => undefined,
    jit: false,
  },
  {
    name: '@defer (stays on the executor)',
    query: () => `{ app { name ... @defer { scopes } } }`,
    jit: false,
  },
];

describe('graphql-jit answers what Yoga’s executor answers', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const variables = c.variables?.();
      const byExecutor = await answer(fresh(c.query()), variables);
      const text = fresh(c.query());
      const before = compiled.documents.length;
      // First run (the executor), with the case's variables or the warm ones; then the compiled one.
      const first = await answer(text, c.warm ? c.warm() : variables);
      if (!c.warm) expect(first).toEqual(byExecutor);
      const second = await answer(text, variables);
      expect(compiled.documents.slice(before)).toEqual(c.jit ? [text] : []);
      expect(second).toEqual(byExecutor);
      // And again: compiled once.
      const third = await answer(text, variables);
      expect(third).toEqual(byExecutor);
      expect(compiled.documents.slice(before)).toEqual(c.jit ? [text] : []);
    });
  }

  it('an operation name the document does not have is refused as before, and the document still runs compiled', async () => {
    const text = fresh('query Mine { app { name } }');
    const byExecutor = await answer(fresh('query Mine { app { name } }'), undefined);
    const send = (operationName?: string) =>
      t
        .request('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...apiKey(who) },
          body: JSON.stringify({ query: text, operationName }),
        })
        .then(async (res) => ({ status: res.status, body: (await res.text()).replace(/"(remaining|reset)":\d+/g, '"$1":0') }));
    const wrongFirst = await send('Other');
    expect(wrongFirst.status).toBe(400);
    await send('Mine');
    expect(await send('Other')).toEqual(wrongFirst);
    expect(await send('Mine')).toEqual({ status: byExecutor.status, body: byExecutor.body });
  });

  it('subscriptions stay on the executor (graphql-ws)', async () => {
    const port = await t.service.listen(0);
    const client = graphqlWsClient(port, who);
    const before = compiled.documents.length;
    const query = 'subscription { bookingEvents { type booking { bookingId } } }';
    try {
      for (let i = 0; i < 2; i++) {
        const events: Gql[] = [];
        await new Promise<void>((resolve, reject) => {
          const stop = client.subscribe({ query }, { next: (e) => events.push(e), error: reject, complete: resolve });
          setTimeout(() => {
            stop();
            resolve();
          }, 200);
        });
        expect(events).toEqual([]);
      }
      expect(compiled.documents.slice(before)).toEqual([]);
    } finally {
      await client.dispose();
    }
  });
});
