import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { startFaultProxy, type FaultProxy, type ProxyHit } from '../helpers/faultProxy.js';
import { eventually } from '../helpers/receiver.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * Who may steer tracing: a caller's W3C trace context (traceparent, tracestate) is continued only
 * for callers TRACE_CONTEXT_TRUSTED names. Anyone else's request starts a new trace, sampled as
 * the configured sampler decides for a new trace whatever the caller's sampled flag, with the
 * caller's ids as a link, and the caller's tracestate is not sent on to the provider. The provider
 * is the simulator behind a proxy that records the trace headers it receives.
 */

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACESTATE = 'vendor=caller-secret';
const parentOf = (flags: '00' | '01') => `00-${CALLER_TRACE}-${CALLER_SPAN}-${flags}`;

/** An address outside every range the services trust. */
const STRANGER = '203.0.113.9';
/** The reverse proxy of both services (TRUSTED_PROXIES). */
const PROXY = '10.1.2.3';

let simulator: RunningSimulator;
let proxy: FaultProxy;
/** parentbased_always_on (the default), trusting loopback callers and what its proxy hands on. */
let sampled: TestService;
let sampledSpans: InMemorySpanExporter;
/** parentbased_traceidratio with ratio 0: no new trace is kept; trusting loopback callers only. */
let ratioZero: TestService;
let ratioZeroSpans: InMemorySpanExporter;
let who: IssuedCredentials;
let whoAtZero: IssuedCredentials;
/** Each request reads a property not read before, so the provider is asked for it. */
let nextProperty = 100;

beforeAll(async () => {
  simulator = await startSimulator({ port: 0, host: '127.0.0.1' });
  proxy = await startFaultProxy(simulator.url);
  sampledSpans = new InMemorySpanExporter();
  ratioZeroSpans = new InMemorySpanExporter();
  [sampled, ratioZero] = await Promise.all([
    startTestService({ UPSTREAM_URL: proxy.url, TRUSTED_PROXIES: PROXY, TRACE_CONTEXT_TRUSTED: '127.0.0.0/8,proxies' }, { traceExporter: sampledSpans }),
    startTestService(
      {
        UPSTREAM_URL: proxy.url,
        TRUSTED_PROXIES: PROXY,
        TRACE_CONTEXT_TRUSTED: '127.0.0.0/8',
        // The sampler is configured as an operator would; the spans go to the test's exporter.
        OTEL_TRACES_EXPORTER: 'console',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0',
      },
      { traceExporter: ratioZeroSpans },
    ),
  ]);
  [who, whoAtZero] = await Promise.all([sampled.channel(), ratioZero.channel()]);
}, 120_000);

afterAll(async () => {
  await Promise.all([sampled?.close(), ratioZero?.close()]);
  await proxy?.close();
  await simulator?.close();
});

/** GET a property with the given trace headers, from `ip`: the server span (when kept) and the provider's hit. */
async function readProperty(t: TestService, exporter: InMemorySpanExporter, caller: IssuedCredentials, headers: Record<string, string>, ip?: string) {
  const id = nextProperty++;
  exporter.reset();
  const hitsBefore = proxy.hits.length;
  const res = await t.request(`/channel/v1/properties/${id}`, { headers: { ...apiKey(caller), ...headers }, ...(ip ? { ip } : {}) });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  const hit: ProxyHit = await eventually(() => proxy.hits.slice(hitsBefore).find((h) => h.path.startsWith('/properties')), 5_000, 'the provider call');
  const server: ReadableSpan | undefined = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER);
  return { hit, server };
}

describe('configuration', () => {
  it('trusts no caller by default; takes addresses, ranges and `proxies`; refuses anything else', () => {
    expect(loadConfig({}).traceContextTrusted).toEqual({ proxies: false, ranges: [] });
    expect(loadConfig({ TRACE_CONTEXT_TRUSTED: '10.0.0.0/8, proxies,::1' }).traceContextTrusted).toEqual({ proxies: true, ranges: ['10.0.0.0/8', '::1'] });
    expect(() => loadConfig({ TRACE_CONTEXT_TRUSTED: 'everyone' })).toThrow(/TRACE_CONTEXT_TRUSTED/);
  });
});

describe('a caller that is not trusted', () => {
  it('with sampled=0 is still traced (the sampler decides), in a new trace linked to the caller’s span', async () => {
    const { server, hit } = await readProperty(sampled, sampledSpans, who, { traceparent: parentOf('00'), tracestate: TRACESTATE }, STRANGER);
    expect(server).toBeDefined();
    const { traceId, spanId } = server!.spanContext();
    expect(traceId).not.toBe(CALLER_TRACE);
    expect(server!.parentSpanContext).toBeUndefined();
    expect(server!.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId }))).toEqual([{ traceId: CALLER_TRACE, spanId: CALLER_SPAN }]);
    // The provider is called in the new trace, without the caller's tracestate.
    expect(hit.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(spanId).not.toBe(CALLER_SPAN);
    expect(hit.tracestate).toBeUndefined();
  });

  it('with sampled=1 does not force sampling when the sampler keeps no new trace', async () => {
    const { server, hit } = await readProperty(ratioZero, ratioZeroSpans, whoAtZero, { traceparent: parentOf('01'), tracestate: TRACESTATE }, STRANGER);
    expect(server).toBeUndefined();
    expect(ratioZeroSpans.getFinishedSpans()).toEqual([]);
    // The provider still gets a (new, unsampled) trace context, never the caller's.
    expect(hit.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(hit.traceparent).not.toContain(CALLER_TRACE);
    expect(hit.tracestate).toBeUndefined();
  });

  it('handed on by a TRUSTED_PROXIES proxy without `proxies` trusted, is the stranger it forwards for', async () => {
    const headers = { traceparent: parentOf('01'), 'x-forwarded-for': STRANGER };
    const { server, hit } = await readProperty(ratioZero, ratioZeroSpans, whoAtZero, headers, PROXY);
    expect(server).toBeUndefined();
    expect(hit.traceparent).not.toContain(CALLER_TRACE);
  });
});

describe('a trusted caller', () => {
  it('from a trusted address: its context is continued, tracestate included', async () => {
    const { server, hit } = await readProperty(sampled, sampledSpans, who, { traceparent: parentOf('01'), tracestate: TRACESTATE });
    expect(server!.spanContext().traceId).toBe(CALLER_TRACE);
    expect(server!.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(server!.links).toEqual([]);
    expect(hit.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
    expect(hit.tracestate).toBe(TRACESTATE);
  });

  it('from a trusted address, its sampled flag counts with a parent-based sampler (ratio 0 notwithstanding)', async () => {
    const { server, hit } = await readProperty(ratioZero, ratioZeroSpans, whoAtZero, { traceparent: parentOf('01') });
    expect(server!.spanContext().traceId).toBe(CALLER_TRACE);
    expect(hit.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
  });

  it('handed on by a TRUSTED_PROXIES proxy, with `proxies` trusted: continued; the same caller direct: not', async () => {
    const headers = { traceparent: parentOf('01'), 'x-forwarded-for': STRANGER };
    const viaProxy = await readProperty(sampled, sampledSpans, who, headers, PROXY);
    expect(viaProxy.server!.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    const direct = await readProperty(sampled, sampledSpans, who, headers, STRANGER);
    expect(direct.server!.spanContext().traceId).not.toBe(CALLER_TRACE);
    expect(direct.server!.parentSpanContext).toBeUndefined();
  });
});
