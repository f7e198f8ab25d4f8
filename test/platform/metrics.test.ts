import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { day, v1 } from '../helpers/flow.js';
import { eventually, startReceiver, type Receiver } from '../helpers/receiver.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * GET /metrics (issue 20): what an operator's Prometheus scrapes after a booking flow, the label
 * sets staying bounded, and who may scrape. Requests carry a simulated client address: the test
 * service's own loopback address by default, 203.0.113.x from elsewhere, or a local proxy
 * (TRUSTED_PROXIES) relaying a caller from elsewhere.
 */

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a text exposition (format 0.0.4). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples of `name` whose labels include `labels`. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

const OUTSIDE = '203.0.113.7';
const PROXY = '127.0.0.1';

let t: TestService;
let remote: TestService;
let receiver: Receiver;
let who: IssuedCredentials;

async function scrape(service: TestService = t): Promise<Sample[]> {
  const res = await service.request('/metrics');
  expect(res.status).toBe(200);
  return parse(await res.text());
}

beforeAll(async () => {
  receiver = await startReceiver(() => 200);
  // The dispatcher runs when the test drains it (EVENTS_POLL_INTERVAL_MS=0); a local proxy's
  // X-Forwarded-For is believed.
  [t, remote] = await Promise.all([
    startTestService({ EVENTS_POLL_INTERVAL_MS: '0', TRUSTED_PROXIES: PROXY }),
    startTestService({ METRICS_ALLOW_REMOTE: 'true', TRUSTED_PROXIES: PROXY }),
  ]);
  who = await t.channel({ name: 'Metrics Channel' });
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await Promise.all([t?.close(), remote?.close()]);
});

describe('after a booking flow', () => {
  let samples: Sample[];
  let before: Sample[];

  beforeAll(async () => {
    before = await scrape();
    const api = v1(t, who);
    expect((await api.call('POST', '/webhooks', { url: receiver.url('/metrics-hook') })).status).toBe(201);
    const offer = await api.offer({ checkin: day(50), checkout: day(52) });
    const booked = await api.book({ book_token: offer.bookToken, booker_name: 'Metrics Probe', guests_adult: 2 });
    expect(booked.status).toBe(201);
    await t.service.dispatcher.drain();
    await receiver.waitFor(() => receiver.on('/metrics-hook').length > 0);
    samples = await scrape();
  }, 60_000);

  it('serves the Prometheus text format', async () => {
    const res = await t.request('/metrics');
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).toMatch(/^# HELP channel_http_request_duration_seconds /m);
    expect(text).toMatch(/^# TYPE channel_http_request_duration_seconds histogram$/m);
  });

  it('counts HTTP requests by method, route template and status', () => {
    const booking = { method: 'POST', route: '/channel/v1/bookings', status: '201' };
    expect(total(samples, 'channel_http_request_duration_seconds_count', booking)).toBe(total(before, 'channel_http_request_duration_seconds_count', booking) + 1);
    expect(total(samples, 'channel_http_request_duration_seconds_count', { method: 'GET', route: '/channel/v1/search/price-check', status: '200' })).toBeGreaterThan(0);
    // The histogram's buckets add up: +Inf holds every request.
    expect(total(samples, 'channel_http_request_duration_seconds_bucket', { ...booking, le: '+Inf' })).toBe(total(samples, 'channel_http_request_duration_seconds_count', booking));
  });

  it('counts the provider calls by kind and outcome, and shows the circuit closed', () => {
    expect(total(samples, 'channel_provider_call_duration_seconds_count', { kind: 'book', outcome: 'ok' })).toBe(1);
    expect(total(samples, 'channel_provider_call_duration_seconds_count', { kind: 'price_check', outcome: 'ok' })).toBeGreaterThan(0);
    expect(total(samples, 'channel_provider_circuit_state', { state: 'closed' })).toBe(1);
    expect(total(samples, 'channel_provider_circuit_state', { state: 'open' })).toBe(0);
  });

  it('times database statements and transactions', () => {
    const moved = (name: string, labels: Record<string, string>) => total(samples, name, labels) - total(before, name, labels);
    expect(moved('channel_db_query_duration_seconds_count', { statement: 'select' })).toBeGreaterThan(0);
    expect(moved('channel_db_query_duration_seconds_count', { statement: 'insert' })).toBeGreaterThan(0);
    expect(moved('channel_db_transaction_duration_seconds_count', { outcome: 'commit' })).toBeGreaterThan(0);
    expect(total(samples, 'channel_db_transaction_duration_seconds_sum')).toBeGreaterThan(0);
  });

  it('shows the outbox drained and the webhook attempt made', () => {
    expect(total(samples, 'channel_webhook_attempts_total', { outcome: 'success' })).toBeGreaterThan(0);
    expect(total(samples, 'channel_webhook_attempt_duration_seconds_count')).toBe(total(samples, 'channel_webhook_attempts_total'));
    expect(total(samples, 'channel_outbox_events_pending')).toBe(0);
    expect(total(samples, 'channel_outbox_oldest_pending_age_seconds')).toBe(0);
    expect(total(samples, 'channel_webhook_deliveries', { status: 'pending' })).toBe(0);
    expect(total(samples, 'channel_webhook_deliveries', { status: 'held' })).toBe(0);
    expect(total(samples, 'channel_webhook_endpoints_disabled')).toBe(0);
  });

  it('shows an undelivered outbox event and its age until the dispatcher publishes it', async () => {
    const api = v1(t, who);
    const offer = await api.offer({ checkin: day(60), checkout: day(61) });
    expect((await api.book({ book_token: offer.bookToken, booker_name: 'Metrics Probe', guests_adult: 2 })).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const waiting = await scrape();
    expect(total(waiting, 'channel_outbox_events_pending')).toBeGreaterThan(0);
    expect(total(waiting, 'channel_outbox_oldest_pending_age_seconds')).toBeGreaterThan(0);
    await t.service.dispatcher.drain();
    expect(total(await scrape(), 'channel_outbox_events_pending')).toBe(0);
  });

  it("includes Node's default process metrics and the live gauges", () => {
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(samples.some((s) => s.name === name), name).toBe(true);
    }
    expect(samples.some((s) => s.name === 'channel_graphql_subscriptions' && s.labels.transport === 'graphql_ws')).toBe(true);
    expect(samples.some((s) => s.name === 'channel_graphql_subscriptions' && s.labels.transport === 'http')).toBe(true);
    expect(total(samples, 'channel_graphql_ws_connections')).toBe(0);
  });
});

describe('live subscriptions', () => {
  it('an SSE subscription is counted under http while it lives, and its HTTP request once it ends', async () => {
    const live = async () => total(await scrape(), 'channel_graphql_subscriptions', { transport: 'http' });
    const route = { method: 'POST', route: '/graphql', status: '200' };
    const requests = async () => total(await scrape(), 'channel_http_request_duration_seconds_count', route);
    const before = await requests();
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { ...apiKey(who), 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription MetricsEvents { bookingEvents { type } }' }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    void reader.read().catch(() => undefined);
    await eventually(async () => (await live()) === 1, 10_000, 'one live subscription');
    // Still streaming: not yet an answer that finished.
    expect(await requests()).toBe(before);
    await reader.cancel();
    await eventually(async () => (await live()) === 0, 10_000, 'no live subscription');
    await eventually(async () => (await requests()) === before + 1, 10_000, 'the stream counted as a request');
  });
});

describe('over the network', () => {
  // The requests above come in-process; these come over a socket, to the node:http responses the
  // front makes (FrontResponse), whose end reaches the histogram without a listener of its own.
  it('an answer is counted when it is over, and a client that left before its answer as 499', async () => {
    const port = await t.service.listen(0);
    const read = { method: 'GET', route: '/channel/v1/properties/{id}', status: '200' };
    const readsBefore = total(await scrape(), 'channel_http_request_duration_seconds_count', read);
    const res = await fetch(`http://127.0.0.1:${port}/channel/v1/properties/1`, { headers: apiKey(who) });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    await eventually(async () => total(await scrape(), 'channel_http_request_duration_seconds_count', read) === readsBefore + 1, 10_000, 'the read counted');

    // The provider holds this search (upstream_timeout) until the client gives up.
    const left = { method: 'GET', route: '/channel/v1/search/availability/{propertyId}', status: '499' };
    const leftBefore = total(await scrape(), 'channel_http_request_duration_seconds_count', left);
    const search = `/channel/v1/search/availability/1?checkin=${day(40)}&checkout=${day(41)}&adults=2`;
    const gone = fetch(`http://127.0.0.1:${port}${search}`, {
      headers: { ...apiKey(who), 'x-test-scenario': 'upstream_timeout' },
      signal: AbortSignal.timeout(300),
    });
    await expect(gone).rejects.toThrow();
    await eventually(async () => total(await scrape(), 'channel_http_request_duration_seconds_count', left) === leftBefore + 1, 10_000, 'the abandoned search counted as 499');
  });
});

describe('bounded labels', () => {
  it('a property path is labelled with its route template, an unknown path as unmatched', async () => {
    expect((await t.request('/channel/v1/properties/123', { headers: apiKey(who) })).status).toBe(200);
    expect((await t.request('/no/such/path/4711')).status).toBe(404);
    const samples = await scrape();
    const routes = new Set(samples.filter((s) => s.name === 'channel_http_request_duration_seconds_count').map((s) => s.labels.route));
    expect(routes).toContain('/channel/v1/properties/{id}');
    expect(routes).toContain('unmatched');
    expect([...routes].some((r) => r?.includes('123') || r?.includes('4711'))).toBe(false);
  });

  it('GraphQL operations are counted by name and outcome; only valid operations a credential runs name a label', async () => {
    const probe = await t.graphql('query MetricsProbe { channel { userId } }', {}, apiKey(who));
    expect(probe.errors).toBeUndefined();
    const unauthenticated = await t.graphql('query MetricsNoCredential { channel { userId } }');
    expect(unauthenticated.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
    // A name a partner's operation labelled keeps its label whoever sends it.
    expect((await t.graphql('query MetricsProbe { __typename }')).status).toBe(200);
    expect((await t.graphql('query MetricsBroken { channel {')).status).toBe(400);
    expect((await t.graphql('query MetricsInvalid { nope }', {}, apiKey(who))).status).toBe(400);
    // Over GRAPHQL_MAX_COST (600 by default): refused while validating, by a rule after this plugin's hook.
    const page = 'edges { node { id roomTypes { id ratePlans { id } } } }';
    const costly = await t.graphql(`query MetricsCostly { ${Array.from({ length: 6 }, (_, i) => `p${i}: properties(first: 100) { ${page} }`).join(' ')} }`, {}, apiKey(who));
    expect(costly.errors?.[0]?.extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    const samples = await scrape();
    const ops = (labels: Record<string, string>) => total(samples, 'channel_graphql_operations_total', labels);
    expect(ops({ operation: 'MetricsProbe', type: 'query', outcome: 'ok' })).toBe(2);
    // A stranger's name and refused documents' names are `other`, with their outcomes.
    expect(ops({ operation: 'other', type: 'query', outcome: 'client_error' })).toBe(1);
    expect(ops({ operation: 'other', outcome: 'validation_error' })).toBe(2);
    expect(ops({ operation: 'unknown', outcome: 'parse_error' })).toBeGreaterThanOrEqual(1);
    const names = new Set(samples.filter((s) => s.name === 'channel_graphql_operations_total').map((s) => s.labels.operation));
    for (const name of ['MetricsNoCredential', 'MetricsInvalid', 'MetricsCostly', 'MetricsBroken']) expect(names).not.toContain(name);
    expect(total(samples, 'channel_graphql_execute_duration_seconds_count', { operation: 'MetricsProbe', type: 'query' })).toBe(2);
    expect(total(samples, 'channel_graphql_parse_duration_seconds_count')).toBeGreaterThanOrEqual(4);
    expect(total(samples, 'channel_graphql_validate_duration_seconds_count')).toBeGreaterThanOrEqual(3);
  });

  it("101 strangers' names take no label: a partner's operation after them is still labelled; 150 of a partner's give 100 and other", async () => {
    for (let i = 0; i < 101; i++) expect((await t.graphql(`query Junk${i} { __typename }`)).status).toBe(200);
    expect((await t.graphql('query PartnerAfterJunk { channel { userId } }', {}, apiKey(who))).errors).toBeUndefined();
    let samples = await scrape();
    let names = new Set(samples.filter((s) => s.name === 'channel_graphql_operations_total').map((s) => s.labels.operation!));
    expect([...names].filter((n) => n.startsWith('Junk'))).toEqual([]);
    expect(total(samples, 'channel_graphql_operations_total', { operation: 'PartnerAfterJunk', outcome: 'ok' })).toBe(1);

    const fixed = ['other', 'anonymous', 'unknown'];
    const otherBefore = total(samples, 'channel_graphql_operations_total', { operation: 'other' });
    const namedBefore = [...names].filter((n) => !fixed.includes(n)).length;
    expect(namedBefore).toBeLessThan(100);
    for (let i = 0; i < 150; i++) {
      const res = await t.graphql(`query Distinct${i} { __typename }`, {}, apiKey(who));
      expect(res.status).toBe(200);
    }
    samples = await scrape();
    names = new Set(samples.filter((s) => s.name === 'channel_graphql_operations_total').map((s) => s.labels.operation!));
    expect([...names].filter((n) => !fixed.includes(n)).length).toBe(100);
    // Past the first hundred names, the partner's further names went to `other`.
    expect(total(samples, 'channel_graphql_operations_total', { operation: 'other' }) - otherBefore).toBe(namedBefore + 150 - 100);
  });
});

describe('rate-limit refusals by surface', () => {
  it('a REST refusal (429) is counted under rest_v1, a GraphQL one under graphql', async () => {
    const limited = await t.channel({ name: 'Metrics Limited', rateLimit: { sandbox: 2, production: 2 } });
    const before = await scrape();
    // An operation of 3 points with 2 left: refused when it is about to run, an operation of its own.
    // (Once the window has no point left, GraphQL refuses before parsing: no operation to count.)
    const gql = await t.graphql('query MetricsLimited { channel { userId } bookings { edges { node { bookingId } } } webhooks { edges { node { webhookId } } } }', {}, apiKey(limited));
    expect(gql.errors?.[0]?.extensions?.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(gql.errors?.[0]?.extensions?.details).toMatchObject({ cost: 3, limit: 2 });
    for (const status of [200, 200, 429]) expect((await t.request('/channel/v1/channels/me', { headers: apiKey(limited) })).status).toBe(status);
    const after = await scrape();
    const moved = (surface: string) =>
      total(after, 'channel_rate_limit_refusals_total', { surface }) - total(before, 'channel_rate_limit_refusals_total', { surface });
    expect(moved('rest_v1')).toBe(1);
    expect(moved('graphql')).toBe(1);
    expect(total(after, 'channel_graphql_operations_total', { operation: 'other', outcome: 'rate_limited' })).toBe(1);
  });
});

describe('who may scrape', () => {
  const operator = (s: TestService) => ({ authorization: `Bearer ${s.service.adminToken.token}` });

  async function expectRefusal(res: Response, status: number, code: string) {
    expect(res.status).toBe(status);
    const body = await res.json();
    expect(body.error.code).toBe(code);
    expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
    return body.error;
  }

  it('loopback callers are served without a credential (the default instance and the remote one alike)', async () => {
    expect((await t.request('/metrics', { ip: '127.0.0.2' })).status).toBe(200);
    expect((await t.request('/metrics', { ip: '::1' })).status).toBe(200);
    expect((await remote.request('/metrics')).status).toBe(200);
  });

  it('a proxy on this host (one of TRUSTED_PROXIES) that forwards no address is not the operator', async () => {
    const refused = await expectRefusal(await t.request('/metrics', { ip: PROXY }), 403, 'FORBIDDEN');
    expect(refused.message).toMatch(/METRICS_ALLOW_REMOTE/);
    // Nor one that forwards a loopback address: a caller through a proxy is never local.
    await expectRefusal(await t.request('/metrics', { ip: PROXY, headers: { 'x-forwarded-for': '127.0.0.1' } }), 403, 'FORBIDDEN');
    // With METRICS_ALLOW_REMOTE it needs the operator token, as any remote caller does.
    await expectRefusal(await remote.request('/metrics', { ip: PROXY }), 401, 'UNAUTHORIZED');
    expect((await remote.request('/metrics', { ip: PROXY, headers: operator(remote) })).status).toBe(200);
  });

  it('by default a caller from elsewhere is refused, operator token or not, directly or through a local proxy', async () => {
    const direct = await expectRefusal(await t.request('/metrics', { ip: OUTSIDE, headers: operator(t) }), 403, 'FORBIDDEN');
    expect(direct.message).toMatch(/METRICS_ALLOW_REMOTE/);
    await expectRefusal(await t.request('/metrics', { ip: OUTSIDE }), 403, 'FORBIDDEN');
    // A proxy on this host relaying a caller from elsewhere: the caller is not loopback.
    await expectRefusal(await t.request('/metrics', { ip: PROXY, headers: { 'x-forwarded-for': OUTSIDE } }), 403, 'FORBIDDEN');
  });

  it('a partner credential is refused, even on loopback', async () => {
    await expectRefusal(await t.request('/metrics', { headers: apiKey(who) }), 403, 'FORBIDDEN');
    const token = await t.request('/channel/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: who.client_id, client_secret: who.client_secret }),
    });
    const bearer = { authorization: `Bearer ${(await token.json()).access_token}` };
    await expectRefusal(await t.request('/metrics', { headers: bearer }), 403, 'FORBIDDEN');
  });

  it('with METRICS_ALLOW_REMOTE a caller from elsewhere is served with the operator token only', async () => {
    const relayed = (headers: Record<string, string> = {}) => remote.request('/metrics', { ip: PROXY, headers: { 'x-forwarded-for': OUTSIDE, ...headers } });
    const served = await relayed(operator(remote));
    expect(served.status).toBe(200);
    expect(await served.text()).toMatch(/^channel_http_request_duration_seconds_count\{/m);
    expect((await remote.request('/metrics', { ip: OUTSIDE, headers: operator(remote) })).status).toBe(200);
    const missing = await relayed();
    await expectRefusal(missing, 401, 'UNAUTHORIZED');
    await expectRefusal(await relayed({ authorization: 'Bearer adm_not-the-operator-token-at-all' }), 401, 'UNAUTHORIZED');
    const partner = await remote.channel({ name: 'Remote Partner' });
    await expectRefusal(await relayed(apiKey(partner)), 403, 'FORBIDDEN');
    await expectRefusal(await relayed({ ...apiKey(partner), ...operator(remote) }), 403, 'FORBIDDEN');
  });
});
