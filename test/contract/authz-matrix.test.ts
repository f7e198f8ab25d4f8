import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { authenticate, SCOPES, type Scope } from '../../src/services/access/index.js';
import { createWebhook } from '../../src/services/webhooks/index.js';
import { createRequestContext } from '../../src/context.js';
import { v1 } from '../helpers/flow.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The authorization matrix: every route of both OpenAPI documents (so a new route is covered the
 * day it is documented) × {no credential, a bad API key, an unknown bearer token, a credential
 * lacking one of the route's scopes, another channel's resource} gives the documented status and
 * code. And the one rule needing two scopes (a webhook's deliveries carry booking records), over
 * REST and GraphQL.
 */

interface Operation {
  base: string;
  method: string;
  path: string;
  scopes: Scope[];
  requiredQuery: string[];
}

let t: TestService;
let owner: IssuedCredentials;
let stranger: IssuedCredentials;
let operations: Operation[] = [];
/** Documented routes without a scope: those that authenticate the OAuth client instead. */
const clientAuthenticated: string[] = [];
const resources: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestService();
  owner = await t.channel({ name: 'Owner' });
  stranger = await t.channel({ name: 'Stranger' });

  for (const base of ['/channel/v1', '/api/channel/v2']) {
    const doc = (await (await t.request(`${base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { 'x-required-scopes'?: Scope[]; parameters?: { in: string; name: string; required?: boolean }[] }>>;
    };
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        // The token and revocation endpoints authenticate the OAuth client, not a credential
        // (test/access/oauth.test.ts); the documents themselves are not in them.
        if (!op['x-required-scopes']) {
          clientAuthenticated.push(`${method.toUpperCase()} ${base}${path}`);
          continue;
        }
        operations.push({
          base,
          method: method.toUpperCase(),
          path,
          scopes: op['x-required-scopes'],
          requiredQuery: (op.parameters ?? []).filter((p) => p.in === 'query' && p.required).map((p) => p.name),
        });
      }
    }
  }

  // The owner's resources, for the tenant column: a booking, a webhook and one of its deliveries.
  const flow = v1(t, owner);
  const offer = await flow.offer();
  const booked = await flow.book({ book_token: offer.bookToken, booker_name: 'Owner Guest', guests_adult: 2 });
  expect(booked.status).toBe(201);
  resources.booking = (await booked.json()).data.id;
  const principal = await authenticate(t.service.deps.db.prisma, { apiKey: owner.api_key });
  const ctx = createRequestContext(t.service.deps, { requestId: 'matrix', logger: t.service.deps.logger, principal, authError: null, signal: undefined });
  const { webhook } = await createWebhook(ctx, { url: 'http://127.0.0.1:9/never' });
  resources.webhook = webhook.id;
  resources.delivery = randomUUID();
  await t.service.deps.db.prisma.webhookDelivery.create({
    data: {
      id: resources.delivery,
      endpointId: webhook.id,
      channelId: webhook.channelId,
      type: 'reservation.created',
      body: '{}',
      status: 'failed',
      nextAttemptAt: new Date(),
      createdAt: new Date(),
    },
  });
}, 120_000);

afterAll(async () => t?.close());

/** The route's URL with its path parameters filled: the owner's resources where the route names one. */
function urlOf(op: Operation): string {
  const owned = op.path.startsWith('/webhooks') ? resources.webhook : resources.booking;
  const path = op.path
    .replace('{delivery_id}', resources.delivery!)
    .replace('{propertyId}', '1')
    .replace('{roomId}', 'r')
    .replace('{rateId}', 'p')
    .replace('{id}', op.path.startsWith('/properties') ? '1' : owned!);
  const query = op.requiredQuery.map((name) => `${name}=${encodeURIComponent(sample(name))}`).join('&');
  return `${op.base}${path}${query ? `?${query}` : ''}`;
}

function sample(name: string): string {
  switch (name) {
    case 'checkin':
      return '2030-01-10';
    case 'checkout':
      return '2030-01-12';
    case 'adults':
    case 'property_id':
      return '1';
    case 'occupancy':
      return '2';
    default:
      return 'x';
  }
}

/** A body the route accepts, so what answers is the credential or tenant check, not validation. */
function bodyOf(op: Operation): unknown {
  if (op.method === 'PATCH' && op.path === '/bookings/{id}') return { booker_name: 'Taken Over' };
  if (op.method === 'PATCH' && op.path === '/webhooks/{id}') return { description: 'taken over' };
  if (op.method === 'PUT' && op.path === '/apps/me/ip-allow-list') return { ip_allow_list: [] };
  return {};
}

function call(op: Operation, headers: Record<string, string>): Promise<Response> {
  const withBody = ['POST', 'PUT', 'PATCH'].includes(op.method);
  return t.request(urlOf(op), {
    method: op.method,
    headers: { ...headers, ...(withBody ? { 'content-type': 'application/json' } : {}) },
    ...(withBody ? { body: JSON.stringify(bodyOf(op)) } : {}),
  });
}

describe('every documented route', () => {
  it('is found in the documents (the matrix is not empty)', () => {
    expect(operations.length).toBeGreaterThan(35);
    expect(new Set(operations.flatMap((o) => o.scopes)).size).toBe(SCOPES.length);
    // Only the OAuth endpoints go without a scope, so no other route can leave the matrix.
    expect(clientAuthenticated.sort()).toEqual(['POST /channel/v1/oauth/revoke', 'POST /channel/v1/oauth/token']);
  });

  it('the OAuth endpoints take no partner credential: an API key or a bearer token is not client authentication', async () => {
    for (const path of ['/channel/v1/oauth/token', '/channel/v1/oauth/revoke']) {
      const partnerCredentials: Record<string, string>[] = [{ 'x-api-key': owner.api_key }, { authorization: `Bearer ${owner.api_key}` }];
      for (const headers of partnerCredentials) {
        const res = await t.request(path, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials&token=oat_x',
        });
        const body = (await res.json()) as { error?: string };
        expect({ path, status: res.status, error: body.error }).toEqual({ path, status: 400, error: 'invalid_request' });
      }
    }
  });

  it('refuses no credential, a bad API key and an unknown bearer token with 401 UNAUTHORIZED', async () => {
    for (const op of operations) {
      const refused: Record<string, string>[] = [{}, { 'x-api-key': 'ck_live_not_a_real_key' }, { authorization: 'Bearer oat_not_a_real_token' }];
      for (const headers of refused) {
        const res = await call(op, headers);
        const label = `${op.method} ${op.base}${op.path} with ${JSON.stringify(headers)}`;
        const body = (await res.json()) as { error?: { code?: string } };
        expect({ label, status: res.status, code: body.error?.code }).toEqual({ label, status: 401, code: 'UNAUTHORIZED' });
      }
    }
  });

  it("refuses a credential lacking any one of the route's scopes with 403 INSUFFICIENT_SCOPE naming it", async () => {
    const lacking = new Map<Scope, IssuedCredentials>();
    for (const scope of SCOPES) lacking.set(scope, await t.channel({ name: `No ${scope}`, scopes: SCOPES.filter((s) => s !== scope) }));
    for (const op of operations) {
      for (const scope of op.scopes) {
        const res = await call(op, { 'x-api-key': lacking.get(scope)!.api_key });
        const body = (await res.json()) as { error?: { code?: string; details?: { required_scope?: string } | null } };
        expect({ route: `${op.method} ${op.base}${op.path}`, status: res.status, code: body.error?.code, scope: body.error?.details?.required_scope }).toEqual({
          route: `${op.method} ${op.base}${op.path}`,
          status: 403,
          code: 'INSUFFICIENT_SCOPE',
          scope,
        });
      }
    }
  });

  it("answers another channel's booking, webhook or delivery with 404, never 403, and changes nothing", async () => {
    const owned = operations.filter((op) => op.path.startsWith('/bookings/{id}') || op.path.startsWith('/webhooks/{id}'));
    expect(owned.length).toBeGreaterThanOrEqual(13);
    const before = await snapshot();
    for (const op of owned) {
      const res = await call(op, { 'x-api-key': stranger.api_key });
      const body = (await res.json()) as { error?: { code?: string } };
      expect({ route: `${op.method} ${op.path}`, status: res.status, code: body.error?.code }).toEqual({
        route: `${op.method} ${op.path}`,
        status: 404,
        code: 'NOT_FOUND',
      });
    }
    expect(await snapshot()).toEqual(before);
    // And the owner still reaches them.
    expect((await t.request(`/channel/v1/bookings/${resources.booking}`, { headers: { 'x-api-key': owner.api_key } })).status).toBe(200);
    expect((await t.request(`/channel/v1/webhooks/${resources.webhook}`, { headers: { 'x-api-key': owner.api_key } })).status).toBe(200);
  });
});

/** What a refused request must not change: the owner's booking, webhook and delivery, and the ledger. */
async function snapshot() {
  const prisma = t.service.deps.db.prisma;
  const [booking, webhook, delivery, ledger] = await Promise.all([
    prisma.booking.findUniqueOrThrow({ where: { id: resources.booking! } }),
    prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: resources.webhook! } }),
    prisma.webhookDelivery.findUniqueOrThrow({ where: { id: resources.delivery! } }),
    prisma.ledgerEntry.count(),
  ]);
  return { booking, webhook, delivery, ledger };
}

describe("a webhook's deliveries (booking records) need channels:write and reservations:read", () => {
  /** A channel with exactly `scopes`, its webhook and one failed delivery of it carrying a booking record. */
  async function channelWithDelivery(scopes: Scope[]) {
    const who = await t.channel({ name: `Deliveries ${scopes.join('+')}`, scopes });
    const principal = await authenticate(t.service.deps.db.prisma, { apiKey: who.api_key });
    const ctx = createRequestContext(t.service.deps, { requestId: 'matrix', logger: t.service.deps.logger, principal, authError: null, signal: undefined });
    const { webhook } = await createWebhook(ctx, { url: 'http://127.0.0.1:9/never' });
    const delivery = randomUUID();
    await t.service.deps.db.prisma.webhookDelivery.create({
      data: {
        id: delivery,
        endpointId: webhook.id,
        channelId: webhook.channelId,
        type: 'reservation.created',
        body: JSON.stringify({ type: 'reservation.created', timestamp: new Date().toISOString(), data: { booker_name: 'Private Guest' } }),
        status: 'failed',
        nextAttemptAt: new Date(),
        createdAt: new Date(),
      },
    });
    return { who, webhook: webhook.id, delivery };
  }

  const rest = (c: { webhook: string; delivery: string }) =>
    [
      ['GET', `/channel/v1/webhooks/${c.webhook}/deliveries`],
      ['GET', `/channel/v1/webhooks/${c.webhook}/deliveries/${c.delivery}`],
      ['POST', `/channel/v1/webhooks/${c.webhook}/deliveries/${c.delivery}/replay`],
    ] as const;
  const graphql = (c: { webhook: string; delivery: string }) =>
    [
      ['query($w: ID!) { webhook(id: $w) { deliveries { edges { node { deliveryId payload } } } } }', { w: c.webhook }],
      ['query($w: ID!, $d: ID!) { webhookDelivery(webhookId: $w, id: $d) { deliveryId payload } }', { w: c.webhook, d: c.delivery }],
      ['mutation($w: ID!, $d: ID!) { replayWebhookDelivery(webhookId: $w, id: $d) { deliveryId status } }', { w: c.webhook, d: c.delivery }],
    ] as const;

  /** The deliveries a document answered, wherever it put them: null when it answered none. */
  const deliveriesOf = (data: Record<string, unknown> | null | undefined): unknown =>
    data ? ((data.webhook as { deliveries?: unknown } | null)?.deliveries ?? data.webhookDelivery ?? data.replayWebhookDelivery ?? null) : null;

  it('a credential with only channels:write gets 403 INSUFFICIENT_SCOPE naming reservations:read, over REST and GraphQL, and nothing is resent', async () => {
    const c = await channelWithDelivery(['channels:write']);
    const headers = { 'x-api-key': c.who.api_key };
    for (const [method, path] of rest(c)) {
      const res = await t.request(path, { method, headers });
      const body = (await res.json()) as { data?: unknown; error?: { code?: string; details?: unknown } };
      expect({ path, status: res.status, error: body.error?.code, details: body.error?.details, data: body.data }).toEqual({
        path,
        status: 403,
        error: 'INSUFFICIENT_SCOPE',
        details: { required_scope: 'reservations:read' },
        data: undefined,
      });
    }
    for (const [query, variables] of graphql(c)) {
      const res = await t.graphql(query, variables, headers);
      // No value: null data for a non-null field, the nullable field itself null otherwise (the
      // webhook's deliveries, where the webhook itself is readable with channels:write).
      expect(deliveriesOf(res.data), query).toBeNull();
      expect(res.errors?.map((e) => e.extensions), query).toEqual([{ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'reservations:read' } }]);
      expect(JSON.stringify(res)).not.toContain('Private Guest');
    }
    // Its other webhook routes still work with channels:write alone.
    expect((await t.request(`/channel/v1/webhooks/${c.webhook}`, { headers })).status).toBe(200);
    const delivery = await t.service.deps.db.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: c.delivery } });
    expect(delivery.status).toBe('failed');
  });

  it('a credential with only reservations:read is refused naming channels:write', async () => {
    const c = await channelWithDelivery(['reservations:read']);
    const headers = { 'x-api-key': c.who.api_key };
    for (const [method, path] of rest(c)) {
      const res = await t.request(path, { method, headers });
      expect(res.status, path).toBe(403);
      expect(((await res.json()) as { error: { details: unknown } }).error.details).toEqual({ required_scope: 'channels:write' });
    }
    for (const [query, variables] of graphql(c)) {
      const res = await t.graphql(query, variables, headers);
      expect(res.errors?.map((e) => e.extensions), query).toEqual([{ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'channels:write' } }]);
    }
  });

  it('with both scopes (an API key, and a bearer token carrying just these two) the log, the delivery and the replay work, over REST and GraphQL', async () => {
    const c = await channelWithDelivery(['channels:write', 'reservations:read']);
    const token = await t.request('/channel/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: c.who.client_id, client_secret: c.who.client_secret, scope: 'channels:write reservations:read' }),
    });
    expect(token.status).toBe(200);
    const bearer = { authorization: `Bearer ${((await token.json()) as { access_token: string }).access_token}` };
    const prisma = t.service.deps.db.prisma;
    const fail = () => prisma.webhookDelivery.update({ where: { id: c.delivery }, data: { status: 'failed' } });
    for (const headers of [{ 'x-api-key': c.who.api_key }, bearer]) {
      await fail();
      const [list, one, replay] = rest(c);
      const listed = await t.request(list[1], { headers });
      expect(listed.status).toBe(200);
      expect(JSON.stringify(await listed.json())).toContain('Private Guest');
      const read = await t.request(one[1], { headers });
      expect(read.status).toBe(200);
      expect(((await read.json()) as { data: { id: string } }).data.id).toBe(c.delivery);
      const replayed = await t.request(replay[1], { method: replay[0], headers });
      expect(replayed.status).toBe(202);
      expect(((await replayed.json()) as { data: { status: string } }).data.status).toBe('pending');

      await fail();
      const [deliveries, delivery, replayMutation] = graphql(c);
      const page = await t.graphql(deliveries[0], deliveries[1], headers);
      expect(page.errors).toBeUndefined();
      expect(JSON.stringify(page.data)).toContain('Private Guest');
      const single = await t.graphql(delivery[0], delivery[1], headers);
      expect((single.data as { webhookDelivery: { deliveryId: string } }).webhookDelivery.deliveryId).toBe(c.delivery);
      const again = await t.graphql(replayMutation[0], replayMutation[1], headers);
      expect(again.errors).toBeUndefined();
      expect((again.data as { replayWebhookDelivery: { status: string } }).replayWebhookDelivery.status).toBe('PENDING');
    }
  });
});
