import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { graphqlResponse, graphqlWsClient, type Gql } from '../helpers/graphql.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * An operation's cost is worked out once (issue 18 item 3): the cost limit (GRAPHQL_MAX_COST, while
 * validating) and the rate limit (when the operation runs over HTTP, when it is subscribed over
 * graphql-ws) both need it; documentMeasure's calls are counted per request and per subscribe, the
 * charge reported beside them.
 */

const walks = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../src/graphql/cost.js', async (importOriginal) => {
  const cost = await importOriginal<typeof import('../../src/graphql/cost.js')>();
  return {
    ...cost,
    documentMeasure: (...args: Parameters<typeof cost.documentMeasure>) => {
      walks.count++;
      return cost.documentMeasure(...args);
    },
  };
});

let t: TestService;
let who: IssuedCredentials;
let port: number;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0' });
  who = await t.channel({ name: 'Cost Once' });
  port = await t.service.listen(0);
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await t?.close();
});

beforeEach(() => {
  walks.count = 0;
});

/** 600 points with $n = 40 (the default GRAPHQL_MAX_COST), 601 with $n = 41 (as in graphql-limits.test.ts). */
const CATALOG = 'edges { node { id roomTypes { id ratePlans { id } } } }';
const COST_QUERY = `query Catalog($n: Int!) {
  ${Array.from({ length: 5 }, (_, i) => `p${i}: properties(first: 100) { ${CATALOG} }`).join('\n  ')}
  last: properties(first: $n) { ${CATALOG} }
}`;
const BOOKINGS = 'query Page($n: Int) { bookings(first: $n) { totalCount edges { node { bookingId } } } }';

describe('over HTTP, one documentMeasure per request', () => {
  it('a POST with variables, charged its cost', async () => {
    const res = await graphqlResponse(t, BOOKINGS, { n: 50 }, { headers: apiKey(who) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Gql;
    expect(body.extensions.rateLimit.cost).toBe(1);
    expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();
    expect(walks.count).toBe(1);
  });

  it('the same document again (validation cached), and with an operation name among several', async () => {
    await graphqlResponse(t, BOOKINGS, { n: 50 }, { headers: apiKey(who) });
    expect(walks.count).toBe(1);
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...apiKey(who) },
      body: JSON.stringify({ query: `${BOOKINGS} query Other { app { name } }`, operationName: 'Other' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Gql).extensions.rateLimit.cost).toBe(1);
    expect(walks.count).toBe(2);
  });

  it('a GET, and a request without variables', async () => {
    const query = new URLSearchParams({ query: '{ app { name } }' });
    const res = await t.request(`/graphql?${query}`, { headers: { accept: 'application/graphql-response+json', ...apiKey(who) } });
    expect(res.status).toBe(200);
    expect(walks.count).toBe(1);
    await graphqlResponse(t, '{ channel { name } }', undefined, { headers: apiKey(who) });
    expect(walks.count).toBe(2);
  });

  it('an operation over the cost limit: refused while validating (not charged), one walk; at the limit, charged after one walk', async () => {
    const refused = await graphqlResponse(t, COST_QUERY, { n: 41 }, { headers: apiKey(who) });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Gql).errors[0].extensions.code).toBe('COST_LIMIT_EXCEEDED');
    expect(walks.count).toBe(1);
    const ok = await graphqlResponse(t, COST_QUERY, { n: 40 }, { headers: apiKey(who) });
    expect(((await ok.json()) as Gql).extensions.rateLimit.cost).toBe(600);
    expect(walks.count).toBe(2);
  });

  it('without a credential (the cost limit alone): one walk', async () => {
    await graphqlResponse(t, BOOKINGS, { n: 5 });
    expect(walks.count).toBe(1);
  });
});

describe('over graphql-ws, one documentMeasure per subscribe', () => {
  it('a query and a subscription, each charged once', async () => {
    const client = graphqlWsClient(port, who, clients);
    const first = await new Promise<Gql>((resolve, reject) => {
      let got: Gql | undefined;
      client.subscribe({ query: BOOKINGS, variables: { n: 10 } }, { next: (r) => (got ??= r as Gql), error: reject, complete: () => resolve(got!) });
    });
    expect(first.extensions.rateLimit.cost).toBe(1);
    expect(walks.count).toBe(1);
    // A subscription with variables, and one with an operation name: a walk each, when subscribed.
    for (const [i, payload] of [
      { query: 'subscription($t: [BookingEventType!]) { bookingEvents(types: $t) { type } }', variables: { t: ['BOOKING_CONFIRMED'] } },
      { query: 'subscription Mine { bookingEvents { type } }', operationName: 'Mine' },
    ].entries()) {
      const stop = client.subscribe(payload, { next: () => undefined, error: () => undefined, complete: () => undefined });
      await vi.waitFor(() => expect(walks.count).toBe(2 + i));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(walks.count).toBe(2 + i);
      stop();
    }
  });
});
