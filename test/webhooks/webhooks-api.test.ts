import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOKING_EVENT_TYPES } from '../../src/services/bookings/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { createRequestContext } from '../../src/context.js';
import { authenticate } from '../../src/services/access/index.js';
import { deleteWebhook, MAX_WEBHOOKS_PER_CHANNEL, updateWebhook, type WebhookChange } from '../../src/services/webhooks/index.js';
import { v1 } from '../helpers/flow.js';
import { expectError } from '../helpers/http.js';
import { eventually } from '../helpers/receiver.js';
import { apiKey, json, startTestService, type TestService } from '../helpers/service.js';

/**
 * REST /channel/v1/webhooks (docs/spec/DECISIONS.md, Webhooks; scope channels:write): subscriptions, the
 * test ping, the delivery log and replays, against a real receiver on loopback. The dispatcher
 * does not run on its own (EVENTS_POLL_INTERVAL_MS=0): the tests drain it when they mean to.
 */

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A webhook receiver: /ok answers 200, /fail answers 500, /hold answers 200 when the test says so
 * (`release`); every request is kept.
 */
class Receiver {
  readonly received: Received[] = [];
  private server: Server | undefined;
  private readonly holding: ServerResponse[] = [];
  base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        this.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        if (path.startsWith('/hold')) {
          this.holding.push(res);
          return;
        }
        const failing = path.startsWith('/fail');
        res.writeHead(failing ? 500 : 200, { 'content-type': 'text/plain' });
        res.end(failing ? 'receiver broke' : 'thanks');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Requests that reached `path`. */
  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Answers the held requests with 200. */
  release(): void {
    for (const res of this.holding.splice(0)) res.writeHead(200, { 'content-type': 'text/plain' }).end('late');
  }

  async stop(): Promise<void> {
    this.release();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

let t: TestService;
const receiver = new Receiver();

beforeAll(async () => {
  await receiver.start();
  // A failed delivery waits an hour for its retry, so it stays pending during the test.
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0', WEBHOOK_RETRY_SCHEDULE: '1h', WEBHOOK_TIMEOUT_MS: '5000' });
});
afterAll(async () => {
  await t?.close();
  await receiver.stop();
});

const base = '/channel/v1';
const isoTime = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

function call(who: Record<string, string>, method: string, path: string, body?: unknown) {
  return t.request(`${base}${path}`, { method, ...(body === undefined ? { headers: who } : json(body, who)) });
}

async function create(who: IssuedCredentials, body: Record<string, unknown>) {
  const res = await call(apiKey(who), 'POST', '/webhooks', body);
  expect(res.status).toBe(201);
  return (await res.json()).data as Record<string, any>;
}

async function storedWebhooks(who: IssuedCredentials) {
  return t.service.deps.db.prisma.webhookEndpoint.findMany({ where: { channelId: who.user_id } });
}

async function deliveriesOf(who: IssuedCredentials, webhookId: string, query = '') {
  const res = await call(apiKey(who), 'GET', `/webhooks/${webhookId}/deliveries${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as { data: Record<string, any>[]; pagination: Record<string, unknown>; meta: unknown };
}

/** Books through v1 and lets the dispatcher publish and deliver everything due. */
async function bookAndDrain(who: IssuedCredentials): Promise<string> {
  const api = v1(t, who);
  const offer = await api.offer();
  const res = await api.book({ book_token: offer.bookToken, booker_name: 'Kim Minji', guests_adult: 2 });
  expect(res.status).toBe(201);
  const booking = (await res.json()).data;
  expect(booking.status).toBe('confirmed');
  await t.service.dispatcher.drain();
  return booking.id as string;
}

function verified(secret: string, request: Received): unknown {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });
}

describe('POST /webhooks', () => {
  it('201 with Location and the secret, shown once: GET and the list never show it', async () => {
    const who = await t.channel();
    const res = await call(apiKey(who), 'POST', '/webhooks', { url: `${receiver.base}/ok`, description: ' Bookings feed ' });
    expect(res.status).toBe(201);
    const body = await res.json();
    const { data } = body;
    expect(res.headers.get('location')).toBe(`/channel/v1/webhooks/${data.id}`);
    expect(body).toEqual({
      data: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        url: `${receiver.base}/ok`,
        events: [...BOOKING_EVENT_TYPES],
        description: 'Bookings feed',
        status: 'active',
        disabled_reason: null,
        disabled_at: null,
        last_success_at: null,
        created_at: isoTime,
        updated_at: isoTime,
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      },
      meta: { request_id: res.headers.get('x-request-id'), timestamp: isoTime },
    });

    const { secret, ...webhook } = data;
    const one = await call(apiKey(who), 'GET', `/webhooks/${data.id}`);
    expect(one.status).toBe(200);
    const oneBody = await one.json();
    expect(oneBody.data).toEqual(webhook);
    expect(JSON.stringify(oneBody)).not.toContain(secret);

    const list = await call(apiKey(who), 'GET', '/webhooks');
    expect(list.status).toBe(200);
    const listBody = await list.json();
    expect(listBody.data).toEqual([webhook]);
    expect(JSON.stringify(listBody)).not.toContain(secret);

    const [stored] = await storedWebhooks(who);
    expect(stored).toMatchObject({ id: data.id, url: `${receiver.base}/ok`, secret, description: 'Bookings feed', disabledAt: null });
  });

  it('keeps the chosen event types, and lists webhooks oldest first', async () => {
    const who = await t.channel();
    const first = await create(who, { url: `${receiver.base}/ok?first`, events: ['reservation.cancelled', 'reservation.created'] });
    expect(first.events).toEqual(['reservation.cancelled', 'reservation.created']);
    expect(first.description).toBeNull();
    const second = await create(who, { url: `${receiver.base}/ok?second`, events: ['reservation.no_show'], description: null });
    const list = (await (await call(apiKey(who), 'GET', '/webhooks')).json()).data;
    expect(list.map((w: { id: string }) => w.id)).toEqual([first.id, second.id]);
    expect(list[1]).toMatchObject({ events: ['reservation.no_show'], description: null });
  });

  it.each([
    ['a URL that is not one', { url: 'not a url' }, ['url']],
    ['an empty URL', { url: '   ' }, ['url']],
    ['no URL', { events: ['reservation.created'] }, ['url']],
    ['an ftp URL', { url: 'ftp://example.com/hook' }, ['url']],
    ['a URL with a password', { url: 'https://user:pw@example.com/hook' }, ['url']],
    ['a URL with a fragment', { url: 'https://example.com/hook#x' }, ['url']],
    ['an unknown event type', { url: 'https://example.com/hook', events: ['reservation.created', 'booking.exploded'] }, ['events.1']],
    ['an event type twice', { url: 'https://example.com/hook', events: ['reservation.created', 'reservation.created'] }, ['events']],
    ['no event types', { url: 'https://example.com/hook', events: [] }, ['events']],
    ['events that are not a list', { url: 'https://example.com/hook', events: 'reservation.created' }, ['events']],
    ['an unknown field', { url: 'https://example.com/hook', secret: 'whsec_mine' }, ['(body)']],
    ['a description over 200 characters', { url: 'https://example.com/hook', description: 'x'.repeat(201) }, ['description']],
    ['a NUL character in the description', { url: 'https://example.com/hook', description: 'feed\u0000one' }, ['description']],
  ])('400 VALIDATION_ERROR for %s, and nothing is written', async (_name, body, fields) => {
    const who = await t.channel();
    const error = await expectError(await call(apiKey(who), 'POST', '/webhooks', body), 400, 'VALIDATION_ERROR');
    expect(error.details!.fields.map((f: { field: string }) => f.field)).toEqual(fields);
    expect(error.details!.fields[0].reason).toEqual(expect.any(String));
    expect(await storedWebhooks(who)).toEqual([]);
  });

  it('says why a NUL character is refused', async () => {
    const who = await t.channel();
    const error = await expectError(
      await call(apiKey(who), 'POST', '/webhooks', { url: `${receiver.base}/ok?nul`, description: 'a\u0000b' }),
      400,
      'VALIDATION_ERROR',
    );
    expect(error.details!.fields).toEqual([{ field: 'description', reason: 'must not contain a NUL character (\\u0000)' }]);
  });

  it('400 for a body that is not JSON', async () => {
    const who = await t.channel();
    const res = await t.request(`${base}/webhooks`, {
      method: 'POST',
      headers: { ...apiKey(who), 'content-type': 'application/json' },
      body: '{"url":',
    });
    const error = await expectError(res, 400, 'VALIDATION_ERROR');
    expect(error.details!.fields).toEqual([{ field: '(body)', reason: 'malformed JSON' }]);
    expect(await storedWebhooks(who)).toEqual([]);
  });

  it(`409 WEBHOOK_LIMIT_REACHED beyond ${MAX_WEBHOOKS_PER_CHANNEL} webhooks per channel; deleting one makes room`, async () => {
    const who = await t.channel();
    const made = [];
    for (let i = 0; i < MAX_WEBHOOKS_PER_CHANNEL; i++) made.push(await create(who, { url: `${receiver.base}/ok?n=${i}` }));
    const error = await expectError(await call(apiKey(who), 'POST', '/webhooks', { url: `${receiver.base}/ok?n=more` }), 409, 'WEBHOOK_LIMIT_REACHED');
    expect(error.details).toEqual({ limit: MAX_WEBHOOKS_PER_CHANNEL });
    expect(await storedWebhooks(who)).toHaveLength(MAX_WEBHOOKS_PER_CHANNEL);
    // The limit is per channel.
    await create(await t.channel(), { url: `${receiver.base}/ok?other` });
    expect((await call(apiKey(who), 'DELETE', `/webhooks/${made[0]!.id}`)).status).toBe(204);
    await create(who, { url: `${receiver.base}/ok?n=again` });
    expect(await storedWebhooks(who)).toHaveLength(MAX_WEBHOOKS_PER_CHANNEL);
  });
});

describe('URL rules in production', () => {
  let production: TestService;
  beforeAll(async () => {
    // Said explicitly: the test helper allows private addresses by default, for local receivers.
    production = await startTestService({ CHANNEL_ENV: 'production', WEBHOOK_ALLOW_PRIVATE_URLS: 'false', EVENTS_POLL_INTERVAL_MS: '0' });
  });
  afterAll(() => production?.close());

  it.each([
    ['plain http', 'http://example.com/hook', 'an https URL'],
    ['loopback', 'https://127.0.0.1/hook', 'a public address (not loopback, private or reserved)'],
    ['a private address', 'https://10.1.2.3/hook', 'a public address (not loopback, private or reserved)'],
    ['IPv6 loopback', 'https://[::1]/hook', 'a public address (not loopback, private or reserved)'],
    ['localhost', 'https://localhost/hook', expect.stringMatching(/^the host localhost (resolves to a non-public address|does not resolve)$/)],
    ['the metadata address', 'https://169.254.169.254/latest/meta-data', 'a public address (not loopback, private or reserved)'],
  ])('400 for %s, and nothing is written', async (_name, url, reason) => {
    const who = await production.channel();
    const res = await production.request(`${base}/webhooks`, { method: 'POST', ...json({ url }, apiKey(who)) });
    const error = await expectError(res, 400, 'VALIDATION_ERROR');
    expect(error.details!.fields).toEqual([{ field: 'url', reason }]);
    expect(await production.service.deps.db.prisma.webhookEndpoint.count({ where: { channelId: who.user_id } })).toBe(0);
  });

  it('accepts https to a public address, and refuses a change to a private one (the URL stays)', async () => {
    const who = await production.channel();
    const res = await production.request(`${base}/webhooks`, { method: 'POST', ...json({ url: 'https://93.184.215.14/hook' }, apiKey(who)) });
    expect(res.status).toBe(201);
    const { id } = (await res.json()).data;
    const patch = await production.request(`${base}/webhooks/${id}`, { method: 'PATCH', ...json({ url: 'https://192.168.0.10/hook' }, apiKey(who)) });
    const error = await expectError(patch, 400, 'VALIDATION_ERROR');
    expect(error.details!.fields[0].field).toBe('url');
    const stored = await production.service.deps.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } });
    expect(stored.url).toBe('https://93.184.215.14/hook');
  });
});

describe('credentials and ownership', () => {
  let owner: IssuedCredentials;
  let webhookId: string;
  let deliveryId: string;
  const routes = (id: string, delivery: string): [string, string, unknown?][] => [
    ['GET', `/webhooks/${id}`],
    ['PATCH', `/webhooks/${id}`, { description: 'taken over' }],
    ['DELETE', `/webhooks/${id}`],
    ['POST', `/webhooks/${id}/ping`],
    ['GET', `/webhooks/${id}/deliveries`],
    ['GET', `/webhooks/${id}/deliveries/${delivery}`],
    ['POST', `/webhooks/${id}/deliveries/${delivery}/replay`],
  ];

  beforeAll(async () => {
    owner = await t.channel();
    webhookId = (await create(owner, { url: `${receiver.base}/ok?owned`, description: 'mine' })).id;
    const ping = await call(apiKey(owner), 'POST', `/webhooks/${webhookId}/ping`);
    deliveryId = (await ping.json()).data.id;
  });

  async function unchanged() {
    const stored = await t.service.deps.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: webhookId } });
    expect(stored.description).toBe('mine');
    const deliveries = await t.service.deps.db.prisma.webhookDelivery.findMany({ where: { endpointId: webhookId } });
    expect(deliveries.map((d) => [d.id, d.status, d.attempts])).toEqual([[deliveryId, 'delivered', 1]]);
  }

  it("another channel's webhook is 404 NOT_FOUND on every route, and stays as it was", async () => {
    const other = await t.channel();
    for (const [method, path, body] of routes(webhookId, deliveryId)) {
      await expectError(await call(apiKey(other), method, path, body), 404, 'NOT_FOUND');
    }
    expect((await (await call(apiKey(other), 'GET', '/webhooks')).json()).data).toEqual([]);
    await unchanged();
  });

  it('an unknown or malformed webhook id, and an unknown delivery, are 404', async () => {
    for (const id of [randomUUID(), 'not-a-uuid', '12345']) {
      for (const [method, path, body] of routes(id, deliveryId)) {
        await expectError(await call(apiKey(owner), method, path, body), 404, 'NOT_FOUND');
      }
    }
    for (const delivery of [randomUUID(), 'nope']) {
      await expectError(await call(apiKey(owner), 'GET', `/webhooks/${webhookId}/deliveries/${delivery}`), 404, 'NOT_FOUND');
      await expectError(await call(apiKey(owner), 'POST', `/webhooks/${webhookId}/deliveries/${delivery}/replay`), 404, 'NOT_FOUND');
    }
    // A delivery of another webhook of the same channel is not one of this webhook's.
    const sibling = await create(owner, { url: `${receiver.base}/ok?sibling` });
    await expectError(await call(apiKey(owner), 'GET', `/webhooks/${sibling.id}/deliveries/${deliveryId}`), 404, 'NOT_FOUND');
    expect((await call(apiKey(owner), 'DELETE', `/webhooks/${sibling.id}`)).status).toBe(204);
    await unchanged();
  });

  it('no credential, or a bad one: 401 UNAUTHORIZED on every route', async () => {
    for (const headers of [{}, { 'x-api-key': 'ck_not-a-real-key' }] as Record<string, string>[]) {
      for (const [method, path, body] of [['POST', '/webhooks', { url: `${receiver.base}/ok` }], ['GET', '/webhooks'], ...routes(webhookId, deliveryId)] as [string, string, unknown?][]) {
        await expectError(await call(headers, method, path, body), 401, 'UNAUTHORIZED');
      }
    }
    await unchanged();
  });

  it('a credential without channels:write: 403 INSUFFICIENT_SCOPE naming it, on every route, and nothing changes', async () => {
    const readOnly = await t.channel({ scopes: ['channels:read', 'reservations:read', 'reservations:write'] });
    for (const [method, path, body] of [['POST', '/webhooks', { url: `${receiver.base}/ok` }], ['GET', '/webhooks'], ...routes(webhookId, deliveryId)] as [string, string, unknown?][]) {
      const error = await expectError(await call(apiKey(readOnly), method, path, body), 403, 'INSUFFICIENT_SCOPE');
      expect(error.details).toEqual({ required_scope: 'channels:write' });
    }
    expect(await storedWebhooks(readOnly)).toEqual([]);

    // A token of the owner's app issued with fewer scopes is refused the same way.
    const tokenRes = await t.request(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: owner.client_id, client_secret: owner.client_secret, scope: 'channels:read' }),
    });
    expect(tokenRes.status).toBe(200);
    const bearer = { authorization: `Bearer ${(await tokenRes.json()).access_token}` };
    for (const [method, path, body] of routes(webhookId, deliveryId)) {
      const error = await expectError(await call(bearer, method, path, body), 403, 'INSUFFICIENT_SCOPE');
      expect(error.details).toEqual({ required_scope: 'channels:write' });
    }
    await unchanged();
  });
});

describe('PATCH /webhooks/{id}', () => {
  it('changes events and description, null clears the description; enabled false and true hold and resume', async () => {
    const who = await t.channel();
    const made = await create(who, { url: `${receiver.base}/ok?patch`, description: 'first' });
    const patch = (body: unknown) => call(apiKey(who), 'PATCH', `/webhooks/${made.id}`, body);

    const changed = await patch({ events: ['reservation.cancelled'], url: `${receiver.base}/ok?patched` });
    expect(changed.status).toBe(200);
    const changedBody = await changed.json();
    expect(changedBody.data).toEqual({
      ...made,
      secret: undefined,
      url: `${receiver.base}/ok?patched`,
      events: ['reservation.cancelled'],
      updated_at: isoTime,
    });
    expect(changedBody.data).not.toHaveProperty('secret');
    expect(Date.parse(changedBody.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(made.updated_at));

    const cleared = (await (await patch({ description: null })).json()).data;
    expect(cleared).toMatchObject({ description: null, events: ['reservation.cancelled'], url: `${receiver.base}/ok?patched` });

    const disabled = (await (await patch({ enabled: false })).json()).data;
    expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: 'disabled by the channel', disabled_at: isoTime });
    // Disabling again keeps the first time and reason.
    const again = (await (await patch({ enabled: false })).json()).data;
    expect(again).toMatchObject({ status: 'disabled', disabled_at: disabled.disabled_at });

    const enabled = await patch({ enabled: true, description: 'back' });
    expect(enabled.status).toBe(200);
    expect((await enabled.json()).data).toMatchObject({ status: 'active', disabled_reason: null, disabled_at: null, description: 'back' });

    const [stored] = await storedWebhooks(who);
    expect(stored).toMatchObject({ events: ['reservation.cancelled'], description: 'back', disabledAt: null, disabledReason: null });
  });

  it.each([
    ['an empty body', {}, ['(body)']],
    ['an unknown field', { enabled: true, secret: 'whsec_x' }, ['(body)']],
    ['enabled that is not a boolean', { enabled: 'yes' }, ['enabled']],
    ['no event types', { events: [] }, ['events']],
    ['an unknown event type', { events: ['reservation.lost'] }, ['events.0']],
    ['an event type twice', { events: ['reservation.no_show', 'reservation.no_show'] }, ['events']],
    ['a description over 200 characters', { description: 'y'.repeat(201) }, ['description']],
    ['a NUL character in the description', { description: '\u0000' }, ['description']],
    ['a bad URL', { url: 'mailto:ops@example.com' }, ['url']],
  ])('400 VALIDATION_ERROR for %s, and nothing changes', async (_name, body, fields) => {
    const who = await t.channel();
    const made = await create(who, { url: `${receiver.base}/ok?p400`, events: ['reservation.created'], description: 'kept' });
    const error = await expectError(await call(apiKey(who), 'PATCH', `/webhooks/${made.id}`, body), 400, 'VALIDATION_ERROR');
    expect(error.details!.fields.map((f: { field: string }) => f.field)).toEqual(fields);
    const [stored] = await storedWebhooks(who);
    expect(stored).toMatchObject({ url: `${receiver.base}/ok?p400`, events: ['reservation.created'], description: 'kept', disabledAt: null });
  });
});

describe('DELETE /webhooks/{id}', () => {
  it('204 without a body; then 404 everywhere, gone from the list, its delivery log gone with it', async () => {
    const who = await t.channel();
    const keep = await create(who, { url: `${receiver.base}/ok?keep` });
    const gone = await create(who, { url: `${receiver.base}/ok?gone` });
    expect((await call(apiKey(who), 'POST', `/webhooks/${gone.id}/ping`)).status).toBe(200);

    const res = await call(apiKey(who), 'DELETE', `/webhooks/${gone.id}`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    await expectError(await call(apiKey(who), 'GET', `/webhooks/${gone.id}`), 404, 'NOT_FOUND');
    await expectError(await call(apiKey(who), 'DELETE', `/webhooks/${gone.id}`), 404, 'NOT_FOUND');
    await expectError(await call(apiKey(who), 'GET', `/webhooks/${gone.id}/deliveries`), 404, 'NOT_FOUND');
    const list = (await (await call(apiKey(who), 'GET', '/webhooks')).json()).data;
    expect(list.map((w: { id: string }) => w.id)).toEqual([keep.id]);
    expect(await t.service.deps.db.prisma.webhookDelivery.count({ where: { endpointId: gone.id } })).toBe(0);
  });
});

describe('POST /webhooks/{id}/ping', () => {
  it('sends a signed webhook.ping at once and answers with the delivery and its attempt', async () => {
    const who = await t.channel();
    const made = await create(who, { url: `${receiver.base}/ok?ping` });
    const res = await call(apiKey(who), 'POST', `/webhooks/${made.id}/ping`);
    expect(res.status).toBe(200);
    const { data } = await res.json();
    expect(data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      webhook_id: made.id,
      event_id: null,
      type: 'webhook.ping',
      status: 'delivered',
      attempts: 1,
      next_attempt_at: null,
      delivered_at: isoTime,
      created_at: isoTime,
      payload: { type: 'webhook.ping', timestamp: isoTime, data: { webhook_id: made.id } },
      attempt_log: [
        { attempt: 1, started_at: isoTime, duration_ms: expect.any(Number), status_code: 200, response_body: 'thanks', error: null },
      ],
    });

    const [sent] = receiver.at('/ok?ping');
    expect(receiver.at('/ok?ping')).toHaveLength(1);
    expect(sent!.headers['webhook-id']).toBe(data.id);
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(verified(made.secret, sent!)).toEqual(data.payload);
    expect(JSON.parse(sent!.body)).toEqual(data.payload);
    // Another secret does not verify it.
    expect(() => verified(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, sent!)).toThrow();

    const webhook = (await (await call(apiKey(who), 'GET', `/webhooks/${made.id}`)).json()).data;
    expect(webhook.last_success_at).toEqual(isoTime);
    const logged = (await (await call(apiKey(who), 'GET', `/webhooks/${made.id}/deliveries/${data.id}`)).json()).data;
    expect(logged).toEqual(data);
  });

  it('a receiver answering 500: failed, the attempt shows the status, and the ping is not retried', async () => {
    const who = await t.channel();
    const made = await create(who, { url: `${receiver.base}/fail?ping` });
    const res = await call(apiKey(who), 'POST', `/webhooks/${made.id}/ping`);
    expect(res.status).toBe(200);
    const { data } = await res.json();
    expect(data).toMatchObject({
      status: 'failed',
      attempts: 1,
      next_attempt_at: null,
      delivered_at: null,
      attempt_log: [{ attempt: 1, status_code: 500, response_body: 'receiver broke', error: 'HTTP 500' }],
    });
    await t.service.dispatcher.drain();
    expect(receiver.at('/fail?ping')).toHaveLength(1);
    const later = (await (await call(apiKey(who), 'GET', `/webhooks/${made.id}/deliveries/${data.id}`)).json()).data;
    expect(later).toEqual(data);
    // A failed ping does not disable the webhook.
    expect((await (await call(apiKey(who), 'GET', `/webhooks/${made.id}`)).json()).data).toMatchObject({ status: 'active', last_success_at: null });

    // Replayed, a ping gets one more attempt, and no more.
    const replay = await call(apiKey(who), 'POST', `/webhooks/${made.id}/deliveries/${data.id}/replay`);
    expect(replay.status).toBe(202);
    expect((await replay.json()).data).toMatchObject({ id: data.id, status: 'pending', next_attempt_at: isoTime });
    await t.service.dispatcher.drain();
    const replayed = (await (await call(apiKey(who), 'GET', `/webhooks/${made.id}/deliveries/${data.id}`)).json()).data;
    expect(replayed).toMatchObject({ status: 'failed', attempts: 2, next_attempt_at: null });
    expect(replayed.attempt_log.map((a: { attempt: number; status_code: number }) => [a.attempt, a.status_code])).toEqual([[1, 500], [2, 500]]);
    expect(receiver.at('/fail?ping')).toHaveLength(2);
  });

  it('works on a disabled webhook too', async () => {
    const who = await t.channel();
    const made = await create(who, { url: `${receiver.base}/ok?disabled-ping` });
    expect((await call(apiKey(who), 'PATCH', `/webhooks/${made.id}`, { enabled: false })).status).toBe(200);
    const res = await call(apiKey(who), 'POST', `/webhooks/${made.id}/ping`);
    expect(res.status).toBe(200);
    expect((await res.json()).data).toMatchObject({ status: 'delivered', attempt_log: [{ status_code: 200 }] });
  });
});

describe('the delivery log', () => {
  let who: IssuedCredentials;
  let webhook: Record<string, any>;
  let bookingId: string;

  beforeAll(async () => {
    who = await t.channel();
    webhook = await create(who, { url: `${receiver.base}/ok?log` });
    bookingId = await bookAndDrain(who);
  });

  it('a booking made two deliveries, reservation.created and reservation.confirmed, each delivered on its first attempt', async () => {
    const body = await deliveriesOf(who, webhook.id);
    expect(body.pagination).toEqual({ total: 2, page: 1, per_page: 20, total_pages: 1, has_next: false });
    expect(body.data.map((d) => d.type).sort()).toEqual(['reservation.confirmed', 'reservation.created']);
    for (const delivery of body.data) {
      expect(delivery).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        webhook_id: webhook.id,
        event_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        type: delivery.type,
        status: 'delivered',
        attempts: 1,
        next_attempt_at: null,
        delivered_at: isoTime,
        created_at: isoTime,
        payload: { type: delivery.type, timestamp: isoTime, data: expect.objectContaining({ id: bookingId, userId: who.user_id }) },
        attempt_log: [
          { attempt: 1, started_at: isoTime, duration_ms: expect.any(Number), status_code: 200, response_body: 'thanks', error: null },
        ],
      });
    }
    const created = body.data.find((d) => d.type === 'reservation.created')!;
    const confirmed = body.data.find((d) => d.type === 'reservation.confirmed')!;
    expect(confirmed.payload.data.status).toBe('confirmed');
    expect(created.event_id).not.toBe(confirmed.event_id);

    // What the receiver got: the same bodies, signed with the webhook's secret, webhook-id = delivery id.
    const sent = receiver.at('/ok?log');
    expect(sent).toHaveLength(2);
    for (const delivery of body.data) {
      const request = sent.find((r) => r.headers['webhook-id'] === delivery.id)!;
      expect(request).toBeDefined();
      expect(verified(webhook.secret, request)).toEqual(delivery.payload);
    }

    // One delivery by id is the same as in the list.
    const one = await call(apiKey(who), 'GET', `/webhooks/${webhook.id}/deliveries/${created.id}`);
    expect(one.status).toBe(200);
    expect((await one.json()).data).toEqual(created);
  });

  it('filters by status', async () => {
    expect((await deliveriesOf(who, webhook.id, '?status=delivered')).data).toHaveLength(2);
    for (const status of ['pending', 'held', 'failed']) {
      const body = await deliveriesOf(who, webhook.id, `?status=${status}`);
      expect(body.data).toEqual([]);
      expect(body.pagination).toEqual({ total: 0, page: 1, per_page: 20, total_pages: 0, has_next: false });
    }
  });

  it('pages like GET /bookings: data is the page, pagination beside it', async () => {
    const all = (await deliveriesOf(who, webhook.id)).data;
    const first = await deliveriesOf(who, webhook.id, '?per_page=1');
    expect(Object.keys(first)).toEqual(['data', 'pagination', 'meta']);
    expect(first.data).toEqual([all[0]]);
    expect(first.pagination).toEqual({ total: 2, page: 1, per_page: 1, total_pages: 2, has_next: true });
    const second = await deliveriesOf(who, webhook.id, '?per_page=1&page=2&status=delivered');
    expect(second.data).toEqual([all[1]]);
    expect(second.pagination).toEqual({ total: 2, page: 2, per_page: 1, total_pages: 2, has_next: false });
    const past = await deliveriesOf(who, webhook.id, '?per_page=1&page=3');
    expect(past.data).toEqual([]);
    expect(past.pagination).toMatchObject({ total: 2, page: 3, has_next: false });
  });

  it.each([
    ['per_page=0', 'per_page'],
    ['per_page=101', 'per_page'],
    ['page=0', 'page'],
    ['page=abc', 'page'],
    ['per_page=1.5', 'per_page'],
    ['status=cancelled', 'status'],
  ])('400 VALIDATION_ERROR for %s', async (query, field) => {
    const error = await expectError(await call(apiKey(who), 'GET', `/webhooks/${webhook.id}/deliveries?${query}`), 400, 'VALIDATION_ERROR');
    expect(error.details!.fields.map((f: { field: string }) => f.field)).toEqual([field]);
  });

  it('a webhook receives only the event types it chose', async () => {
    const picky = await t.channel();
    const cancelsOnly = await create(picky, { url: `${receiver.base}/ok?cancels`, events: ['reservation.cancelled'] });
    const confirmsOnly = await create(picky, { url: `${receiver.base}/ok?confirms`, events: ['reservation.confirmed'] });
    const id = await bookAndDrain(picky);
    expect((await deliveriesOf(picky, cancelsOnly.id)).data).toEqual([]);
    const confirms = (await deliveriesOf(picky, confirmsOnly.id)).data;
    expect(confirms.map((d) => [d.type, d.payload.data.id, d.status])).toEqual([['reservation.confirmed', id, 'delivered']]);
    expect(receiver.at('/ok?cancels')).toEqual([]);
  });
});

describe('POST /webhooks/{id}/deliveries/{delivery_id}/replay', () => {
  it('a delivered one: 202 pending, then delivered again with the same id and body, attempts 2', async () => {
    const who = await t.channel();
    const webhook = await create(who, { url: `${receiver.base}/ok?replay`, events: ['reservation.created'] });
    await bookAndDrain(who);
    const [delivery] = (await deliveriesOf(who, webhook.id)).data;
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 1 });

    const res = await call(apiKey(who), 'POST', `/webhooks/${webhook.id}/deliveries/${delivery!.id}/replay`);
    expect(res.status).toBe(202);
    const { data } = await res.json();
    expect(data).toEqual({ ...delivery, status: 'pending', next_attempt_at: isoTime, delivered_at: null });

    await t.service.dispatcher.drain();
    const after = (await (await call(apiKey(who), 'GET', `/webhooks/${webhook.id}/deliveries/${delivery!.id}`)).json()).data;
    expect(after).toMatchObject({ id: delivery!.id, status: 'delivered', attempts: 2, next_attempt_at: null, delivered_at: isoTime, payload: delivery!.payload });
    expect(after.attempt_log.map((a: { attempt: number; status_code: number }) => [a.attempt, a.status_code])).toEqual([[1, 200], [2, 200]]);

    const sent = receiver.at('/ok?replay');
    expect(sent).toHaveLength(2);
    expect(sent.map((r) => r.headers['webhook-id'])).toEqual([delivery!.id, delivery!.id]);
    expect(sent[1]!.body).toBe(sent[0]!.body);
    expect(verified(webhook.secret, sent[1]!)).toEqual(delivery!.payload);
    // Still one delivery in the log.
    expect((await deliveriesOf(who, webhook.id)).pagination).toMatchObject({ total: 1 });
  });

  it('a pending one: 409 DELIVERY_PENDING with its next attempt, and it stays as it was', async () => {
    const who = await t.channel();
    const webhook = await create(who, { url: `${receiver.base}/fail?pending`, events: ['reservation.created'] });
    await bookAndDrain(who);
    const [delivery] = (await deliveriesOf(who, webhook.id)).data;
    expect(delivery).toMatchObject({
      status: 'pending',
      attempts: 1,
      next_attempt_at: isoTime,
      attempt_log: [{ attempt: 1, status_code: 500, error: 'HTTP 500' }],
    });
    // The retry waits its scheduled hour (WEBHOOK_RETRY_SCHEDULE=1h, ±10 %).
    expect(Date.parse(delivery!.next_attempt_at) - Date.now()).toBeGreaterThan(50 * 60_000);
    expect((await deliveriesOf(who, webhook.id, '?status=pending')).data).toEqual([delivery]);

    const error = await expectError(await call(apiKey(who), 'POST', `/webhooks/${webhook.id}/deliveries/${delivery!.id}/replay`), 409, 'DELIVERY_PENDING');
    expect(error.details).toEqual({ next_attempt_at: delivery!.next_attempt_at });
    expect((await deliveriesOf(who, webhook.id)).data).toEqual([delivery]);
    expect(receiver.at('/fail?pending')).toHaveLength(1);
  });

  it('on a disabled webhook: 409 WEBHOOK_DISABLED; after enabling it, the replay goes out', async () => {
    const who = await t.channel();
    const webhook = await create(who, { url: `${receiver.base}/ok?held`, events: ['reservation.confirmed'] });
    await bookAndDrain(who);
    const [delivery] = (await deliveriesOf(who, webhook.id)).data;
    expect(delivery).toMatchObject({ status: 'delivered' });
    expect((await call(apiKey(who), 'PATCH', `/webhooks/${webhook.id}`, { enabled: false })).status).toBe(200);

    await expectError(await call(apiKey(who), 'POST', `/webhooks/${webhook.id}/deliveries/${delivery!.id}/replay`), 409, 'WEBHOOK_DISABLED');
    expect((await deliveriesOf(who, webhook.id)).data).toEqual([delivery]);

    expect((await call(apiKey(who), 'PATCH', `/webhooks/${webhook.id}`, { enabled: true })).status).toBe(200);
    expect((await call(apiKey(who), 'POST', `/webhooks/${webhook.id}/deliveries/${delivery!.id}/replay`)).status).toBe(202);
    await t.service.dispatcher.drain();
    expect((await deliveriesOf(who, webhook.id)).data[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(receiver.at('/ok?held')).toHaveLength(2);
  });

  it('a disabled webhook holds new deliveries; enabling it sends them', async () => {
    const who = await t.channel();
    const webhook = await create(who, { url: `${receiver.base}/ok?hold`, events: ['reservation.created'] });
    expect((await call(apiKey(who), 'PATCH', `/webhooks/${webhook.id}`, { enabled: false })).status).toBe(200);
    await bookAndDrain(who);
    const [held] = (await deliveriesOf(who, webhook.id)).data;
    expect(held).toMatchObject({ status: 'held', attempts: 0, next_attempt_at: null, attempt_log: [] });
    expect((await deliveriesOf(who, webhook.id, '?status=held')).data).toEqual([held]);
    expect((await deliveriesOf(who, webhook.id, '?status=pending')).data).toEqual([]);
    expect(receiver.at('/ok?hold')).toEqual([]);
    // Nothing to replay: enabling the webhook sends it.
    await expectError(await call(apiKey(who), 'POST', `/webhooks/${webhook.id}/deliveries/${held!.id}/replay`), 409, 'DELIVERY_HELD');
    expect((await deliveriesOf(who, webhook.id)).data).toEqual([held]);

    expect((await call(apiKey(who), 'PATCH', `/webhooks/${webhook.id}`, { enabled: true })).status).toBe(200);
    await t.service.dispatcher.drain();
    expect((await deliveriesOf(who, webhook.id)).data[0]).toMatchObject({ id: held!.id, status: 'delivered', attempts: 1 });
    expect(receiver.at('/ok?hold')).toHaveLength(1);
  });
});

describe('holding and resuming what is waiting', () => {
  it('disabling holds a delivery waiting for its retry; enabling makes it due at once', async () => {
    const who = await t.channel();
    const webhook = await create(who, { url: `${receiver.base}/fail?waiting`, events: ['reservation.created'] });
    await bookAndDrain(who);
    const [waiting] = (await deliveriesOf(who, webhook.id)).data;
    // Failed once; the retry waits its hour.
    expect(waiting).toMatchObject({ status: 'pending', attempts: 1, next_attempt_at: isoTime });

    expect((await call(apiKey(who), 'PATCH', `/webhooks/${webhook.id}`, { enabled: false })).status).toBe(200);
    const [held] = (await deliveriesOf(who, webhook.id)).data;
    expect(held).toEqual({ ...waiting, status: 'held', next_attempt_at: null });

    // The partner repairs the receiver and enables the webhook: due now, not in an hour.
    const before = Date.now();
    const enabled = await call(apiKey(who), 'PATCH', `/webhooks/${webhook.id}`, { enabled: true, url: `${receiver.base}/ok?waiting` });
    expect(enabled.status).toBe(200);
    const [due] = (await deliveriesOf(who, webhook.id)).data;
    expect(due).toMatchObject({ id: waiting!.id, status: 'pending', attempts: 1 });
    expect(Date.parse(due!.next_attempt_at)).toBeGreaterThanOrEqual(before - 1_000);
    expect(Date.parse(due!.next_attempt_at)).toBeLessThanOrEqual(Date.now());

    await t.service.dispatcher.drain();
    expect((await deliveriesOf(who, webhook.id)).data[0]).toMatchObject({ id: waiting!.id, status: 'delivered', attempts: 2 });
    expect(receiver.at('/ok?waiting')).toHaveLength(1);
  });
});

describe('a webhook deleted by another request meanwhile: 404, never 500', () => {
  it('a ping whose webhook is deleted while the receiver holds it', async () => {
    const who = await t.channel();
    const made = await create(who, { url: `${receiver.base}/hold?ping` });
    const ping = call(apiKey(who), 'POST', `/webhooks/${made.id}/ping`);
    await eventually(() => receiver.at('/hold?ping').length === 1, 5_000, 'the ping at the receiver');
    expect((await call(apiKey(who), 'DELETE', `/webhooks/${made.id}`)).status).toBe(204);
    receiver.release();
    await expectError(await ping, 404, 'NOT_FOUND');
    expect(await t.service.deps.db.prisma.webhookDelivery.count({ where: { endpointId: made.id } })).toBe(0);
  });

  /**
   * A request context in which the webhook is deleted right after the service has read it, as by
   * a DELETE that lands between the read and the write.
   */
  async function deletedAfterRead(who: IssuedCredentials) {
    const { deps } = t.service;
    const real = deps.db.prisma;
    const bound = (target: object, key: string | symbol) => {
      const value = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    };
    const endpoints = new Proxy(real.webhookEndpoint, {
      get: (target, key) =>
        key === 'findFirst'
          ? async (args: Parameters<typeof real.webhookEndpoint.findFirst>[0]) => {
              const found = await real.webhookEndpoint.findFirst(args);
              if (found) await real.webhookEndpoint.deleteMany({ where: { id: found.id } });
              return found;
            }
          : bound(target, key),
    });
    const prisma = new Proxy(real, { get: (target, key) => (key === 'webhookEndpoint' ? endpoints : bound(target, key)) });
    const principal = await authenticate(real, { apiKey: who.api_key });
    return createRequestContext(
      { ...deps, db: { ...deps.db, prisma } },
      { requestId: 'test', logger: deps.logger, principal, authError: null, signal: undefined },
    );
  }

  it.each<[string, WebhookChange | null]>([
    ['PATCH description', { description: 'changed' }],
    ['PATCH enabled false', { enabled: false }],
    ['PATCH enabled true', { enabled: true }],
    ['DELETE', null],
  ])('%s', async (_name, change) => {
    const who = await t.channel();
    const made = await create(who, { url: `${receiver.base}/ok?raced` });
    const ctx = await deletedAfterRead(who);
    const raced = change ? updateWebhook(ctx, made.id, change) : deleteWebhook(ctx, made.id);
    await expect(raced).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect(await storedWebhooks(who)).toEqual([]);
  });
});

describe('the OpenAPI document', () => {
  it('documents every webhook route with its scopes, responses and named schemas', async () => {
    const doc = await (await t.request('/channel/v1/openapi.json')).json();
    // The route's own statuses; the document adds 403 (HTTPS_REQUIRED), 413 (a body), 415 (a JSON body), 500, 503 and 504 to every route.
    const expected: [string, string, string[]][] = [
      ['/webhooks', 'post', ['201', '400', '401', '403', '409', '413', '415', '429', '500', '503', '504']],
      ['/webhooks', 'get', ['200', '401', '403', '429', '500', '503', '504']],
      ['/webhooks/{id}', 'get', ['200', '400', '401', '403', '404', '429', '500', '503', '504']],
      ['/webhooks/{id}', 'patch', ['200', '400', '401', '403', '404', '413', '415', '429', '500', '503', '504']],
      ['/webhooks/{id}', 'delete', ['204', '400', '401', '403', '404', '429', '500', '503', '504']],
      ['/webhooks/{id}/ping', 'post', ['200', '400', '401', '403', '404', '413', '429', '500', '503', '504']],
      ['/webhooks/{id}/deliveries', 'get', ['200', '400', '401', '403', '404', '429', '500', '503', '504']],
      ['/webhooks/{id}/deliveries/{delivery_id}', 'get', ['200', '400', '401', '403', '404', '429', '500', '503', '504']],
      ['/webhooks/{id}/deliveries/{delivery_id}/replay', 'post', ['202', '400', '401', '403', '404', '409', '413', '429', '500', '503', '504']],
    ];
    for (const [path, method, statuses] of expected) {
      const operation = doc.paths[path]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      expect(operation.tags).toEqual(['Webhooks']);
      // The delivery log, one delivery and a replay carry booking records: reservations:read too.
      const scopes = path.includes('/deliveries') ? ['channels:write', 'reservations:read'] : ['channels:write'];
      expect(operation.security).toEqual([{ ApiKeyAuth: [] }, { OAuth2: scopes }]);
      expect(operation['x-required-scopes']).toEqual(scopes);
      expect(Object.keys(operation.responses).sort()).toEqual(statuses);
    }
    expect(doc.paths['/webhooks'].post.responses['201'].headers.Location).toBeDefined();
    expect(doc.paths['/webhooks/{id}/deliveries'].get.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['id', 'page', 'per_page', 'status']);
    for (const name of ['Webhook', 'CreatedWebhook', 'CreateWebhook', 'UpdateWebhook', 'WebhookDelivery', 'WebhookAttempt', 'WebhookPayload']) {
      expect(doc.components.schemas, name).toHaveProperty(name);
    }
    expect(doc.components.schemas.CreateWebhook.additionalProperties).toBe(false);
    expect(doc.components.schemas.CreateWebhook.properties.events.items.enum).toEqual([...BOOKING_EVENT_TYPES]);
    expect(doc.components.schemas.WebhookDelivery.properties.status.enum).toEqual(['pending', 'held', 'delivered', 'failed']);
    const statusParam = doc.paths['/webhooks/{id}/deliveries'].get.parameters.find((p: { name: string }) => p.name === 'status');
    expect(statusParam.schema.enum).toEqual(['pending', 'held', 'delivered', 'failed']);
  });
});
