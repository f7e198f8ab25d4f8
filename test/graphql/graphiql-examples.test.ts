import { getVariableValues, Kind, parse, validate, type OperationDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BOOK,
  BOOKING_EVENTS,
  CANCEL,
  DEFAULT_QUERY,
  HEADERS_PLACEHOLDER,
  PRICE_CHECK,
  PROPERTY_PAGE,
  PROPERTY_RATES,
  SEARCH,
  exampleTabs,
} from '../../src/graphql/graphiql/examples.js';
import { graphiqlOptions, renderGraphiQLPage } from '../../src/graphql/graphiql/page.js';
import { schema } from '../../src/schema/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { v1 } from '../helpers/flow.js';
import { apiKey, startTestService, type GraphQLResult, type TestService } from '../helpers/service.js';

/**
 * The operations GraphiQL opens with (src/graphql/graphiql/examples.ts), held to the schema: each
 * parses, validates and takes its variables; then the booking journey runs through them, step by
 * step, against the service. A schema change that breaks an example fails here.
 */

const tabs = exampleTabs(new Date());

function operationOf(query: string): OperationDefinitionNode {
  const operations = parse(query).definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  expect(operations).toHaveLength(1);
  return operations[0]!;
}

describe('GraphiQL examples against the schema', () => {
  it('one tab per step of the journey, the default query first, each with the key placeholder', () => {
    expect(tabs.map((tab) => tab.query)).toEqual([DEFAULT_QUERY, SEARCH, PROPERTY_PAGE, PROPERTY_RATES, PRICE_CHECK, BOOK, CANCEL, BOOKING_EVENTS]);
    expect(tabs.map((tab) => operationOf(tab.query).name?.value)).toEqual([
      'Channel',
      'Search',
      'PropertyPage',
      'PropertyRates',
      'PriceCheck',
      'Book',
      'Cancel',
      'BookingEvents',
    ]);
    expect(tabs.map((tab) => operationOf(tab.query).operation)).toEqual(['query', 'query', 'query', 'query', 'query', 'mutation', 'mutation', 'subscription']);
    for (const tab of tabs) expect(JSON.parse(tab.headers!)).toEqual({ 'X-Api-Key': '<your API key>' });
  });

  it.each(tabs.map((tab) => [operationOf(tab.query).name!.value, tab] as const))('%s parses, validates and takes its variables', (_name, tab) => {
    const document = parse(tab.query);
    expect(validate(schema, document).map((e) => e.message)).toEqual([]);
    const coerced = getVariableValues(schema, operationOf(tab.query).variableDefinitions ?? [], tab.variables ? JSON.parse(tab.variables) : {});
    expect(coerced.errors?.map((e) => e.message)).toBeUndefined();
  });

  it('GraphiQL is given the default query, the tabs, the headers placeholder and SSE for subscriptions', async () => {
    const options = graphiqlOptions();
    expect(options).toMatchObject({
      defaultQuery: DEFAULT_QUERY,
      defaultHeaders: HEADERS_PLACEHOLDER,
      isHeadersEditorEnabled: true,
      defaultEditorToolsVisibility: 'headers',
      subscriptionsProtocol: 'SSE',
      method: 'POST',
    });
    expect(options.defaultTabs?.[0]?.query).toBe(DEFAULT_QUERY);
    const page = await renderGraphiQLPage(options);
    const html = new TextDecoder().decode(page.body);
    // The page carries them as GraphiQL's props, and loads nothing from elsewhere.
    expect(html).toContain(JSON.stringify(DEFAULT_QUERY));
    expect(html).not.toMatch(/unpkg\.com|raw\.githubusercontent\.com|graphql\.worker\.\.bundle/);
    expect(page.scriptHashes).toEqual([expect.stringMatching(/^'sha256-[A-Za-z0-9+/]{43}='$/)]);
  });
});

describe('the booking journey, run through the examples', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  beforeAll(async () => {
    t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '50' });
    creds = await t.channel({ name: 'Journey' });
  });
  afterAll(() => t?.close());

  const run = async (query: string, variables: Record<string, unknown> = {}) => {
    const result = await t.graphql(query, variables, apiKey(creds));
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    return result.data as Record<string, any>;
  };
  const variablesOf = (query: string) => JSON.parse(tabs.find((tab) => tab.query === query)!.variables ?? '{}') as Record<string, any>;

  it('channel -> search -> property page -> property rates -> price check -> book -> cancel', async () => {
    expect((await run(DEFAULT_QUERY)).channel).toMatchObject({ userId: creds.user_id, name: 'Journey' });

    const search = variablesOf(SEARCH);
    const found = (await run(SEARCH, search)).availability.edges.map((e: { node: unknown }) => e.node) as { property: { id: string }; available: boolean }[];
    const candidates = [variablesOf(PROPERTY_RATES).id, ...found.filter((item) => item.available).map((item) => item.property.id)];
    expect(candidates.length).toBeGreaterThan(1);

    // The page of the first one, in English, its hero at the large size on this service.
    const page = (await run(PROPERTY_PAGE, { ...variablesOf(PROPERTY_PAGE), id: candidates[0] })).property;
    expect(page.descriptions.headline).not.toBe('');
    expect(page.heroImage.links).toEqual([{ width: 1280, height: 853, href: expect.stringMatching(/^http:\/\/channel\.test\/images\/\d+\/[^/]+\/large\.png$/) }]);
    expect(page.roomTypes.length).toBeGreaterThan(0);

    let bookToken: string | undefined;
    for (const id of candidates) {
      const rates = variablesOf(PROPERTY_RATES);
      const { availability } = (await run(PROPERTY_RATES, { ...rates, id })).property;
      const tokens = (availability.roomTypes as { rates: { priceCheckToken: string | null }[] }[]).flatMap((room) => room.rates.map((rate) => rate.priceCheckToken)).filter(Boolean);
      for (const token of tokens) {
        const checked = (await run(PRICE_CHECK, { ...variablesOf(PRICE_CHECK), token })).priceCheck;
        if (checked.status === 'MATCHED') {
          bookToken = checked.bookToken;
          break;
        }
      }
      if (bookToken) break;
    }
    expect(bookToken).toBeTruthy();

    const book = variablesOf(BOOK);
    const booked = (await run(BOOK, { input: { ...book.input, bookToken } })).createBooking;
    expect(booked.__typename, JSON.stringify(booked)).toBe('CreateBookingSuccess');
    expect(booked.booking.status).toBe('CONFIRMED');

    const cancelled = (await run(CANCEL, { id: booked.booking.id })).cancelBooking;
    expect(cancelled.__typename, JSON.stringify(cancelled)).toBe('CancelBookingSuccess');
    expect(cancelled.booking).toMatchObject({ id: booked.booking.id, bookingId: booked.booking.bookingId, status: 'CANCELLED' });
  });

  it('the subscription example receives an event over SSE with the key as a header, as GraphiQL sends it', async () => {
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { ...apiKey(creds), 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: BOOKING_EVENTS, variables: variablesOf(BOOKING_EVENTS) }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const first = reader.read().then(({ value }) => (text += value ?? ''));
    await first;
    const flow = v1(t, creds);
    const offer = await flow.offer({ from: 30 });
    const booked = await flow.book({ book_token: offer.bookToken, booker_name: 'Sub Scriber', guests_adult: 2 });
    expect(booked.status).toBe(201);
    const { id } = ((await booked.json()) as { data: { id: string } }).data;
    // Events of the previous test's booking may still come first: wait for this booking's.
    const events = () =>
      text
        .split('\n\n')
        .slice(0, -1) // the last piece is an unfinished frame (or empty)
        .filter((frame) => frame.startsWith('event: next'))
        .map((frame) => (JSON.parse(frame.slice(frame.indexOf('data:') + 5)) as { data: { bookingEvents: { type: string; booking: { bookingId: string } } } }).data.bookingEvents);
    while (!events().some((event) => event.booking.bookingId === id)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    expect(events().find((event) => event.booking.bookingId === id)).toMatchObject({ type: 'RESERVATION_CREATED', booking: { bookingId: id } });
    await reader.cancel();
  });

  it('without a key, the default query says what is missing', async () => {
    const result: GraphQLResult = await t.graphql(DEFAULT_QUERY, {}, JSON.parse(HEADERS_PLACEHOLDER));
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
  });
});
