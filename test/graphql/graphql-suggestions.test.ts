import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * No "Did you mean ...?" in production (GRAPHQL_BLOCK_FIELD_SUGGESTIONS, on by default there), for
 * every kind of validation and coercion error, over HTTP POST and GET, SSE and graphql-ws; the
 * rest of each message unchanged. The sandbox keeps the suggestions, which help partners build.
 */

interface Case {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  /** A subscription: sent only where one can run (SSE and graphql-ws). */
  subscription?: boolean;
  /** The message graphql-js writes in the sandbox, suggestion included (null: it suggests nothing). */
  sandbox: string;
}

const BOOKINGS = 'totalCount';
const CASES: Case[] = [
  {
    name: 'a field',
    query: '{ channel { userIdd } }',
    sandbox: 'Cannot query field "userIdd" on type "Channel". Did you mean "userId"?',
  },
  {
    name: 'an argument',
    query: `{ bookings(firstt: 2) { ${BOOKINGS} } }`,
    sandbox: 'Unknown argument "firstt" on field "Query.bookings". Did you mean "first"?',
  },
  {
    name: 'an input object field in a literal',
    query: `{ bookings(filter: { statuss: CONFIRMED }) { ${BOOKINGS} } }`,
    sandbox: 'Field "statuss" is not defined by type "BookingFilter". Did you mean "status"?',
  },
  {
    name: 'an enum value in a literal (the issue: status: CONFIRME)',
    query: `{ bookings(filter: { status: CONFIRME }) { ${BOOKINGS} } }`,
    sandbox: 'Value "CONFIRME" does not exist in "BookingStatus" enum. Did you mean the enum value "CONFIRMED"?',
  },
  {
    name: 'an unknown type',
    query: `query ($f: BookingFiltr) { bookings(filter: $f) { ${BOOKINGS} } }`,
    sandbox: 'Unknown type "BookingFiltr". Did you mean "BookingFilter", "Booking", "BookingEdge", "BookingEvent", or "BookingStatus"?',
  },
  {
    name: "a directive's argument",
    query: '{ channel { userId @include(iff: true, if: true) } }',
    sandbox: 'Unknown argument "iff" on directive "@include". Did you mean "if"?',
  },
  {
    name: 'an enum value in variables',
    query: `query ($f: BookingFilter) { bookings(filter: $f) { ${BOOKINGS} } }`,
    variables: { f: { status: 'CONFIRME' } },
    sandbox:
      'Variable "$f" got invalid value "CONFIRME" at "f.status"; Value "CONFIRME" does not exist in "BookingStatus" enum. Did you mean the enum value "CONFIRMED"?',
  },
  {
    name: 'an input object field in variables',
    query: `query ($f: BookingFilter) { bookings(filter: $f) { ${BOOKINGS} } }`,
    variables: { f: { statuss: 'CONFIRMED' } },
    sandbox: 'Variable "$f" got invalid value { statuss: "CONFIRMED" }; Field "statuss" is not defined by type "BookingFilter". Did you mean "status"?',
  },
  {
    name: 'an enum value in a subscription literal',
    query: 'subscription { bookingEvents(types: [RESERVATION_CREATE]) { id } }',
    subscription: true,
    sandbox:
      'Value "RESERVATION_CREATE" does not exist in "BookingEventType" enum. Did you mean the enum value "RESERVATION_CREATED", ' +
      '"RESERVATION_CANCELLED", "RESERVATION_FAILED", "RESERVATION_CHECKED_IN", or "RESERVATION_CONFIRMED"?',
  },
  {
    name: 'an enum value in subscription variables',
    query: 'subscription ($t: [BookingEventType!]) { bookingEvents(types: $t) { id } }',
    variables: { t: ['RESERVATION_CREATE'] },
    subscription: true,
    sandbox:
      'Variable "$t" got invalid value "RESERVATION_CREATE" at "t[0]"; Value "RESERVATION_CREATE" does not exist in "BookingEventType" enum. ' +
      'Did you mean the enum value "RESERVATION_CREATED", "RESERVATION_CANCELLED", "RESERVATION_FAILED", "RESERVATION_CHECKED_IN", or "RESERVATION_CONFIRMED"?',
  },
];

/** What production answers: the same message without its suggestion. */
const withoutSuggestion = (message: string) => message.replace(/ Did you mean .*\?$/, '');

type Transport = 'POST' | 'GET' | 'SSE' | 'graphql-ws';

interface Service {
  t: TestService;
  creds: IssuedCredentials;
  ws: Client;
}

const clients: Client[] = [];

async function start(env: Record<string, string>): Promise<Service> {
  const t = await startTestService(env);
  const creds = await t.channel({ name: 'Suggestions' });
  const ws = createClient({
    url: `ws://127.0.0.1:${await t.service.listen(0)}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { 'X-Api-Key': creds.api_key },
    retryAttempts: 0,
    lazy: true,
  });
  clients.push(ws);
  return { t, creds, ws };
}

/** The error messages of the answer, over one transport. */
async function messages(s: Service, transport: Transport, c: Case): Promise<string[]> {
  const headers = apiKey(s.creds);
  switch (transport) {
    case 'POST':
      return (await s.t.graphql(c.query, c.variables, headers)).errors?.map((e) => e.message) ?? [];
    case 'GET': {
      const params = new URLSearchParams({ query: c.query, ...(c.variables && { variables: JSON.stringify(c.variables) }) });
      const res = await s.t.request(`/graphql?${params}`, { headers: { ...headers, accept: 'application/graphql-response+json' } });
      return errorsOf(await res.json());
    }
    case 'SSE': {
      const res = await s.t.request('/graphql', {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: c.query, variables: c.variables }),
      });
      const text = await res.text();
      if ((res.headers.get('content-type') ?? '').includes('json')) return errorsOf(JSON.parse(text));
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      return text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .filter((data) => data.startsWith('{'))
        .flatMap((data) => errorsOf(JSON.parse(data)));
    }
    case 'graphql-ws':
      return new Promise((resolve, reject) => {
        const found: string[] = [];
        s.ws.subscribe(
          { query: c.query, variables: c.variables },
          {
            next: (result) => found.push(...(result.errors ?? []).map((e) => e.message)),
            error: (error) => (Array.isArray(error) ? resolve(errorsOf({ errors: error })) : reject(error as Error)),
            complete: () => resolve(found),
          },
        );
      });
  }
}

function errorsOf(body: unknown): string[] {
  return ((body as { errors?: { message: string }[] }).errors ?? []).map((e) => e.message);
}

function transportsOf(c: Case): Transport[] {
  return c.subscription ? ['SSE', 'graphql-ws'] : ['POST', 'GET', 'SSE', 'graphql-ws'];
}

let production: Service;
let sandbox: Service;

beforeAll(async () => {
  [production, sandbox] = await Promise.all([start({ CHANNEL_ENV: 'production' }), start({})]);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await Promise.all([production?.t.close(), sandbox?.t.close()]);
});

describe('suggestions in GraphQL errors', () => {
  it('are hidden by default in production, shown in the sandbox', () => {
    expect(production.t.config.graphql.blockFieldSuggestions).toBe(true);
    expect(sandbox.t.config.graphql.blockFieldSuggestions).toBe(false);
  });

  for (const c of CASES) {
    it(`${c.name}: the sandbox suggests; production answers the same message without the suggestion, over ${transportsOf(c).join(', ')}`, async () => {
      for (const transport of transportsOf(c)) {
        const shown = await messages(sandbox, transport, c);
        expect(shown, `sandbox over ${transport}`).toContain(c.sandbox);
        const hidden = await messages(production, transport, c);
        expect(hidden, `production over ${transport}`).toContain(withoutSuggestion(c.sandbox));
        expect(hidden.filter((m) => m.includes('Did you mean')), `production over ${transport}`).toEqual([]);
        // Only the suggestion goes: every other error is the sandbox's word for word.
        expect(hidden, `production over ${transport}`).toEqual(shown.map(withoutSuggestion));
      }
    });
  }

  it('a variable refused in production keeps the status, code and location the sandbox gives', async () => {
    for (const c of CASES.filter((x) => x.variables && !x.subscription)) {
      const shown = await sandbox.t.graphql(c.query, c.variables, apiKey(sandbox.creds));
      const hidden = await production.t.graphql(c.query, c.variables, apiKey(production.creds));
      expect(hidden.status).toBe(400);
      expect(hidden.data ?? null).toBeNull();
      expect(hidden.status).toBe(shown.status);
      expect(hidden.errors?.map((e) => ({ ...e, message: withoutSuggestion(e.message) }))).toEqual(
        shown.errors?.map((e) => ({ ...e, message: withoutSuggestion(e.message) })),
      );
      expect(hidden.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
  });

  it('an unknown directive: graphql-js suggests nothing there; the message is the same in both', async () => {
    const c: Case = { name: 'directive', query: '{ channel { userId @skipp(if: true) } }', sandbox: 'Unknown directive "@skipp".' };
    for (const transport of transportsOf(c)) {
      expect(await messages(sandbox, transport, c)).toEqual([c.sandbox]);
      expect(await messages(production, transport, c)).toEqual([c.sandbox]);
    }
  });
});
