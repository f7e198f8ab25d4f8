import type { IncomingMessage } from 'node:http';
import {
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { Config } from '../config.js';
import { addTraceSource, isInRanges } from '../services/kernel/index.js';
import { tracedAdapter, type AdapterFactory } from './database.js';

/**
 * OpenTelemetry tracing of one service instance, built only when tracing is on (config.tracing,
 * the OTEL_* variables): with it off, nothing here exists and the callers' only cost is a check
 * of `deps.tracing`.
 *
 * Nothing is registered globally (no global tracer provider, propagator or context manager): each
 * service instance holds its own provider and its own AsyncLocalStorage context, so several
 * instances in one process (tests) do not mix their traces, and libraries that trace through the
 * global API see nothing. Every span is made here, explicitly (the project is ESM and runs under
 * vitest, where require-hook auto-instrumentation does not load):
 *
 * - the HTTP server span of each request (rest-adapters/front.ts), named `METHOD route-template`:
 *   child of the caller's W3C `traceparent`/`tracestate` when the caller is trusted with them
 *   (TRACE_CONTEXT_TRUSTED); anyone else's request starts a trace of its own, sampled as the
 *   sampler decides for a new trace, with a link to the caller's span, and its `tracestate` goes
 *   nowhere (the provider and webhooks get the new trace's context only);
 * - GraphQL parse, validate and execute (src/graphql/plugins/tracing.ts);
 * - each provider attempt, with `traceparent` sent to the provider (src/upstream/client.ts);
 * - each database transaction and statement (the Prisma driver adapter, database.ts);
 * - each webhook attempt, child of the trace that wrote its event (services/webhooks/attempts.ts).
 */
export interface Tracing {
  readonly tracer: Tracer;
  /** The context of what runs now: the request's server span, a GraphQL execution... (ROOT outside). */
  active(): Context;
  /** Runs `fn` with `ctx` active (its promises and callbacks keep it). */
  with<T>(ctx: Context, fn: () => T): T;
  /** A span, child of `parent` (the active context when omitted). */
  startSpan(name: string, options?: SpanOptions, parent?: Context): Span;
  /**
   * The server span of an incoming request, child of its `traceparent` if `caller` is trusted with
   * it, else a new trace's root linked to it; `ctx` holds it, for `with`.
   */
  serverSpan(req: IncomingMessage, path: string, https: boolean, caller: Caller): { span: Span; ctx: Context };
  /** Ends a server span with the answer's status and the route template that answered. */
  endServerSpan(span: Span, method: string, route: string | undefined, status: number): void;
  /** Adds `traceparent` (and `tracestate`) of `ctx` to outgoing headers. */
  inject(ctx: Context, headers: Record<string, string>): void;
  /** The context a stored `traceparent` names (ROOT when there is none or it does not parse). */
  extract(traceparent: string | null | undefined): Context;
  /** The W3C traceparent of a span. */
  traceparentOf(span: Span): string;
  /** The provider client's hook (src/upstream/client.ts, UpstreamTracer). */
  readonly upstream: {
    attempt(method: string, template: string, origin: string, path: string): {
      headers(headers: Record<string, string>): void;
      end(status: number | undefined, error?: string): void;
    };
  };
  /** The Prisma driver adapter with a span per transaction and statement (src/db/client.ts). */
  wrapAdapter<F extends AdapterFactory>(factory: F): F;
  /** Exports what is pending and stops. */
  shutdown(): Promise<void>;
}

/** Who sent a request: its client address, and whether a TRUSTED_PROXIES peer handed it on. */
export interface Caller {
  ip: string | undefined;
  viaProxy: boolean;
}

export interface TracingOptions {
  /**
   * Tests: spans go to this exporter (an InMemorySpanExporter), one at a time as they end,
   * whatever the configuration says; tracing is on with it.
   */
  exporter?: SpanExporter | undefined;
}

const TRACER_NAME = 'channel-service';

/** Tracing as configured; undefined when it is off (config.tracing null and no test exporter). */
export function createTracing(config: Config, options: TracingOptions = {}): Tracing | undefined {
  const settings = config.tracing;
  if (!settings && !options.exporter) return undefined;
  let processor;
  if (options.exporter) processor = new SimpleSpanProcessor(options.exporter);
  else if (settings!.exporter === 'console') processor = new SimpleSpanProcessor(new ConsoleSpanExporter());
  else {
    const { url, headers, protocol } = settings!.otlp;
    const exporterConfig = { url, headers: { ...headers } };
    processor = new BatchSpanProcessor(protocol === 'http/json' ? new OtlpJsonExporter(exporterConfig) : new OtlpProtoExporter(exporterConfig));
  }
  const provider = new BasicTracerProvider({
    // telemetry.sdk.* of the SDK, then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME.
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': 'channel-service', ...settings?.resource })),
    sampler: samplerOf(settings?.sampler ?? 'parentbased_always_on', settings?.samplerRatio ?? 1),
    spanProcessors: [processor],
  });
  return new OtelTracing(provider, config.traceContextTrusted);
}

function samplerOf(name: NonNullable<Config['tracing']>['sampler'], ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

class OtelTracing implements Tracing {
  readonly tracer: Tracer;
  private readonly contexts = new AsyncLocalStorageContextManager();
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly removeSource: () => void;
  readonly upstream: Tracing['upstream'];

  constructor(
    private readonly provider: BasicTracerProvider,
    private readonly trusted: Config['traceContextTrusted'],
  ) {
    this.tracer = provider.getTracer(TRACER_NAME);
    this.contexts.enable();
    // Outbox events written in a trace keep its traceparent, for the webhook deliveries they cause.
    this.removeSource = addTraceSource(() => {
      const span = trace.getSpan(this.contexts.active());
      return span ? this.traceparentOf(span) : undefined;
    });
    this.upstream = {
      attempt: (method, template, origin, path) => {
        const url = new URL(origin);
        const span = this.startSpan(`${method} ${template}`, {
          kind: SpanKind.CLIENT,
          attributes: {
            'http.request.method': method,
            'url.template': template,
            'url.full': origin + path,
            'server.address': url.hostname,
            'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
            'peer.service': 'inventory-provider',
          },
        });
        return {
          headers: (headers) => this.inject(trace.setSpan(ROOT_CONTEXT, span), headers),
          end: (status, error) => {
            if (status !== undefined) span.setAttribute('http.response.status_code', status);
            if (error !== undefined || (status !== undefined && status >= 500)) {
              span.setAttribute('error.type', status !== undefined && status >= 500 ? String(status) : 'provider_fault');
              span.setStatus({ code: SpanStatusCode.ERROR, ...(error ? { message: error } : {}) });
            }
            span.end();
          },
        };
      },
    };
  }

  active(): Context {
    return this.contexts.active();
  }

  with<T>(ctx: Context, fn: () => T): T {
    return this.contexts.with(ctx, fn);
  }

  startSpan(name: string, options?: SpanOptions, parent: Context = this.contexts.active()): Span {
    return this.tracer.startSpan(name, options, parent);
  }

  serverSpan(req: IncomingMessage, path: string, https: boolean, caller: Caller): { span: Span; ctx: Context } {
    const { parent, links } = this.callerContext(req, caller);
    const clientIp = caller.ip;
    const method = req.method ?? 'GET';
    const attributes: Attributes = {
      'http.request.method': method,
      'url.path': path,
      'url.scheme': https ? 'https' : 'http',
      'network.protocol.version': req.httpVersion,
    };
    if (clientIp) attributes['client.address'] = clientIp;
    const agent = req.headers['user-agent'];
    if (agent) attributes['user_agent.original'] = agent;
    const host = req.headers.host;
    if (host) attributes['server.address'] = host.replace(/:\d+$/, '');
    const span = this.tracer.startSpan(method, { kind: SpanKind.SERVER, attributes, ...(links && { links }) }, parent);
    return { span, ctx: trace.setSpan(parent, span) };
  }

  /**
   * The parent of a request's server span: the caller's context when it is trusted with it; else
   * none (a new trace, which the sampler decides as any root, whatever the caller's sampled flag),
   * with the caller's trace and span ids kept as a link (without its tracestate).
   */
  private callerContext(req: IncomingMessage, caller: Caller): { parent: Context; links?: Link[] } {
    if (!req.headers.traceparent) return { parent: ROOT_CONTEXT };
    const sent = this.propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    if (this.trusts(caller)) return { parent: sent };
    const theirs = trace.getSpanContext(sent);
    if (!theirs) return { parent: ROOT_CONTEXT };
    const { traceId, spanId, traceFlags } = theirs;
    return { parent: ROOT_CONTEXT, links: [{ context: { traceId, spanId, traceFlags, isRemote: true } }] };
  }

  private trusts(caller: Caller): boolean {
    if (caller.viaProxy && this.trusted.proxies) return true;
    return caller.ip !== undefined && this.trusted.ranges.length > 0 && isInRanges(caller.ip, this.trusted.ranges);
  }

  endServerSpan(span: Span, method: string, route: string | undefined, status: number): void {
    if (route) {
      span.updateName(`${method} ${route}`);
      span.setAttribute('http.route', route);
    }
    span.setAttribute('http.response.status_code', status);
    // Server spans are errors for 5xx only (a 4xx is the client's).
    if (status >= 500) {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  inject(ctx: Context, headers: Record<string, string>): void {
    this.propagator.inject(ctx, headers, defaultTextMapSetter);
  }

  extract(traceparent: string | null | undefined): Context {
    if (!traceparent) return ROOT_CONTEXT;
    return this.propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
  }

  traceparentOf(span: Span): string {
    const { traceId, spanId, traceFlags } = span.spanContext();
    return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
  }

  wrapAdapter<F extends AdapterFactory>(factory: F): F {
    return tracedAdapter(factory, this);
  }

  async shutdown(): Promise<void> {
    this.removeSource();
    await this.provider.shutdown();
    this.contexts.disable();
  }
}
