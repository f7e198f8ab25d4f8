import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { v1 } from '../helpers/flow.js';
import { dataOf, edgesNodes, gql, type Gql, topError } from '../helpers/graphql.js';
import { startTestService, type GraphQLResult, type TestService } from '../helpers/service.js';

/**
 * The GraphQL twins of the webhook routes: subscriptions (the secret shown once), the delivery
 * log, a signed ping and the replay of a delivery, all under channels:write. Deliveries go to a
 * receiver on 127.0.0.1 (the sandbox allows http and loopback URLs); there is no background
 * dispatcher (EVENTS_POLL_INTERVAL_MS=0): the tests drain it.
 */


interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

let t: TestService;
let creds: IssuedCredentials;
let server: Server;
let base: string;
const received: Received[] = [];
/** The status the receiver answers with. */
let answer = 200;

beforeAll(async () => {
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0' });
  creds = await t.channel();
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      received.push({ path: req.url ?? '/', headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => server?.close(resolve));
});

const WEBHOOK_FIELDS = 'id webhookId url events description status disabledReason disabledAt lastSuccessAt createdAt updatedAt';
const DELIVERY_FIELDS = `id deliveryId webhookId eventId type status attempts nextAttemptAt deliveredAt createdAt payload
  attemptLog { attempt startedAt durationMs statusCode responseBody error }`;

const CREATE = `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { secret webhook { ${WEBHOOK_FIELDS} } } }`;
const UPDATE = `mutation($id: ID!, $input: UpdateWebhookInput!) { updateWebhook(id: $id, input: $input) { ${WEBHOOK_FIELDS} } }`;
const DELETE = 'mutation($id: ID!) { deleteWebhook(id: $id) }';
const PING = `mutation($id: ID!) { pingWebhook(id: $id) { ${DELIVERY_FIELDS} } }`;
const REPLAY = `mutation($webhookId: ID!, $id: ID!) { replayWebhookDelivery(webhookId: $webhookId, id: $id) { ${DELIVERY_FIELDS} } }`;
const ONE = `query($id: ID!) { webhook(id: $id) { ${WEBHOOK_FIELDS} } }`;
const PAGE_INFO = 'pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';
/** Every webhook of the channel: a channel holds at most 20, so one page of 100 holds them all. */
const LIST = `{ webhooks(first: 100) { totalCount ${PAGE_INFO} edges { cursor node { ${WEBHOOK_FIELDS} } } } }`;
/** A webhook's delivery log (was Query.webhookDeliveries): WebhookEndpoint.deliveries. */
const DELIVERIES = `query($webhookId: ID!, $status: WebhookDeliveryStatus, $first: Int, $after: String) {
  webhook(id: $webhookId) {
    deliveries(status: $status, first: $first, after: $after) {
      totalCount
      ${PAGE_INFO}
      edges { cursor node { ${DELIVERY_FIELDS} } }
    }
  }
}`;
const DELIVERY = `query($webhookId: ID!, $id: ID!) { webhookDelivery(webhookId: $webhookId, id: $id) { ${DELIVERY_FIELDS} } }`;

const ALL_EVENTS = [
  'RESERVATION_CREATED',
  'RESERVATION_CONFIRMED',
  'RESERVATION_MODIFIED',
  'RESERVATION_CANCELLED',
  'RESERVATION_FAILED',
  'RESERVATION_CHECKED_IN',
  'RESERVATION_CHECKED_OUT',
  'RESERVATION_NO_SHOW',
];

function fieldsOf(res: GraphQLResult): string[] {
  const error = topError(res);
  expect(error.extensions?.code).toBe('VALIDATION_ERROR');
  return (error.extensions?.details?.fields as { field: string }[]).map((f) => f.field).sort();
}

/** The webhooks of a LIST result. */
function webhooksOf(res: GraphQLResult): Gql[] {
  return edgesNodes(dataOf(res).webhooks);
}

/** A connection as a test reads it. */
type Connection = Gql & { totalCount: number; pageInfo: Gql; edges: { cursor: string; node: Gql }[] };

/** The delivery log (a connection) of a DELIVERIES result. */
function deliveriesOf(res: GraphQLResult): Connection {
  return dataOf(res).webhook.deliveries;
}

async function create(input: Record<string, unknown>, who: IssuedCredentials = creds): Promise<{ secret: string; webhook: Gql }> {
  return dataOf(await gql(t, who, CREATE, { input })).createWebhook;
}

/** The requests the receiver got on `path`, each verified against the secret. */
function verifiedOn(path: string, secret: string): Received[] {
  const list = received.filter((r) => r.path === path);
  for (const r of list) expect(() => new Webhook(secret).verify(r.body, r.headers)).not.toThrow();
  return list;
}

describe('Mutation.createWebhook and Query.webhooks', () => {
  it('returns the webhook with its secret once; the list and the type never expose a secret', async () => {
    const { secret, webhook } = await create({ url: `${base}/create`, description: '  Orders  ' });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(webhook).toMatchObject({
      url: `${base}/create`,
      events: ALL_EVENTS,
      description: 'Orders',
      status: 'ACTIVE',
      disabledReason: null,
      disabledAt: null,
      lastSuccessAt: null,
    });
    expect(webhook.createdAt).toBe(webhook.updatedAt);

    const narrow = await create({ url: `${base}/narrow`, events: ['RESERVATION_CANCELLED', 'RESERVATION_CREATED'] });
    expect(narrow.webhook.events).toEqual(['RESERVATION_CANCELLED', 'RESERVATION_CREATED']);
    expect(narrow.webhook.description).toBeNull();
    expect(narrow.secret).not.toBe(secret);

    const list = webhooksOf(await gql(t, creds, LIST));
    expect(list.map((w) => w.id)).toEqual(expect.arrayContaining([webhook.id, narrow.webhook.id]));
    expect(list.find((w) => w.id === webhook.id)).toEqual(webhook);
    expect(JSON.stringify(list)).not.toContain(secret);
    expect(dataOf(await gql(t, creds, ONE, { id: webhook.webhookId })).webhook).toEqual(webhook);
    // The global id names it too.
    expect(dataOf(await gql(t, creds, ONE, { id: webhook.id })).webhook).toEqual(webhook);

    const fields = dataOf(await gql(t, creds, '{ __type(name: "WebhookEndpoint") { fields { name } } }')).__type.fields as { name: string }[];
    expect(fields.map((f) => f.name)).not.toContain('secret');
    const asked = await gql(t, creds, '{ webhooks { edges { node { id secret } } } }');
    expect(asked.data).toBeUndefined();
    expect(topError(asked).message).toMatch(/Cannot query field "secret"/);
  });

  it('refuses bad input with a top-level VALIDATION_ERROR naming the GraphQL fields', async () => {
    expect(fieldsOf(await gql(t, creds, CREATE, { input: { url: 'not a url' } }))).toEqual(['input.url']);
    expect(fieldsOf(await gql(t, creds, CREATE, { input: { url: 'ftp://example.com/hook' } }))).toEqual(['input.url']);
    expect(fieldsOf(await gql(t, creds, CREATE, { input: { url: '  ' } }))).toEqual(['input.url']);
    expect(fieldsOf(await gql(t, creds, CREATE, { input: { url: `${base}/#frag` } }))).toEqual(['input.url']);
    expect(fieldsOf(await gql(t, creds, CREATE, { input: { url: `${base}/x`, events: [] } }))).toEqual(['input.events']);
    expect(
      fieldsOf(await gql(t, creds, CREATE, { input: { url: `${base}/x`, events: ['RESERVATION_CREATED', 'RESERVATION_CREATED'] } })),
    ).toEqual(['input.events']);
    expect(fieldsOf(await gql(t, creds, CREATE, { input: { url: `${base}/x`, description: 'd'.repeat(201) } }))).toEqual([
      'input.description',
    ]);
    // PostgreSQL text cannot hold NUL: refused as input, not a server error.
    const nul = await gql(t, creds, CREATE, { input: { url: `${base}/x`, description: 'a\u0000b' } });
    expect(fieldsOf(nul)).toEqual(['input.description']);
    expect((nul.errors![0]!.extensions?.details?.fields as { reason: string }[])[0]!.reason).toMatch(/NUL/);

    // An event type the enum does not know never reaches the resolver: GraphQL refuses the variable.
    const unknown = await gql(t, creds, CREATE, { input: { url: `${base}/x`, events: ['RESERVATION_EXPLODED'] } });
    expect(unknown.data ?? null).toBeNull();
    expect(topError(unknown).message).toMatch(/RESERVATION_EXPLODED/);
    // The internal spelling is not a GraphQL value either.
    const dotted = await gql(t, creds, CREATE, { input: { url: `${base}/x`, events: ['reservation.created'] } });
    expect(topError(dotted).message).toMatch(/reservation\.created/);

    const mine = webhooksOf(await gql(t, creds, LIST));
    expect(mine.some((w) => w.url.startsWith(`${base}/x`))).toBe(false);
  });

  it('refuses more than 20 webhooks per channel with WEBHOOK_LIMIT_REACHED', async () => {
    const busy = await t.channel();
    for (let i = 0; i < 20; i++) await create({ url: `${base}/limit/${i}` }, busy);
    const res = await gql(t, busy, CREATE, { input: { url: `${base}/limit/20` } });
    expect(res.data).toBeNull();
    expect(topError(res).extensions).toEqual({ code: 'WEBHOOK_LIMIT_REACHED', details: { limit: 20 } });
    const all = dataOf(await gql(t, busy, LIST, {})).webhooks;
    expect(edgesNodes(all).length).toBe(20);
    expect(all.totalCount).toBe(20);
    expect(all.pageInfo.hasNextPage).toBe(false);
  });
});

describe('authentication and scope', () => {
  it('no credential: UNAUTHORIZED; a credential without channels:write: INSUFFICIENT_SCOPE, on every field', async () => {
    const { webhook } = await create({ url: `${base}/auth` });
    const reader = await t.channel({ scopes: ['channels:read', 'reservations:read'] });
    const calls: [string, Record<string, unknown>][] = [
      [LIST, {}],
      [ONE, { id: webhook.webhookId }],
      [DELIVERIES, { webhookId: webhook.webhookId }],
      [DELIVERY, { webhookId: webhook.webhookId, id: webhook.webhookId }],
      [CREATE, { input: { url: `${base}/auth2` } }],
      [UPDATE, { id: webhook.webhookId, input: { enabled: false } }],
      [DELETE, { id: webhook.webhookId }],
      [PING, { id: webhook.webhookId }],
      [REPLAY, { webhookId: webhook.webhookId, id: webhook.webhookId }],
    ];
    // No value either way: null data for a non-null field, the nullable field itself null otherwise.
    const nothing = (res: GraphQLResult) => expect(Object.values(res.data ?? {}).every((v) => v === null)).toBe(true);
    for (const [query, variables] of calls) {
      const anonymous = await t.graphql(query, variables);
      nothing(anonymous);
      expect(topError(anonymous).extensions?.code).toBe('UNAUTHORIZED');
      const limited = await gql(t, reader, query, variables);
      nothing(limited);
      expect(topError(limited).extensions).toEqual({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'channels:write' } });
    }
    // Nothing was changed, pinged or deleted.
    expect(dataOf(await gql(t, creds, ONE, { id: webhook.webhookId })).webhook).toEqual(webhook);
    expect(received.filter((r) => r.path === '/auth')).toEqual([]);
  });
});

describe("another channel's webhook", () => {
  it('is null on queries (its delivery log with it) and NOT_FOUND on mutations; it stays as it was', async () => {
    const { webhook } = await create({ url: `${base}/theirs` });
    const ping = dataOf(await gql(t, creds, PING, { id: webhook.webhookId })).pingWebhook;
    const stranger = await t.channel();

    expect(dataOf(await gql(t, stranger, ONE, { id: webhook.webhookId })).webhook).toBeNull();
    const theirs = dataOf(await gql(t, stranger, LIST, {})).webhooks;
    expect(edgesNodes(theirs)).toEqual([]);
    expect(theirs.totalCount).toBe(0);
    expect(dataOf(await gql(t, stranger, DELIVERY, { webhookId: webhook.webhookId, id: ping.deliveryId })).webhookDelivery).toBeNull();
    // The delivery log is a field of the webhook now (Query.webhookDeliveries, which answered NOT_FOUND, is gone): the
    // stranger reaches no webhook, so no log either.
    expect(dataOf(await gql(t, stranger, DELIVERIES, { webhookId: webhook.webhookId })).webhook).toBeNull();
    const notFound = [
      await gql(t, stranger, UPDATE, { id: webhook.webhookId, input: { enabled: false } }),
      await gql(t, stranger, DELETE, { id: webhook.webhookId }),
      await gql(t, stranger, PING, { id: webhook.webhookId }),
      await gql(t, stranger, REPLAY, { webhookId: webhook.webhookId, id: ping.deliveryId }),
    ];
    for (const res of notFound) {
      expect(res.data).toBeNull();
      expect(topError(res).extensions?.code).toBe('NOT_FOUND');
    }
    expect(dataOf(await gql(t, creds, ONE, { id: webhook.webhookId })).webhook).toMatchObject({ status: 'ACTIVE' });
    expect(received.filter((r) => r.path === '/theirs')).toHaveLength(1);
  });

  it('unknown and malformed ids: null on queries, NOT_FOUND on mutations', async () => {
    const { webhook } = await create({ url: `${base}/ids` });
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(dataOf(await gql(t, creds, ONE, { id: unknown })).webhook).toBeNull();
    expect(dataOf(await gql(t, creds, ONE, { id: 'nope' })).webhook).toBeNull();
    expect(dataOf(await gql(t, creds, DELIVERY, { webhookId: webhook.webhookId, id: unknown })).webhookDelivery).toBeNull();
    expect(dataOf(await gql(t, creds, DELIVERY, { webhookId: webhook.webhookId, id: 'nope' })).webhookDelivery).toBeNull();
    expect(topError(await gql(t, creds, DELETE, { id: 'nope' })).extensions?.code).toBe('NOT_FOUND');
    expect(topError(await gql(t, creds, PING, { id: unknown })).extensions?.code).toBe('NOT_FOUND');
    expect(topError(await gql(t, creds, REPLAY, { webhookId: webhook.webhookId, id: unknown })).extensions?.code).toBe('NOT_FOUND');
    // The delivery log of an unknown webhook (Query.webhookDeliveries answered NOT_FOUND): no webhook, so no log.
    expect(dataOf(await gql(t, creds, DELIVERIES, { webhookId: unknown })).webhook).toBeNull();
  });
});

describe('Mutation.updateWebhook and deleteWebhook', () => {
  it('changes url, events and description; null clears the description; disables and enables', async () => {
    const { webhook } = await create({ url: `${base}/before`, description: 'first' });
    const changed = dataOf(
      await gql(t, creds, UPDATE, { id: webhook.webhookId, input: { url: `${base}/after`, events: ['RESERVATION_NO_SHOW'], description: 'second' } }),
    ).updateWebhook;
    expect(changed).toMatchObject({
      id: webhook.id,
      webhookId: webhook.webhookId,
      url: `${base}/after`,
      events: ['RESERVATION_NO_SHOW'],
      description: 'second',
      status: 'ACTIVE',
    });
    expect(Date.parse(changed.updatedAt)).toBeGreaterThanOrEqual(Date.parse(webhook.updatedAt));
    expect(changed.createdAt).toBe(webhook.createdAt);

    const cleared = dataOf(await gql(t, creds, UPDATE, { id: webhook.webhookId, input: { description: null } })).updateWebhook;
    expect(cleared).toMatchObject({ description: null, url: `${base}/after`, events: ['RESERVATION_NO_SHOW'] });

    const disabled = dataOf(await gql(t, creds, UPDATE, { id: webhook.webhookId, input: { enabled: false } })).updateWebhook;
    expect(disabled).toMatchObject({ status: 'DISABLED', disabledReason: 'disabled by the channel' });
    expect(disabled.disabledAt).toEqual(expect.any(String));
    // Disabling again keeps the first time and reason.
    const again = dataOf(await gql(t, creds, UPDATE, { id: webhook.webhookId, input: { enabled: false } })).updateWebhook;
    expect(again.disabledAt).toBe(disabled.disabledAt);

    const enabled = dataOf(await gql(t, creds, UPDATE, { id: webhook.webhookId, input: { enabled: true } })).updateWebhook;
    expect(enabled).toMatchObject({ status: 'ACTIVE', disabledReason: null, disabledAt: null });
    expect(dataOf(await gql(t, creds, ONE, { id: webhook.webhookId })).webhook).toEqual(enabled);
  });

  it('refuses an empty change, clearing url or events and bad values with VALIDATION_ERROR', async () => {
    const { webhook } = await create({ url: `${base}/strict` });
    const empty = await gql(t, creds, UPDATE, { id: webhook.webhookId, input: {} });
    expect(topError(empty).extensions?.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(await gql(t, creds, UPDATE, { id: webhook.webhookId, input: { url: null } }))).toEqual(['input.url']);
    expect(fieldsOf(await gql(t, creds, UPDATE, { id: webhook.webhookId, input: { events: null } }))).toEqual(['input.events']);
    expect(fieldsOf(await gql(t, creds, UPDATE, { id: webhook.webhookId, input: { url: 'gopher://example.com' } }))).toEqual(['input.url']);
    expect(fieldsOf(await gql(t, creds, UPDATE, { id: webhook.webhookId, input: { events: [] } }))).toEqual(['input.events']);
    expect(fieldsOf(await gql(t, creds, UPDATE, { id: webhook.webhookId, input: { description: '\u0000' } }))).toEqual(['input.description']);
    expect(dataOf(await gql(t, creds, ONE, { id: webhook.webhookId })).webhook).toEqual(webhook);
  });

  it('deletes a webhook: returns its id; it is gone from the list, and a second delete is NOT_FOUND', async () => {
    const { webhook } = await create({ url: `${base}/gone` });
    await gql(t, creds, PING, { id: webhook.webhookId });
    // deleteWebhook answers the global id (was the REST id), the id the webhook had.
    expect(dataOf(await gql(t, creds, DELETE, { id: webhook.webhookId })).deleteWebhook).toBe(webhook.id);
    expect(dataOf(await gql(t, creds, ONE, { id: webhook.webhookId })).webhook).toBeNull();
    expect(webhooksOf(await gql(t, creds, LIST)).map((w) => w.webhookId)).not.toContain(webhook.webhookId);
    expect(topError(await gql(t, creds, DELETE, { id: webhook.webhookId })).extensions?.code).toBe('NOT_FOUND');
    // Its delivery log went with it (Query.webhookDeliveries answered NOT_FOUND): no webhook, so no log.
    expect(dataOf(await gql(t, creds, DELIVERIES, { webhookId: webhook.webhookId })).webhook).toBeNull();
  });
});

describe('Mutation.pingWebhook', () => {
  it('sends a signed webhook.ping at once and answers with its delivery: delivered after one attempt', async () => {
    const { secret, webhook } = await create({ url: `${base}/ping` });
    const ping = dataOf(await gql(t, creds, PING, { id: webhook.webhookId })).pingWebhook;
    expect(ping).toMatchObject({
      webhookId: webhook.webhookId,
      eventId: null,
      type: 'webhook.ping',
      status: 'DELIVERED',
      attempts: 1,
      nextAttemptAt: null,
    });
    expect(ping.deliveredAt).toEqual(expect.any(String));
    expect(ping.attemptLog).toHaveLength(1);
    expect(ping.attemptLog[0]).toMatchObject({ attempt: 1, statusCode: 200, responseBody: 'ok', error: null });
    expect(ping.attemptLog[0].durationMs).toBeGreaterThanOrEqual(0);

    const [got, ...more] = verifiedOn('/ping', secret);
    expect(more).toEqual([]);
    expect(got!.headers['webhook-id']).toBe(ping.deliveryId);
    expect(got!.headers['webhook-signature']).toMatch(/^v1,/);
    expect(got!.body).toBe(ping.payload);
    expect(JSON.parse(ping.payload)).toEqual({ type: 'webhook.ping', timestamp: expect.any(String), data: { webhook_id: webhook.webhookId } });
    // Another secret does not verify it.
    const other = await create({ url: `${base}/ping-other` });
    expect(() => new Webhook(other.secret).verify(got!.body, got!.headers)).toThrow();

    expect(dataOf(await gql(t, creds, ONE, { id: webhook.webhookId })).webhook.lastSuccessAt).toEqual(expect.any(String));
    expect(dataOf(await gql(t, creds, DELIVERY, { webhookId: webhook.webhookId, id: ping.deliveryId })).webhookDelivery).toEqual(ping);
  });

  it('a refused ping is failed after its one attempt (not retried), and a disabled webhook can be pinged', async () => {
    const { secret, webhook } = await create({ url: `${base}/ping-refused` });
    await gql(t, creds, UPDATE, { id: webhook.webhookId, input: { enabled: false } });
    answer = 500;
    try {
      const ping = dataOf(await gql(t, creds, PING, { id: webhook.webhookId })).pingWebhook;
      expect(ping).toMatchObject({ status: 'FAILED', attempts: 1, nextAttemptAt: null, deliveredAt: null });
      expect(ping.attemptLog).toEqual([
        expect.objectContaining({ attempt: 1, statusCode: 500, responseBody: 'nope', error: 'HTTP 500' }),
      ]);
    } finally {
      answer = 200;
    }
    expect(verifiedOn('/ping-refused', secret)).toHaveLength(1);
    await t.service.dispatcher.drain();
    expect(received.filter((r) => r.path === '/ping-refused')).toHaveLength(1);
    expect(dataOf(await gql(t, creds, ONE, { id: webhook.webhookId })).webhook).toMatchObject({ status: 'DISABLED', lastSuccessAt: null });
  });
});

describe('deliveries of booking events, and replay', () => {
  let secret: string;
  let hook: Gql;
  let confirmedOnly: { secret: string; webhook: Gql };
  let bookingId: string;

  beforeAll(async () => {
    ({ secret, webhook: hook } = await create({ url: `${base}/events` }));
    confirmedOnly = await create({ url: `${base}/confirmed`, events: ['RESERVATION_CONFIRMED'] });
    const api = v1(t, creds);
    const o = await api.offer();
    const res = await api.book({ book_token: o.bookToken, booker_name: 'A B', guests_adult: 2 });
    expect(res.status).toBe(201);
    bookingId = (await res.json()).data.id;
    await t.service.dispatcher.drain();
  });

  it('delivers reservation.created and reservation.confirmed, signed, to the webhooks subscribed to them', async () => {
    const page = deliveriesOf(await gql(t, creds, DELIVERIES, { webhookId: hook.webhookId }));
    // Both on the one page (the default size, 20): there is no other.
    expect(page.totalCount).toBe(2);
    expect(page.edges).toHaveLength(2);
    expect(page.pageInfo).toEqual({
      hasNextPage: false,
      hasPreviousPage: false,
      startCursor: page.edges[0]!.cursor,
      endCursor: page.edges[1]!.cursor,
    });
    const items = edgesNodes(page);
    expect(items.map((d) => d.type).sort()).toEqual(['reservation.confirmed', 'reservation.created']);
    for (const d of items) {
      expect(d).toMatchObject({ webhookId: hook.webhookId, status: 'DELIVERED', attempts: 1, nextAttemptAt: null });
      expect(d.eventId).toEqual(expect.any(String));
      expect(d.attemptLog).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, error: null })]);
      const body = JSON.parse(d.payload);
      expect(body).toMatchObject({ type: d.type, data: { id: bookingId } });
    }
    // Newest first: created, then confirmed, or the same instant ordered by id.
    expect(Date.parse(items[0]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(items[1]!.createdAt));

    const got = verifiedOn('/events', secret);
    expect(got.map((r) => r.headers['webhook-id']).sort()).toEqual(items.map((d) => d.deliveryId).sort());
    for (const r of got) expect(r.body).toBe(items.find((d) => d.deliveryId === r.headers['webhook-id'])!.payload);

    const only = edgesNodes(deliveriesOf(await gql(t, creds, DELIVERIES, { webhookId: confirmedOnly.webhook.webhookId })));
    expect(only.map((d) => d.type)).toEqual(['reservation.confirmed']);
    expect(verifiedOn('/confirmed', confirmedOnly.secret)).toHaveLength(1);
    // The same event to two webhooks: one event id, two deliveries (two webhook-ids).
    const confirmed = items.find((d) => d.type === 'reservation.confirmed')!;
    expect(only[0]!.eventId).toBe(confirmed.eventId);
    expect(only[0]!.deliveryId).not.toBe(confirmed.deliveryId);
  });

  it('filters by status and pages, newest first', async () => {
    const delivered = deliveriesOf(await gql(t, creds, DELIVERIES, { webhookId: hook.webhookId, status: 'DELIVERED' }));
    expect(delivered.totalCount).toBe(2);
    for (const status of ['PENDING', 'HELD', 'FAILED']) {
      const none = deliveriesOf(await gql(t, creds, DELIVERIES, { webhookId: hook.webhookId, status }));
      expect(none).toEqual({
        totalCount: 0,
        pageInfo: expect.objectContaining({ hasNextPage: false, hasPreviousPage: false }),
        edges: [],
      });
    }
    // Pages of one: the first, then the one after its endCursor.
    const first = deliveriesOf(await gql(t, creds, DELIVERIES, { webhookId: hook.webhookId, first: 1 }));
    const second = deliveriesOf(
      await gql(t, creds, DELIVERIES, { webhookId: hook.webhookId, first: 1, after: first.pageInfo.endCursor }),
    );
    expect(first.totalCount).toBe(2);
    expect(first.edges).toHaveLength(1);
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(second.totalCount).toBe(2);
    expect(second.edges).toHaveLength(1);
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const all = edgesNodes(deliveriesOf(await gql(t, creds, DELIVERIES, { webhookId: hook.webhookId })));
    expect([first.edges[0]!.node.deliveryId, second.edges[0]!.node.deliveryId]).toEqual(all.map((d) => d.deliveryId));

    // perPage 101 (refused) is first 101; page 0 (refused) has no page number to be now: a position that is no
    // cursor, and a negative page size.
    expect(fieldsOf(await gql(t, creds, DELIVERIES, { webhookId: hook.webhookId, first: 101 }))).toEqual(['first']);
    expect(fieldsOf(await gql(t, creds, DELIVERIES, { webhookId: hook.webhookId, after: 'not a cursor' }))).toEqual(['after']);
    expect(fieldsOf(await gql(t, creds, DELIVERIES, { webhookId: hook.webhookId, first: -1 }))).toEqual(['first']);
  });

  it('replays a delivered delivery with the same webhook-id and body; refuses a pending one and a disabled webhook', async () => {
    const created = edgesNodes(deliveriesOf(await gql(t, creds, DELIVERIES, { webhookId: hook.webhookId }))).find(
      (d) => d.type === 'reservation.created',
    )!;
    const replayed = dataOf(await gql(t, creds, REPLAY, { webhookId: hook.webhookId, id: created.deliveryId })).replayWebhookDelivery;
    expect(replayed).toMatchObject({
      id: created.id,
      deliveryId: created.deliveryId,
      status: 'PENDING',
      attempts: 1,
      deliveredAt: null,
      payload: created.payload,
    });
    expect(replayed.nextAttemptAt).toEqual(expect.any(String));

    const pending = await gql(t, creds, REPLAY, { webhookId: hook.webhookId, id: created.deliveryId });
    expect(pending.data).toBeNull();
    expect(topError(pending).extensions).toMatchObject({
      code: 'DELIVERY_PENDING',
      details: { next_attempt_at: replayed.nextAttemptAt },
    });
    expect(deliveriesOf(await gql(t, creds, DELIVERIES, { webhookId: hook.webhookId, status: 'PENDING' })).totalCount).toBe(1);

    await t.service.dispatcher.drain();
    const after = dataOf(await gql(t, creds, DELIVERY, { webhookId: hook.webhookId, id: created.deliveryId })).webhookDelivery;
    expect(after).toMatchObject({ status: 'DELIVERED', attempts: 2, nextAttemptAt: null });
    expect(after.attemptLog.map((a: Gql) => [a.attempt, a.statusCode])).toEqual([
      [1, 200],
      [2, 200],
    ]);
    const copies = verifiedOn('/events', secret).filter((r) => r.headers['webhook-id'] === created.deliveryId);
    expect(copies).toHaveLength(2);
    expect(copies[1]!.body).toBe(copies[0]!.body);
    expect(copies[1]!.body).toBe(created.payload);

    await gql(t, creds, UPDATE, { id: hook.webhookId, input: { enabled: false } });
    const disabled = await gql(t, creds, REPLAY, { webhookId: hook.webhookId, id: created.deliveryId });
    expect(disabled.data).toBeNull();
    expect(topError(disabled).extensions?.code).toBe('WEBHOOK_DISABLED');
    await gql(t, creds, UPDATE, { id: hook.webhookId, input: { enabled: true } });
    expect(dataOf(await gql(t, creds, DELIVERY, { webhookId: hook.webhookId, id: created.deliveryId })).webhookDelivery.status).toBe(
      'DELIVERED',
    );

    // A delivery of another webhook of the same channel is not found under this one.
    const only = edgesNodes(deliveriesOf(await gql(t, creds, DELIVERIES, { webhookId: confirmedOnly.webhook.webhookId })))[0]!;
    expect(dataOf(await gql(t, creds, DELIVERY, { webhookId: hook.webhookId, id: only.deliveryId })).webhookDelivery).toBeNull();
    expect(topError(await gql(t, creds, REPLAY, { webhookId: hook.webhookId, id: only.deliveryId })).extensions?.code).toBe('NOT_FOUND');
  });

  it('a disabled webhook holds new deliveries (status held, no next attempt, not replayable); enabling sends them', async () => {
    const owner = await t.channel();
    const { webhook } = await create({ url: `${base}/held`, events: ['RESERVATION_CREATED'] }, owner);
    dataOf(await gql(t, owner, UPDATE, { id: webhook.webhookId, input: { enabled: false } }));
    const api = v1(t, owner);
    const o = await api.offer();
    expect((await api.book({ book_token: o.bookToken, booker_name: 'A B', guests_adult: 2 })).status).toBe(201);
    await t.service.dispatcher.drain();

    const held = edgesNodes(deliveriesOf(await gql(t, owner, DELIVERIES, { webhookId: webhook.webhookId, status: 'HELD' })));
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ type: 'reservation.created', status: 'HELD', attempts: 0, nextAttemptAt: null, attemptLog: [] });
    const replay = await gql(t, owner, REPLAY, { webhookId: webhook.webhookId, id: held[0]!.deliveryId });
    expect(replay.data).toBeNull();
    expect(topError(replay).extensions?.code).toBe('DELIVERY_HELD');
    expect(received.filter((r) => r.path === '/held')).toEqual([]);

    dataOf(await gql(t, owner, UPDATE, { id: webhook.webhookId, input: { enabled: true } }));
    await t.service.dispatcher.drain();
    expect(dataOf(await gql(t, owner, DELIVERY, { webhookId: webhook.webhookId, id: held[0]!.deliveryId })).webhookDelivery).toMatchObject({
      status: 'DELIVERED',
      attempts: 1,
    });
    expect(received.filter((r) => r.path === '/held')).toHaveLength(1);
  });
});
