import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentMeasure } from '../../src/graphql/cost.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { v1 } from '../helpers/flow.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * A booking's event history is a bounded page (`Booking.events(first:)`, the newest 10 unless
 * `first` says otherwise, at most 100), priced by its page, and no accepted document can answer
 * more values than GRAPHQL_MAX_ANSWER_VALUES (docs/decisions.md, "Hardening: GraphQL documents").
 * The booking has 62 events (booked, confirmed and 60 PATCHes), as in the attack: the document
 * nesting `events { booking { events { … } } }` four levels answered 479 MB before.
 */

let t: TestService;
let who: IssuedCredentials;
let base: string;
let bookingId: string;

const EVENTS = 62;

beforeAll(async () => {
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0' });
  who = await t.channel({ name: 'Event History' });
  base = `http://127.0.0.1:${await t.service.listen(0)}`;
  const api = v1(t, who);
  const offer = await api.offer({ from: 20 });
  bookingId = (await (await api.book({ book_token: offer.bookToken, booker_name: 'History' })).json()).data.id;
  for (let i = 0; i < EVENTS - 2; i++) {
    const res = await api.call('PATCH', `/bookings/${bookingId}`, { special_requests: `Request ${i}` });
    expect(res.status).toBe(200);
  }
}, 120_000);

afterAll(() => t?.close());

interface Answer {
  status: number;
  bytes: number;
  ms: number;
  body: { data?: any; errors?: { message: string; extensions?: { code?: string; details?: Record<string, unknown> } }[] };
}

async function post(query: string, variables: Record<string, unknown> = {}): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...apiKey(who) },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  return { status: res.status, bytes: Buffer.byteLength(text), ms: performance.now() - started, body: JSON.parse(text) };
}

async function healthz(): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${base}/healthz`);
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}

/** `events { booking { events { … } } }` `levels` deep under booking(id:), the innermost events selecting `leaf`. */
function nested(levels: number, leaf: string, args = ''): string {
  let selection = `events${args} { ${leaf} }`;
  for (let i = 1; i < levels; i++) selection = `events${args} { booking { ${selection} } }`;
  return `query History($id: ID!) { booking(id: $id) { ${selection} } }`;
}

/** Every event object of the answer at the innermost level. */
function innermost(events: any[], levels: number): any[] {
  if (levels === 1) return events;
  return events.flatMap((e) => innermost(e.booking.events, levels - 1));
}

const WHOLE_BOOKING =
  'id type occurredAt booking { bookingId userId appId hubBookingNumber channelBookingNumber propertyId propertyName roomType ' +
  'ratePlan checkin checkout guestsAdult guestsChild bookerName bookerEmail guestFirstName guestLastName guestPhone guestCountry ' +
  'specialRequests totalAmount netAmount saleAmount currency status cancellationPolicy cancellationDeadline refundAmount ' +
  'cancellationFee createdAt updatedAt }';

describe('Booking.events is a bounded page of the newest events', () => {
  it('answers the newest 10 by default, `first` of them when asked, newest first', async () => {
    const answer = await post('query($id: ID!) { booking(id: $id) { all: events(first: 100) { id type } some: events { id } none: events(first: 0) { id } } }', {
      id: bookingId,
    });
    expect(answer.status).toBe(200);
    const { all, some, none } = answer.body.data.booking;
    expect(all).toHaveLength(EVENTS);
    expect(all.at(-1).type).toBe('RESERVATION_CREATED');
    expect(all[0].type).toBe('RESERVATION_MODIFIED');
    expect(some.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 10).map((e: { id: string }) => e.id));
    expect(none).toEqual([]);
  });

  it('refuses `first` over 100 or below 0 with VALIDATION_ERROR naming it', async () => {
    for (const first of [101, -1]) {
      const answer = await post(`query($id: ID!) { booking(id: $id) { events(first: ${first}) { id } } }`, { id: bookingId });
      expect(answer.body.data).toEqual({ booking: { events: null } });
      expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'first' }] } });
    }
  });

  it('is priced by its page: `first: 100` under a page of 100 bookings counts 10,000 items more', () => {
    const page = (first: string) => parse(`{ bookings(first: 100) { edges { node { events${first} { type } } } } }`);
    expect(documentMeasure(page('')).cost).toBe(11);
    expect(documentMeasure(page('(first: 100)')).cost).toBe(101);
  });
});

describe("the attack's document, four levels of events on a booking with 62 events", () => {
  it('answers at most 10 events a level (10,000 at the innermost, under 1 MB) while /healthz is answered', async () => {
    const [answer, health] = await Promise.all([post(nested(4, 'id type'), { id: bookingId }), healthz()]);
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    const events = innermost(answer.body.data.booking.events, 4);
    expect(events).toHaveLength(10 ** 4);
    expect(answer.bytes).toBeLessThan(1024 * 1024);
    expect(health.status).toBe(200);
  });

  it('with `first: 62` at every level: 400 COST_LIMIT_EXCEEDED before anything runs', async () => {
    const answer = await post(nested(4, 'id type', '(first: 62)'), { id: bookingId });
    expect(answer.status).toBe(400);
    expect(answer.body.data).toBeUndefined();
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'COST_LIMIT_EXCEEDED' });
  });

  it('with the whole booking at the innermost level: 400 ANSWER_LIMIT_EXCEEDED, though it costs 112 points', async () => {
    const document = nested(4, WHOLE_BOOKING);
    expect(documentMeasure(parse(document)).cost).toBe(112);
    const [answer, health] = await Promise.all([post(document, { id: bookingId }), healthz()]);
    expect(answer.status).toBe(400);
    expect(answer.body.data).toBeUndefined();
    const error = answer.body.errors?.[0];
    expect(error?.extensions?.code).toBe('ANSWER_LIMIT_EXCEEDED');
    expect(error?.extensions?.details).toMatchObject({ limit: 250_000 });
    expect(Number(error?.extensions?.details?.found)).toBeGreaterThan(250_000);
    expect(health.status).toBe(200);
  });

  it('charges nothing for the refusal beyond what refused documents cost', async () => {
    const before = await post('{ __typename }');
    const refused = await post(nested(4, WHOLE_BOOKING), { id: bookingId });
    const after = await post('{ __typename }');
    expect(refused.status).toBe(400);
    const remaining = (a: Answer) => (a.body as { extensions?: { rateLimit?: { remaining?: number } } }).extensions?.rateLimit?.remaining;
    expect(remaining(before)! - remaining(after)!).toBeLessThanOrEqual(3);
  });
});

describe('the answer-value bound holds for any shape, not only event histories', () => {
  it('counts every field once per instance of its parent and every list item', () => {
    expect(documentMeasure(parse('{ channel { name } }')).values).toBe(2);
    // bookings: 1, edges: 1 + 5 items, node: 5, each with 2 fields.
    expect(documentMeasure(parse('{ bookings(first: 5) { edges { node { status checkin } } } }')).values).toBe(1 + 1 + 5 + 5 * (1 + 2));
  });

  it("the REST page's twin passes: 100 properties with their content lists (images and links, amenities, room types)", () => {
    const image = 'images(sizes: [THUMBNAIL, LARGE]) { imageId hero category caption links { size width height href } }';
    const content = `propertyId name ${image} descriptions { headline general } amenities { code group name } spokenLanguages
      roomTypes { roomtypeId name views ${image} amenities { code group name } ratePlans { rateplanId name amenities { code name } } }`;
    const { values } = documentMeasure(parse(`{ properties(first: 100) { edges { node { ${content} } } } }`));
    expect(values).toBeGreaterThan(50_000);
    expect(values).toBeLessThan(250_000);
  });

  it('a page of 100 bookings with 100 events each, each with its record: cheap in points, refused for its answer', async () => {
    const document = `{ bookings(first: 100) { edges { node { events(first: 100) { ${WHOLE_BOOKING} } } } } }`;
    expect(documentMeasure(parse(document)).cost).toBeLessThan(600);
    const answer = await post(document);
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('ANSWER_LIMIT_EXCEEDED');
  });
});
