import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { day, v1 } from '../helpers/flow.js';
import { dataOf, edgesNodes, gql, topError, type Gql } from '../helpers/graphql.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * Global object identification (issue 17): every Node type resolves through Query.node and
 * Query.nodes by the id the graph gave it; another channel's objects resolve to null (the scopes
 * of each type: test/contract/authz-matrix-graph.test.ts); root fields take a REST id or a global
 * id alike.
 */

let t: TestService;
let owner: IssuedCredentials;
let stranger: IssuedCredentials;
/** One object of each Node type, as the owner reads it: its global id and its REST id. */
const ids: Record<string, { id: string; rest: string }> = {};

const NODE = `query($id: ID!) { node(id: $id) { __typename id
  ... on Property { propertyId name }
  ... on RoomType { roomtypeId propertyId name }
  ... on RatePlan { rateplanId roomtypeId name }
  ... on Booking { bookingId status }
  ... on Reservation { reservationId confirmationNumber }
  ... on WebhookEndpoint { webhookId url }
  ... on WebhookDelivery { deliveryId webhookId }
} }`;

const NODES = `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`;

beforeAll(async () => {
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0' });
  owner = await t.channel({ name: 'Nodes owner' });
  stranger = await t.channel({ name: 'Nodes stranger' });
  const flow = v1(t, owner);
  const offer = await flow.offer({ checkin: day(30), checkout: day(32) });
  const booked = await flow.book({ book_token: offer.bookToken, booker_name: 'Node Guest', guests_adult: 2 });
  expect(booked.status).toBe(201);
  const bookingId = (await booked.json()).data.id as string;

  const created = dataOf(
    await gql(t, owner, 'mutation { createWebhook(input: { url: "https://hooks.example.com/nodes" }) { webhook { id webhookId } } }'),
  ).createWebhook.webhook;
  const deliveryId = randomUUID();
  await t.service.deps.db.prisma.webhookDelivery.create({
    data: { id: deliveryId, endpointId: created.webhookId, channelId: owner.user_id, type: 'reservation.created', body: '{}', status: 'failed', nextAttemptAt: new Date(), createdAt: new Date() },
  });

  const read = dataOf(
    await gql(
      t,
      owner,
      `query($b: ID!, $w: ID!, $d: ID!) {
        booking(id: $b) { id bookingId reservation { id reservationId } property { id propertyId roomTypes { id roomtypeId ratePlans { id rateplanId } } } }
        webhookDelivery(webhookId: $w, id: $d) { id deliveryId }
      }`,
      { b: bookingId, w: created.webhookId, d: deliveryId },
    ),
  );
  const { booking } = read;
  const room = booking.property.roomTypes[0];
  ids.Booking = { id: booking.id, rest: booking.bookingId };
  ids.Reservation = { id: booking.reservation.id, rest: booking.reservation.reservationId };
  ids.Property = { id: booking.property.id, rest: String(booking.property.propertyId) };
  ids.RoomType = { id: room.id, rest: room.roomtypeId };
  ids.RatePlan = { id: room.ratePlans[0].id, rest: room.ratePlans[0].rateplanId };
  ids.WebhookEndpoint = { id: created.id, rest: created.webhookId };
  ids.WebhookDelivery = { id: read.webhookDelivery.id, rest: read.webhookDelivery.deliveryId };
}, 120_000);

afterAll(async () => t?.close());

const REST_FIELD: Record<string, string> = {
  Property: 'propertyId',
  RoomType: 'roomtypeId',
  RatePlan: 'rateplanId',
  Booking: 'bookingId',
  Reservation: 'reservationId',
  WebhookEndpoint: 'webhookId',
  WebhookDelivery: 'deliveryId',
};

describe('Query.node and Query.nodes', () => {
  it('resolve every Node type by its global id, with the id given and the REST identifier in its own field', async () => {
    expect(Object.keys(ids).sort()).toEqual(Object.keys(REST_FIELD).sort());
    for (const [type, { id, rest }] of Object.entries(ids)) {
      const node = dataOf(await gql(t, owner, NODE, { id })).node;
      expect({ type, typename: node?.__typename, id: node?.id, rest: String(node?.[REST_FIELD[type]!]) }).toEqual({ type, typename: type, id, rest });
    }
    const all = dataOf(await gql(t, owner, NODES, { ids: Object.values(ids).map((i) => i.id) })).nodes;
    expect(all.map((n: Gql) => [n.__typename, n.id])).toEqual(Object.entries(ids).map(([type, { id }]) => [type, id]));
  });

  it('global ids are opaque and distinct from the REST ids, and the same object has the same id wherever it appears', async () => {
    for (const { id, rest } of Object.values(ids)) expect(id).not.toBe(rest);
    const again = dataOf(await gql(t, owner, `query($id: ID!) { reservation(id: $id) { id bookings { id } } }`, { id: ids.Reservation!.rest })).reservation;
    expect(again.id).toBe(ids.Reservation!.id);
    expect(again.bookings.map((b: Gql) => b.id)).toEqual([ids.Booking!.id]);
  });

  it("resolve another channel's booking, reservation, webhook and delivery to null, and the shared catalog's content as for anyone", async () => {
    const res = dataOf(await gql(t, stranger, NODES, { ids: Object.values(ids).map((i) => i.id) }));
    expect(Object.fromEntries(Object.keys(ids).map((type, i) => [type, res.nodes[i]?.__typename ?? null]))).toEqual({
      Property: 'Property',
      RoomType: 'RoomType',
      RatePlan: 'RatePlan',
      Booking: null,
      Reservation: null,
      WebhookEndpoint: null,
      WebhookDelivery: null,
    });
  });

  it('resolve to null an id that is not one of ours, of no Node type, or that names nothing; more than 100 ids are refused', async () => {
    const strangers = [
      'not-a-global-id',
      Buffer.from('Channel:1').toString('base64'),
      Buffer.from(`Booking:${randomUUID()}`).toString('base64'),
      Buffer.from('Booking:not-a-uuid').toString('base64'),
      Buffer.from('Property:999999999').toString('base64'),
      Buffer.from('RoomType:1').toString('base64'),
      Buffer.from('RatePlan:1:x:y').toString('base64'),
      ids.Booking!.rest,
      '',
    ];
    const res = dataOf(await gql(t, owner, NODES, { ids: strangers }));
    expect(res.nodes).toEqual(strangers.map(() => null));
    for (const id of strangers) expect(dataOf(await gql(t, owner, NODE, { id })).node).toBeNull();

    const tooMany = topError(await gql(t, owner, NODES, { ids: Array.from({ length: 101 }, () => ids.Booking!.id) }));
    expect(tooMany.extensions?.code).toBe('VALIDATION_ERROR');
    expect(tooMany.extensions?.details).toEqual({ fields: [{ field: 'ids', reason: expect.stringContaining('100') }] });
  });

  it('need a credential', async () => {
    const res = await t.graphql(NODE, { id: ids.Booking!.id });
    expect(topError(res).extensions?.code).toBe('UNAUTHORIZED');
    expect(res.data?.node ?? null).toBeNull();
  });
});

describe('root fields take a REST id or a global id', () => {
  it('lookups answer the same object by either; a global id of another type is a VALIDATION_ERROR saying whose it is', async () => {
    const lookups: [string, string, string][] = [
      ['booking', 'Booking', 'bookingId'],
      ['reservation', 'Reservation', 'reservationId'],
      ['property', 'Property', 'propertyId'],
      ['webhook', 'WebhookEndpoint', 'webhookId'],
    ];
    for (const [field, type, rest] of lookups) {
      const query = `query($id: ID!) { ${field}(id: $id) { id ${rest} } }`;
      const byRest = dataOf(await gql(t, owner, query, { id: ids[type]!.rest }))[field];
      const byGlobal = dataOf(await gql(t, owner, query, { id: ids[type]!.id }))[field];
      expect({ field, found: byRest }).toEqual({ field, found: byGlobal });
      expect(byGlobal.id).toBe(ids[type]!.id);
      const other = type === 'Booking' ? ids.WebhookEndpoint!.id : ids.Booking!.id;
      // A reservation is also found by the bookingId of one of its rooms (as REST), so by the Booking's global id.
      if (field === 'reservation') continue;
      const error = topError(await gql(t, owner, query, { id: other }));
      const otherType = type === 'Booking' ? 'WebhookEndpoint' : 'Booking';
      expect({ field, code: error.extensions?.code, fields: error.extensions?.details?.fields }).toEqual({
        field,
        code: 'VALIDATION_ERROR',
        fields: [{ field: 'id', reason: `the global id of a ${otherType}, not of a ${type}` }],
      });
    }
    // A reservation by the global id of its room's booking.
    expect(dataOf(await gql(t, owner, 'query($id: ID!) { reservation(id: $id) { id } }', { id: ids.Booking!.id })).reservation.id).toBe(ids.Reservation!.id);
  });

  it('a REST id is held to the REST rule (at most 64 characters): longer is a VALIDATION_ERROR naming id', async () => {
    for (const field of ['booking', 'reservation', 'webhook', 'property']) {
      const error = topError(await gql(t, owner, `query($id: ID!) { ${field}(id: $id) { id } }`, { id: 'x'.repeat(65) }));
      expect({ field, code: error.extensions?.code, fields: error.extensions?.details?.fields }).toEqual({
        field,
        code: 'VALIDATION_ERROR',
        fields: [{ field: 'id', reason: expect.any(String) }],
      });
    }
  });

  it('mutations act on the object a global id names', async () => {
    const updated = dataOf(
      await gql(t, owner, `mutation($id: ID!) { updateBooking(id: $id, input: { specialRequests: "by global id" }) { ... on UpdateBookingSuccess { booking { bookingId specialRequests } } } }`, {
        id: ids.Booking!.id,
      }),
    ).updateBooking.booking;
    expect(updated).toEqual({ bookingId: ids.Booking!.rest, specialRequests: 'by global id' });
    const rest = await t.request(`/channel/v1/bookings/${ids.Booking!.rest}`, { headers: apiKey(owner) });
    expect((await rest.json()).data.specialRequests).toBe('by global id');

    const pinged = dataOf(await gql(t, owner, 'mutation($id: ID!) { pingWebhook(id: $id) { webhookId type } }', { id: ids.WebhookEndpoint!.id })).pingWebhook;
    expect(pinged).toEqual({ webhookId: ids.WebhookEndpoint!.rest, type: 'webhook.ping' });
  });

  it("a global id of another channel's booking is NOT_FOUND for a mutation, and nothing changes", async () => {
    const before = await t.service.deps.db.prisma.booking.findUniqueOrThrow({ where: { id: ids.Booking!.rest } });
    const res = await gql(t, stranger, `mutation($id: ID!) { cancelBooking(id: $id) { __typename } }`, { id: ids.Booking!.id });
    expect(topError(res).extensions?.code).toBe('NOT_FOUND');
    expect(await t.service.deps.db.prisma.booking.findUniqueOrThrow({ where: { id: ids.Booking!.rest } })).toEqual(before);
  });

  it('deleteWebhook answers the global id of the webhook it deleted', async () => {
    const made = dataOf(await gql(t, owner, 'mutation { createWebhook(input: { url: "https://hooks.example.com/gone" }) { webhook { id webhookId } } }')).createWebhook.webhook;
    const deleted = dataOf(await gql(t, owner, 'mutation($id: ID!) { deleteWebhook(id: $id) }', { id: made.webhookId })).deleteWebhook;
    expect(deleted).toBe(made.id);
    expect(dataOf(await gql(t, owner, NODE, { id: made.id })).node).toBeNull();
    const webhooks = edgesNodes(dataOf(await gql(t, owner, '{ webhooks { edges { node { id } } } }')).webhooks);
    expect(webhooks.map((w: Gql) => w.id)).not.toContain(made.id);
  });
});
