import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createWebhook } from '../../src/services/webhooks/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { day, v1 } from '../helpers/flow.js';
import { eventually, startReceiver, type Receiver } from '../helpers/receiver.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';
import { createRequestContext } from '../../src/context.js';
import { authenticate } from '../../src/services/access/index.js';

/**
 * Issue 20, item 2: OpenTelemetry tracing. The spans go to an in-memory exporter (the test hook
 * of createService); the provider is the bundled simulator behind a proxy that records the
 * traceparent it receives; webhooks go to a local receiver.
 */

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

let simulator: RunningSimulator;
let proxy: FaultProxy;
let receiver: Receiver;
let traced: TestService;
let plain: TestService;
const exporter = new InMemorySpanExporter();

beforeAll(async () => {
  simulator = await startSimulator({ port: 0, host: '127.0.0.1' });
  proxy = await startFaultProxy(simulator.url);
  receiver = await startReceiver();
  // The test's requests come from loopback: trusted with their trace context, as an internal caller is.
  const env = { UPSTREAM_URL: proxy.url, EVENTS_POLL_INTERVAL_MS: '20', TRACE_CONTEXT_TRUSTED: '127.0.0.0/8' };
  [traced, plain] = await Promise.all([startTestService(env, { traceExporter: exporter }), startTestService(env)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([traced?.close(), plain?.close()]);
  await receiver?.close();
  await proxy?.close();
  await simulator?.close();
});

/** The spans of one trace, and each span's parent among them. */
function traceOf(traceId: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
}

const parentId = (s: ReadableSpan) => s.parentSpanContext?.spanId;

/** Whether `span` descends from `ancestor` within `spans`. */
function descends(spans: ReadableSpan[], span: ReadableSpan, ancestor: ReadableSpan): boolean {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  for (let at = byId.get(parentId(span) ?? ''); at; at = byId.get(parentId(at) ?? '')) if (at === ancestor) return true;
  return false;
}

async function webhookFor(t: TestService, who: Awaited<ReturnType<TestService['channel']>>, path: string) {
  const principal = await authenticate(t.service.deps.db.prisma, { apiKey: who.api_key });
  const ctx = createRequestContext(t.service.deps, { requestId: 'test', logger: t.service.deps.logger, principal, authError: null, signal: undefined });
  await createWebhook(ctx, { url: receiver.url(path) });
}

describe('configuration', () => {
  it('is off unless an exporter is configured', () => {
    expect(loadConfig({}).tracing).toBeNull();
    expect(loadConfig({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }).tracing).toBeNull();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing).toBeNull();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeNull();
  });

  it('reads the standard OTEL_* variables', () => {
    const tracing = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b,x-team=ops',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=traces',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,service.version=1.2',
      OTEL_SERVICE_NAME: 'channel-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    }).tracing;
    expect(tracing).toEqual({
      exporter: 'otlp',
      otlp: { url: 'http://collector:4318/v1/traces', headers: { 'api-key': 'a b', 'x-team': 'traces' }, protocol: 'http/protobuf' },
      resource: { 'deployment.environment.name': 'prod', 'service.version': '1.2', 'service.name': 'channel-eu' },
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
    });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing?.otlp).toMatchObject({
      url: 'http://c:4318/custom',
      protocol: 'http/json',
    });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'console' }).tracing?.exporter).toBe('console');
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
    expect(() => loadConfig({ OTEL_RESOURCE_ATTRIBUTES: 'nonsense' })).toThrow(/OTEL_RESOURCE_ATTRIBUTES/);
  });
});

describe('a booking traced end to end', () => {
  it('POST /channel/v1/bookings is one trace: server span, provider call, database transaction, webhook', async () => {
    const who = await traced.channel();
    await webhookFor(traced, who, '/traced');
    const api = v1(traced, who);
    const offer = await api.offer({ checkin: day(50), checkout: day(52) });
    exporter.reset();
    const hitsBefore = proxy.hits.length;
    const res = await api.book({ book_token: offer.bookToken, booker_name: 'Trace Test', guests_adult: 2 }, { traceparent: TRACEPARENT });
    expect(res.status).toBe(201);
    const booking = ((await res.json()) as { data: { id: string } }).data;

    const spans = traceOf(CALLER_TRACE);
    const server = spans.find((s) => s.kind === SpanKind.SERVER);
    expect(server).toBeDefined();
    // The server span is the child of the caller's span, named by its route template.
    expect(parentId(server!)).toBe(CALLER_SPAN);
    expect(server!.name).toBe('POST /channel/v1/bookings');
    expect(server!.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/channel/v1/bookings',
      'http.response.status_code': 201,
      'url.path': '/channel/v1/bookings',
    });
    // The provider's booking call, a descendant, and the provider received its traceparent.
    const book = spans.find((s) => s.kind === SpanKind.CLIENT && s.name === 'POST /bookings');
    expect(book).toBeDefined();
    expect(descends(spans, book!, server!)).toBe(true);
    expect(book!.attributes).toMatchObject({ 'http.request.method': 'POST', 'url.template': '/bookings', 'http.response.status_code': 201 });
    const sent = proxy.hits.slice(hitsBefore).find((h) => h.method === 'POST' && h.path === '/bookings');
    expect(sent?.traceparent).toBe(`00-${CALLER_TRACE}-${book!.spanContext().spanId}-01`);
    // The database statements (the booking's row, then its settlement with its events in one
    // statement: no transaction on this path since issue 18), descendants too.
    const statements = spans.filter((s) => s.attributes['db.query.text'] !== undefined);
    expect(statements.map((s) => s.name)).toEqual(expect.arrayContaining(['INSERT']));
    expect(statements.every((s) => descends(spans, s, server!))).toBe(true);
    expect(statements.find((s) => s.name === 'INSERT')?.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'db.operation.name': 'INSERT' });

    // The webhook delivery the booking caused carries the same trace.
    await receiver.waitFor(() => receiver.on('/traced').some((r) => (r.json.data as { booking_id?: string; id?: string }).id === booking.id || r.body.includes(booking.id)), 10_000);
    const delivery = receiver.on('/traced').find((r) => r.body.includes(booking.id))!;
    expect(delivery.headers.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
    const attemptSpanId = delivery.headers.traceparent!.split('-')[2];
    await expect.poll(() => traceOf(CALLER_TRACE).find((s) => s.spanContext().spanId === attemptSpanId)?.name).toBe('webhook.deliver');

    // The cancellation runs a transaction: its span is in the request's trace, its statements its children.
    const cancelTrace = '1bf92f3577b34da6a3ce929d0e0e4736';
    const cancelled = await api.cancel(booking.id, { traceparent: `00-${cancelTrace}-${CALLER_SPAN}-01` });
    expect(cancelled.status).toBe(200);
    const cancelSpans = traceOf(cancelTrace);
    const cancelServer = cancelSpans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(cancelServer.name).toBe('PUT /channel/v1/bookings/{id}/cancel');
    const transaction = cancelSpans.find((s) => s.name === 'db.transaction');
    expect(transaction).toBeDefined();
    expect(descends(cancelSpans, transaction!, cancelServer)).toBe(true);
    expect(transaction!.attributes['db.transaction.outcome']).toBe('commit');
    const inside = cancelSpans.filter((s) => parentId(s) === transaction!.spanContext().spanId);
    expect(inside.map((s) => s.name)).toContain('UPDATE');
    expect(cancelSpans.some((s) => s.name === 'POST /bookings/{id}/cancel' && descends(cancelSpans, s, cancelServer))).toBe(true);
  }, 60_000);

  it('a request without traceparent starts a trace of its own; GraphQL parse, validate and execute are spans in it', async () => {
    const who = await traced.channel();
    exporter.reset();
    const res = await traced.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...apiKey(who) },
      body: JSON.stringify({ query: 'query Mine { bookings(first: 1) { totalCount } }' }),
    });
    expect(res.status).toBe(200);
    const spans = exporter.getFinishedSpans();
    const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(server.name).toBe('POST /graphql');
    expect(server.parentSpanContext).toBeUndefined();
    const names = traceOf(server.spanContext().traceId).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['graphql.parse', 'graphql.validate', 'query Mine']));
    const execute = spans.find((s) => s.name === 'query Mine')!;
    expect(parentId(execute)).toBe(server.spanContext().spanId);
    // The statements the resolver ran are children of the execution.
    const statements = spans.filter((s) => s.attributes['db.query.text'] !== undefined && s.spanContext().traceId === server.spanContext().traceId);
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.some((s) => descends(spans, s, execute))).toBe(true);
  }, 60_000);
});

describe('over the network', () => {
  it("a request's server span ends with its answer over a socket, named by its route, child of the caller's span", async () => {
    const who = await traced.channel();
    const port = await traced.service.listen(0);
    exporter.reset();
    const res = await fetch(`http://127.0.0.1:${port}/channel/v1/properties/1`, { headers: { ...apiKey(who), traceparent: TRACEPARENT } });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    // The span ends when the answer is over (its close), just after the client has read it.
    const server = await eventually(() => traceOf(CALLER_TRACE).find((s) => s.kind === SpanKind.SERVER), 2_000, 'the server span');
    expect(server.name).toBe('GET /channel/v1/properties/{id}');
    expect(parentId(server)).toBe(CALLER_SPAN);
    expect(server.attributes).toMatchObject({ 'http.route': '/channel/v1/properties/{id}', 'http.response.status_code': 200 });
  });
});

describe('with tracing off', () => {
  it('no span is made, nothing is sent to the provider or receivers, and answers are the same', async () => {
    expect(plain.service.deps.tracing).toBeUndefined();
    const who = await plain.channel();
    await webhookFor(plain, who, '/plain');
    const api = v1(plain, who);
    const offer = await api.offer({ checkin: day(50), checkout: day(52) });
    exporter.reset();
    const hitsBefore = proxy.hits.length;
    const res = await api.book({ book_token: offer.bookToken, booker_name: 'Plain Test', guests_adult: 2 }, { traceparent: TRACEPARENT });
    expect(res.status).toBe(201);
    const booking = ((await res.json()) as { data: { id: string; status: string } }).data;
    expect(booking.status).toBeDefined();
    expect(exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === CALLER_TRACE)).toEqual([]);
    const sent = proxy.hits.slice(hitsBefore).filter((h) => h.method === 'POST' && h.path === '/bookings');
    expect(sent.length).toBe(1);
    expect(sent[0]!.traceparent).toBeUndefined();
    await receiver.waitFor(() => receiver.on('/plain').some((r) => r.body.includes(booking.id)), 10_000);
    expect(receiver.on('/plain').find((r) => r.body.includes(booking.id))!.headers.traceparent).toBeUndefined();
  }, 60_000);
});
