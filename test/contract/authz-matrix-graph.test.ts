import { randomUUID } from 'node:crypto';
import { getNamedType, isAbstractType, isObjectType, type GraphQLField, type GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';
import { NODE_READS } from '../../src/schema/node.js';
import { requiredScopes, SCOPES, scopesOf, type Operation, type Scope } from '../../src/services/access/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { day, v1 } from '../helpers/flow.js';
import { dataOf, gql, type Gql } from '../helpers/graphql.js';
import { bearerWith, startTestService, type GraphQLResult, type TestService } from '../helpers/service.js';

/**
 * The authorization matrix of the graph (issue 17): every Node type through Query.node and
 * Query.nodes, and every edge that needs a scope of its own, × {a credential lacking one of the
 * scopes it needs, another channel}. An object is read only with the scope its REST read needs:
 * through node and nodes a type the credential may not read is null; an edge without its scope
 * is null with INSUFFICIENT_SCOPE naming it at its path, and nothing of it leaks. The edges are
 * found in the schema, so a new one fails here until it has its row.
 */

let t: TestService;
let owner: IssuedCredentials;
let stranger: IssuedCredentials;
const ids: Record<string, string> = {};
const rest: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0' });
  owner = await t.channel({ name: 'Graph matrix owner' });
  stranger = await t.channel({ name: 'Graph matrix stranger' });
  const flow = v1(t, owner);
  const offer = await flow.offer({ checkin: day(30), checkout: day(32) });
  const booked = await flow.book({ book_token: offer.bookToken, booker_name: 'Matrix Guest', guests_adult: 2 });
  expect(booked.status).toBe(201);
  rest.booking = (await booked.json()).data.id;
  const webhook = dataOf(await gql(t, owner, 'mutation { createWebhook(input: { url: "https://hooks.example.com/matrix" }) { webhook { id webhookId } } }')).createWebhook.webhook;
  rest.webhook = webhook.webhookId;
  rest.delivery = randomUUID();
  await t.service.deps.db.prisma.webhookDelivery.create({
    data: {
      id: rest.delivery,
      endpointId: webhook.webhookId,
      channelId: owner.user_id,
      type: 'reservation.created',
      body: JSON.stringify({ type: 'reservation.created', data: { booker_name: 'Private Guest' } }),
      status: 'failed',
      nextAttemptAt: new Date(),
      createdAt: new Date(),
    },
  });
  const read = dataOf(
    await gql(
      t,
      owner,
      `query($b: ID!, $w: ID!, $d: ID!) {
        booking(id: $b) { id reservation { id } property { id roomTypes { id ratePlans { id } } } }
        webhookDelivery(webhookId: $w, id: $d) { id }
      }`,
      { b: rest.booking, w: rest.webhook, d: rest.delivery },
    ),
  );
  Object.assign(ids, {
    Booking: read.booking.id,
    Reservation: read.booking.reservation.id,
    Property: read.booking.property.id,
    RoomType: read.booking.property.roomTypes[0].id,
    RatePlan: read.booking.property.roomTypes[0].ratePlans[0].id,
    WebhookEndpoint: webhook.id,
    WebhookDelivery: read.webhookDelivery.id,
  });
}, 120_000);

afterAll(async () => t?.close());

/** Bearer tokens of the owner's app carrying every scope but one. */
const tokens = new Map<Scope, Record<string, string>>();
async function without(scope: Scope): Promise<Record<string, string>> {
  const known = tokens.get(scope);
  if (known) return known;
  const res = await t.request('/channel/v1/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: owner.client_id,
      client_secret: owner.client_secret,
      scope: SCOPES.filter((s) => s !== scope).join(' '),
    }),
  });
  expect(res.status).toBe(200);
  const headers = { authorization: `Bearer ${((await res.json()) as { access_token: string }).access_token}` };
  tokens.set(scope, headers);
  return headers;
}

describe('Query.node and Query.nodes', () => {
  const NODES = 'query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }';

  it('read each type only with the scopes of its REST read: without one of them, null', async () => {
    const types = Object.keys(NODE_READS) as (keyof typeof NODE_READS)[];
    expect(Object.keys(ids).sort()).toEqual([...types].sort());
    for (const scope of SCOPES) {
      const headers = await without(scope);
      const res = await t.graphql(NODES, { ids: types.map((type) => ids[type]) }, headers);
      expect(res.errors).toBeUndefined();
      const nodes = (res.data as Gql).nodes as (Gql | null)[];
      for (const [i, type] of types.entries()) {
        const readable = !requiredScopes(scopesOf(NODE_READS[type])).includes(scope);
        expect({ scope, type, found: nodes[i]?.id ?? null }).toEqual({ scope, type, found: readable ? ids[type] : null });
        const one = await t.graphql('query($id: ID!) { node(id: $id) { id } }', { id: ids[type] }, headers);
        expect({ scope, type, found: (one.data as Gql).node?.id ?? null }).toEqual({ scope, type, found: readable ? ids[type] : null });
      }
    }
  });

  it("read another channel's bookings, reservations, webhooks and deliveries as null", async () => {
    const res = dataOf(await gql(t, stranger, NODES, { ids: Object.values(ids) }));
    const found = Object.fromEntries(Object.keys(ids).map((type, i) => [type, res.nodes[i] !== null]));
    expect(found).toEqual({ Booking: false, Reservation: false, Property: true, RoomType: true, RatePlan: true, WebhookEndpoint: false, WebhookDelivery: false });
  });
});

interface EdgeRow {
  /** A document reaching the edge, with a parent the credential may read without the edge's scope where one can. */
  query: string;
  variables: () => Record<string, unknown>;
  /** Where the edge's value is in `data`. */
  path: (string | number)[];
}

const stay = { checkin: day(30), checkout: day(32), adults: 2 };
const booking = () => ({ id: rest.booking });

/**
 * Every edge with a scope of its own. The booking's edges that need reservations:read are reached
 * through updateBooking's answer (reservations:write), the channel's app through updateChannel's
 * (channels:write): the only ways to hold their parents without that scope.
 */
const EDGES: Record<string, EdgeRow> = {
  'Booking.property': { query: 'query($id: ID!) { booking(id: $id) { bookingId property { name } } }', variables: booking, path: ['booking', 'property'] },
  ...Object.fromEntries(
    (['reservation { confirmationNumber }', 'cancellationQuote { final }', 'cancellationTerms { type }', 'events { type }'] as const).map((selection) => {
      const field = selection.split(' ')[0]!;
      return [
        `Booking.${field}`,
        {
          query: `mutation($id: ID!) { updateBooking(id: $id, input: { specialRequests: "matrix" }) { ... on UpdateBookingSuccess { booking { bookingId ${selection} } } } }`,
          variables: booking,
          path: ['updateBooking', 'booking', field],
        },
      ];
    }),
  ),
  'Channel.app': { query: 'mutation { updateChannel(input: { company: "Matrix" }) { name app { appId } } }', variables: () => ({}), path: ['updateChannel', 'app'] },
  'Channel.bookings': { query: '{ channel { name bookings { totalCount } } }', variables: () => ({}), path: ['channel', 'bookings'] },
  'Channel.webhooks': { query: '{ channel { name webhooks { totalCount } } }', variables: () => ({}), path: ['channel', 'webhooks'] },
  'Property.availability': {
    query: 'query($s: StayInput!) { property(id: "1") { name availability(stay: $s) { nights } } }',
    variables: () => ({ s: stay }),
    path: ['property', 'availability'],
  },
  'PropertyAvailability.property': {
    query: 'query($i: PropertyAvailabilityInput!) { propertyAvailability(input: $i) { nights property { name address phone descriptions { general } } } }',
    variables: () => ({ i: { propertyId: 1, ...stay } }),
    path: ['propertyAvailability', 'property'],
  },
  'Property.roomTypes': { query: '{ property(id: "1") { name roomTypes { name } } }', variables: () => ({}), path: ['property', 'roomTypes'] },
  'Property.ratePlans': { query: '{ property(id: "1") { name ratePlans { name } } }', variables: () => ({}), path: ['property', 'ratePlans'] },
  'Reservation.property': { query: 'query($id: ID!) { reservation(id: $id) { confirmationNumber property { name } } }', variables: booking, path: ['reservation', 'property'] },
  'RoomType.property': {
    query: 'query($id: ID!) { node(id: $id) { ... on RoomType { name property { name } } } }',
    variables: () => ({ id: ids.RoomType }),
    path: ['node', 'property'],
  },
  'SearchItem.property': {
    query: 'query($i: AvailabilitySearchInput!) { availability(input: $i, first: 1) { edges { node { propertyId property { name } } } } }',
    variables: () => ({ i: stay }),
    path: ['availability', 'edges', 0, 'node', 'property'],
  },
  'WebhookEndpoint.deliveries': {
    query: 'query($id: ID!) { webhook(id: $id) { url deliveries { edges { node { payload } } } } }',
    variables: () => ({ id: rest.webhook }),
    path: ['webhook', 'deliveries'],
  },
};

function at(data: unknown, path: (string | number)[]): unknown {
  return path.reduce<unknown>((value, key) => (value === null || value === undefined ? value : (value as Record<string | number, unknown>)[key]), data);
}

/** The schema's edges: fields of object types other than the roots that declare scopes of their own. */
function scopedEdges(): Map<string, Scope[]> {
  const edges = new Map<string, Scope[]>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(getNamedType(type)) || !isObjectType(type) || type.name.startsWith('__')) continue;
    if (['Query', 'Mutation', 'Subscription'].includes(type.name)) continue;
    for (const field of Object.values(type.getFields())) {
      const scope = (field.extensions?.pothosOptions as { authScopes?: { scope?: Scope | Scope[] } } | undefined)?.authScopes?.scope;
      if (scope) edges.set(`${type.name}.${field.name}`, [...requiredScopes(scope)]);
    }
  }
  return edges;
}

describe('every edge with a scope of its own', () => {
  it('has its row in the matrix', () => {
    expect([...scopedEdges().keys()].sort()).toEqual(Object.keys(EDGES).sort());
  });

  it('is read with every scope', async () => {
    for (const [edge, row] of Object.entries(EDGES)) {
      const res = await gql(t, owner, row.query, row.variables());
      expect({ edge, errors: res.errors }).toEqual({ edge, errors: undefined });
      expect(at(res.data, row.path), edge).not.toBeNull();
      expect(at(res.data, row.path), edge).not.toBeUndefined();
    }
  });

  it('without one of its scopes is null, with INSUFFICIENT_SCOPE naming that scope at its path (or at a parent that needs it too)', async () => {
    for (const [edge, scopes] of scopedEdges()) {
      const row = EDGES[edge]!;
      for (const scope of scopes) {
        const res: GraphQLResult = await t.graphql(row.query, row.variables(), await without(scope));
        const label = `${edge} without ${scope}`;
        expect(at(res.data, row.path) ?? null, label).toBeNull();
        const refusals = (res.errors ?? []).filter((e) => e.extensions?.code === 'INSUFFICIENT_SCOPE');
        expect(refusals.length, `${label}: ${JSON.stringify(res.errors)}`).toBeGreaterThan(0);
        for (const refusal of refusals) {
          expect(refusal.extensions?.details, label).toEqual({ required_scope: scope });
          // At the edge, or at a parent on the way to it.
          expect(row.path.slice(0, refusal.path!.length), label).toEqual(refusal.path);
        }
        // Nothing of the edge's value leaks (the delivery's payload holds the guest's name).
        expect(JSON.stringify(res), label).not.toContain('Private Guest');
      }
    }
  });

  it('where its parent needs less, the parent stands: the refusal is at the edge alone', async () => {
    // The parents these rows reach without the edge's scope; WebhookEndpoint.deliveries lacking
    // channels:write is refused at the webhook itself (every read of a webhook needs it).
    const isolated = Object.keys(EDGES).filter((edge) => edge !== 'WebhookEndpoint.deliveries');
    for (const edge of isolated) {
      const row = EDGES[edge]!;
      for (const scope of scopedEdges().get(edge)!) {
        const res = await t.graphql(row.query, row.variables(), await without(scope));
        const parent = at(res.data, row.path.slice(0, -1));
        expect({ edge, scope, parent: parent !== null && parent !== undefined }).toEqual({ edge, scope, parent: true });
        expect({ edge, scope, paths: res.errors?.map((e) => e.path) }).toEqual({ edge, scope, paths: [row.path] });
      }
    }
    const deliveries = EDGES['WebhookEndpoint.deliveries']!;
    const res = await t.graphql(deliveries.query, deliveries.variables(), await without('reservations:read'));
    expect((res.data as Gql).webhook.url).toBe('https://hooks.example.com/matrix');
    expect(res.errors?.map((e) => e.path)).toEqual([deliveries.path]);
  });

  it("another channel reaches none of the owner's objects through an edge", async () => {
    const res = await gql(t, stranger, EDGES['Booking.property']!.query, booking());
    expect((res.data as Gql).booking).toBeNull();
    const channel = dataOf(await gql(t, stranger, '{ channel { bookings { totalCount edges { node { bookingId } } } webhooks { totalCount } } }')).channel;
    expect(channel.bookings).toEqual({ totalCount: 0, edges: [] });
    expect(channel.webhooks.totalCount).toBe(0);
  });
});

/**
 * Each type whose content a REST read guards, with that read's operation: the Node types, and the
 * channel's own objects.
 */
const GUARDED: Record<string, Operation> = { ...NODE_READS, Channel: 'channel.read', App: 'app.read', Voucher: 'voucher.read', CancellationQuote: 'booking.cancellationQuote' };

/**
 * Edges that answer a guarded object without its read scope, each for the reason REST does the
 * same: a mutation answers what it wrote (POST /bookings answers the booking record with
 * reservations:write), and node/nodes check each type's scope when they resolve (NODE_READS).
 */
const ANSWERS_WHAT_IT_WROTE = new Set([
  'CreateBookingSuccess.booking',
  'UpdateBookingSuccess.booking',
  'CancelBookingSuccess.booking',
  'BookingDatesChange.booking',
  'CreateReservationSuccess.reservation',
  'UpdateReservationSuccess.reservation',
  'ReservationCancellation.reservation',
  // The rooms a cancellation cancelled, each with its booking (REST answers the whole reservation).
  'ReservationCancellation.cancelledRooms',
  'CreateWebhookPayload.webhook',
  'Mutation.updateChannel',
  'Mutation.setIpAllowList',
  'Mutation.pingWebhook',
  'Query.node',
  'Query.nodes',
]);

function declaredScopes(field: { extensions?: { pothosOptions?: unknown } | null }): Scope[] {
  const scope = (field.extensions?.pothosOptions as { authScopes?: { scope?: Scope | Scope[] } } | undefined)?.authScopes?.scope;
  return scope ? [...requiredScopes(scope)] : [];
}

/**
 * The edges of the built schema that lead into a guarded type without its read scope: for every
 * field returning a guarded type (through lists, connections' edges, unions and interfaces), the
 * scopes certainly held when it resolves (its own, and those every way to its parent requires:
 * worked out over the whole graph) must include the type's. A new edge without its scope fails.
 */
function unguardedEdges(): string[] {
  const objects = Object.values(schema.getTypeMap()).filter((type): type is GraphQLObjectType => isObjectType(type) && !type.name.startsWith('__'));
  const roots = new Set(['Query', 'Mutation', 'Subscription']);
  const readOf = (type: string) => (GUARDED[type] ? requiredScopes(scopesOf(GUARDED[type]!)) : []);
  const targets = (field: GraphQLField<unknown, unknown>): string[] => {
    const named = getNamedType(field.type);
    if (isObjectType(named)) return [named.name];
    return isAbstractType(named) ? schema.getPossibleTypes(named).map((type) => type.name) : [];
  };
  // The scopes held on every way to each type: all of them until a way shows fewer (a greatest fixpoint).
  const held = new Map(objects.map((type) => [type.name, new Set<Scope>(roots.has(type.name) ? [] : SCOPES)]));
  for (let changed = true; changed; ) {
    changed = false;
    for (const parent of objects) {
      for (const field of Object.values(parent.getFields())) {
        const edge = `${parent.name}.${field.name}`;
        for (const target of targets(field)) {
          // A mutation's answer (what it wrote) holds what it holds whatever the scopes: no requirement of its own.
          const way = new Set([...held.get(parent.name)!, ...declaredScopes(field), ...(ANSWERS_WHAT_IT_WROTE.has(edge) ? SCOPES : [])]);
          const known = held.get(target)!;
          for (const scope of [...known]) {
            if (way.has(scope)) continue;
            known.delete(scope);
            changed = true;
          }
        }
      }
    }
  }
  const unguarded: string[] = [];
  for (const parent of objects) {
    for (const field of Object.values(parent.getFields())) {
      const edge = `${parent.name}.${field.name}`;
      if (ANSWERS_WHAT_IT_WROTE.has(edge)) continue;
      const scopes = new Set([...held.get(parent.name)!, ...declaredScopes(field)]);
      for (const target of targets(field)) {
        const missing = readOf(target).filter((scope) => !scopes.has(scope));
        if (missing.length) unguarded.push(`${edge} -> ${target} lacks ${missing.join(', ')}`);
      }
    }
  }
  return unguarded;
}

describe('every field that returns a guarded type', () => {
  it('declares the read scope of that type, or is reached only with it (derived from the built schema)', () => {
    expect(unguardedEdges()).toEqual([]);
    for (const edge of ANSWERS_WHAT_IT_WROTE) {
      const [type, field] = edge.split('.') as [string, string];
      const parent = schema.getType(type);
      expect(isObjectType(parent) ? parent.getFields()[field] : undefined, edge).toBeDefined();
    }
  });

  it("search:availability alone reads rates and prices but none of a property's content, through any search field", async () => {
    const searcher = await bearerWith(t, owner, ['search:availability']);
    const content = 'property { name address phone descriptions { general } policies { knowBeforeYouGo } images { caption } }';
    const item = { propertyId: 1, ...stay };
    const documents = {
      propertyAvailability: [`query($i: PropertyAvailabilityInput!) { propertyAvailability(input: $i) { nights ${content} } }`, { i: item }],
      rates: [`query($i: RatesInput!) { rates(input: $i) { nights ${content} } }`, { i: item }],
      batchRates: [`query($i: BatchRatesInput!) { batchRates(input: $i) { status data { nights ${content} } } }`, { i: { items: [item, { ...item, propertyId: 2 }] } }],
    } as const;
    const { name } = dataOf(await gql(t, owner, '{ property(id: "1") { name } }')).property;
    for (const [field, [query, variables]] of Object.entries(documents)) {
      const res = await t.graphql(query, variables, searcher);
      const refusals = res.errors ?? [];
      expect(refusals.length, field).toBeGreaterThan(0);
      for (const refusal of refusals) expect(refusal.extensions, field).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'properties:read' } });
      const answer = (res.data as Gql)[field];
      for (const offers of field === 'batchRates' ? answer.map((r: Gql) => r.data) : [answer]) expect({ field, nights: offers.nights, property: offers.property }).toEqual({ field, nights: 2, property: null });
      expect(JSON.stringify(res), field).not.toContain(name);
    }
  });
});
