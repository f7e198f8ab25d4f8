import {
  BrokenCircuitError,
  circuitBreaker,
  CircuitState,
  ConsecutiveBreaker,
  ExponentialBackoff,
  handleWhen,
  retry,
  type CircuitBreakerPolicy,
  type RetryPolicy,
} from 'cockatiel';
import type { Logger } from 'pino';
import { Pool, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { answers, IMAGE_PATH } from './answers.js';
import { UpstreamError } from '../services/kernel/index.js';
import type {
  AvailabilityBatchRequest,
  AvailabilityBatchResponse,
  AvailabilityRequest,
  AvailabilityResponse,
  BookRequest,
  ChangeQuoteRequest,
  ChangeQuoteResponse,
  ModifyRequest,
  PriceCheckRequest,
  PriceCheckResponse,
  PropertyBatch,
  PropertyPage,
  Scenario,
  UpstreamBooking,
  UpstreamErrorBody,
  UpstreamProperty,
} from './protocol.js';

/**
 * The inventory provider over HTTP (undici keep-alive pool). Every call has a deadline, follows
 * the caller's AbortSignal and (outside sandbox scenarios) goes through one circuit breaker, so a
 * dead provider fails fast; idempotent calls are retried with jittered back-off. Answers are
 * checked against the protocol before use. Any failure reaches callers as 502
 * UPSTREAM_ERROR; answers the protocol defines (404, 409) come back as values.
 */

export interface UpstreamOptions {
  baseUrl: string;
  connections: number;
  deadlines: { content: number; search: number; booking: number };
  breaker: { threshold: number; cooldownMs: number };
  logger: Logger;
  /** Hears of every logical call (the service's metrics). */
  observer?: UpstreamObserver | undefined;
  /** Tracing's hook (src/telemetry/tracing.ts): a span per attempt and its traceparent on the request; absent when tracing is off. */
  tracer?: UpstreamTracer | undefined;
}

/** What a provider call is, as metrics label it. */
export type ProviderCallKind =
  | 'list_properties'
  | 'get_property'
  | 'get_properties'
  | 'availability'
  | 'availability_batch'
  | 'price_check'
  | 'book'
  | 'get_booking'
  | 'cancel_booking'
  | 'quote_change'
  | 'modify_booking'
  | 'abort_modification'
  | 'image';

/**
 * How a call ended: `ok` a 2xx answer; `declined` an answer the protocol defines (not found, sold
 * out, price mismatch); `rejected` an unexpected 4xx (our request was wrong); `error` a provider
 * fault (network, 5xx, an answer that does not fit); `timeout` no answer within the deadline;
 * `circuit_open` not sent, the breaker is open; `cancelled` the caller went away.
 */
export type ProviderCallOutcome = 'ok' | 'declined' | 'rejected' | 'error' | 'timeout' | 'circuit_open' | 'cancelled';

export interface UpstreamObserver {
  providerCall(kind: ProviderCallKind, outcome: ProviderCallOutcome, seconds: number): void;
}

/** What the client needs of tracing: one span per attempt, the headers that carry it, its end. */
export interface UpstreamTracer {
  attempt(method: string, template: string, origin: string, path: string): {
    headers(headers: Record<string, string>): void;
    end(status: number | undefined, error?: string): void;
  };
}

/**
 * The circuit breaker a call counts on: `partners` (the default) is the one every partner's
 * searches, bookings and content reads share; `public` is the public image route's (no credential:
 * a stranger forcing failures there opens only that one); `downloads` is the content files' (a
 * burst of large downloads failing or timing out leaves the partners' calls alone).
 */
export type Circuit = 'partners' | 'public' | 'downloads';

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** The breaker the call counts on (default `partners`). */
  circuit?: Circuit | undefined;
  /** A sandbox scenario passed on to the provider (X-Test-Scenario). */
  scenario?: Scenario | undefined;
  /** The request the call serves: its lines carry the request's id (and trace id). The service's logger otherwise. */
  log?: { readonly logger: Logger } | undefined;
}

type Deadline = keyof UpstreamOptions['deadlines'];

interface Call {
  kind: ProviderCallKind;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  deadline: Deadline;
  /** Safe to send twice: reads, and calls the provider de-duplicates (a booking's reference). */
  idempotent: boolean;
  /** Statuses that are answers, not failures. */
  expected?: number[];
  /** The shape of a 2xx answer. */
  answer: z.ZodType;
  /** A 2xx answer is bytes of these content types (an image), not JSON: read whole, up to `maxBytes`. */
  binary?: { type: RegExp; maxBytes: number };
}

/** An image as the provider serves it. */
export interface ImageBytes {
  bytes: Buffer;
  /** As the provider sent it (image/png). */
  contentType: string;
}

/** The largest image the service reads from the provider; a larger one is a provider fault. */
export const MAX_IMAGE_BYTES = 8 * 1024 * 1024;

/** A failure of the provider itself (network, deadline, 5xx, nonsense), as opposed to an answer. */
class ProviderFault extends Error {
  override name = 'ProviderFault';
  constructor(
    message: string,
    readonly retryable: boolean,
    /** The provider's status, when it answered one; whether no answer came within the deadline (for metrics). */
    readonly detail: { status?: number; timeout?: boolean } = {},
  ) {
    super(message);
  }
}

/**
 * A provider path as a template, for span names: ids and references become `{id}`, image paths
 * `/images/{path}` (`/bookings/BK-1/cancel` is `/bookings/{id}/cancel`).
 */
export function templateOf(path: string): string {
  const bare = path.split('?')[0]!;
  if (bare.startsWith('/images/')) return '/images/{path}';
  return bare.replace(/\/(bookings|modifications)\/[^/]+/g, '/$1/{id}').replace(/\/\d+(?=\/|$)/g, '/{id}');
}

export type BookOutcome =
  | { ok: true; booking: UpstreamBooking; created: boolean }
  | { ok: false; reason: 'sold_out' | 'price_mismatch' | 'not_found' };

export type ModifyOutcome =
  | { ok: true; booking: UpstreamBooking }
  | { ok: false; reason: 'sold_out' | 'price_mismatch' | 'not_modifiable' | 'aborted' | 'not_found' };

export class UpstreamClient {
  private readonly pool: Pool;
  private readonly scenarioPool: Pool;
  /** One breaker per circuit, each with the same threshold and cooldown (UPSTREAM_BREAKER_*). */
  private readonly breakers: Record<Circuit, CircuitBreakerPolicy>;
  private readonly retry: RetryPolicy;
  private readonly options: UpstreamOptions;
  /** Calls sent over the wire, for tests and metrics. */
  calls = 0;

  constructor(options: UpstreamOptions) {
    this.options = options;
    const url = new URL(options.baseUrl);
    this.basePath = url.pathname.replace(/\/$/, '');
    this.pool = new Pool(url.origin, {
      connections: options.connections,
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      connect: { timeout: Math.min(options.deadlines.content, 5_000) },
    });
    // Sandbox scenario calls (forced errors and hangs) get a few connections of their own.
    this.scenarioPool = new Pool(url.origin, { connections: 8, keepAliveTimeout: 10_000 });
    const breakerOf = (circuit: Circuit) => {
      const breaker = circuitBreaker(handleWhen((e) => e instanceof ProviderFault), {
        halfOpenAfter: options.breaker.cooldownMs,
        breaker: new ConsecutiveBreaker(options.breaker.threshold),
      });
      breaker.onStateChange((state) =>
        options.logger.warn({ upstream: url.origin, breaker: circuit, circuit: CircuitState[state] }, 'upstream circuit changed'),
      );
      return breaker;
    };
    this.breakers = { partners: breakerOf('partners'), public: breakerOf('public'), downloads: breakerOf('downloads') };
    this.retry = retry(handleWhen((e) => e instanceof ProviderFault && e.retryable), {
      maxAttempts: 2,
      // Decorrelated jitter (cockatiel's default generator), so retries of many callers spread out.
      // Short waits: a call's deadline covers its retries, and a wait cannot be cut short.
      backoff: new ExponentialBackoff({ initialDelay: 50, maxDelay: 200 }),
    });
  }

  private readonly basePath: string;
  private get origin(): string {
    return new URL(this.options.baseUrl).origin;
  }

  /** The state of the partners' breaker (the one /metrics and /readyz report). */
  get circuit(): 'closed' | 'open' | 'half_open' | 'isolated' {
    return this.circuitOf('partners');
  }

  circuitOf(circuit: Circuit): 'closed' | 'open' | 'half_open' | 'isolated' {
    return (['closed', 'open', 'half_open', 'isolated'] as const)[this.breakers[circuit].state];
  }

  /** A page of the catalog; null when the provider refuses the cursor (not one it issued). */
  async listProperties(
    query: { cursor?: string | undefined; limit: number; updatedSince?: Date | undefined; includeRooms?: boolean },
    options: CallOptions = {},
  ): Promise<PropertyPage | null> {
    const params = new URLSearchParams({ limit: String(query.limit) });
    if (query.cursor) params.set('cursor', query.cursor);
    if (query.updatedSince) params.set('updated_since', query.updatedSince.toISOString());
    if (query.includeRooms) params.set('include', 'rooms');
    const call: Call = {
      kind: 'list_properties', method: 'GET',
      path: `/properties?${params}`,
      deadline: 'content',
      idempotent: true,
      expected: query.cursor ? [400] : [],
      answer: answers.propertyPage,
    };
    const { status, body } = await this.send<PropertyPage>(call, options);
    return status === 400 ? null : body;
  }

  async getProperty(id: number, options: CallOptions = {}): Promise<UpstreamProperty | null> {
    const call: Call = { kind: 'get_property', method: 'GET', path: `/properties/${id}`, deadline: 'content', idempotent: true, expected: [404], answer: answers.property };
    const { status, body } = await this.send<UpstreamProperty>(call, options);
    return status === 404 ? null : body;
  }

  getProperties(ids: number[], options: CallOptions = {}): Promise<PropertyBatch> {
    return this.json({ kind: 'get_properties', method: 'POST', path: '/properties/batch', body: { ids }, deadline: 'content', idempotent: true, answer: answers.propertyBatch }, options);
  }

  availability(request: AvailabilityRequest, options: CallOptions = {}): Promise<AvailabilityResponse> {
    return this.json({ kind: 'availability', method: 'POST', path: '/availability', body: request, deadline: 'search', idempotent: true, answer: answers.availability }, options);
  }

  /**
   * Several availability searches (each its own stay) in one round trip, with the deadline, retries
   * and breaker of a search. An item the provider would not price comes back as an error in its
   * slot; the caller decides what that means for its own caller.
   */
  availabilityBatch(request: AvailabilityBatchRequest, options: CallOptions = {}): Promise<AvailabilityBatchResponse> {
    return this.json(
      {
        kind: 'availability_batch', method: 'POST',
        path: '/availability/batch',
        body: request,
        deadline: 'search',
        idempotent: true,
        answer: answers.availabilityBatch(request.items.length),
      },
      options,
    );
  }

  async priceCheck(request: PriceCheckRequest, options: CallOptions = {}): Promise<PriceCheckResponse | null> {
    const call: Call = { kind: 'price_check', method: 'POST', path: '/price-check', body: request, deadline: 'search', idempotent: true, expected: [404], answer: answers.priceCheck };
    const { status, body } = await this.send<PriceCheckResponse>(call, options);
    return status === 404 ? null : body;
  }

  /** Idempotent on the reference, so a booking whose answer was lost can be sent again safely. */
  async book(request: BookRequest, options: CallOptions = {}): Promise<BookOutcome> {
    const call: Call = { kind: 'book', method: 'POST', path: '/bookings', body: request, deadline: 'booking', idempotent: true, expected: [404, 409], answer: answers.booking };
    const { status, body } = await this.send<UpstreamBooking | UpstreamErrorBody>(call, options);
    if (status === 404) return { ok: false, reason: 'not_found' };
    if (status === 409) {
      const code = (body as UpstreamErrorBody).error?.code;
      return { ok: false, reason: code === 'price_mismatch' ? 'price_mismatch' : 'sold_out' };
    }
    return { ok: true, booking: body as UpstreamBooking, created: status === 201 };
  }

  async getBooking(reference: string, options: CallOptions = {}): Promise<UpstreamBooking | null> {
    const call: Call = { kind: 'get_booking', method: 'GET', path: `/bookings/${encodeURIComponent(reference)}`, deadline: 'booking', idempotent: true, expected: [404], answer: answers.booking };
    const { status, body } = await this.send<UpstreamBooking>(call, options);
    return status === 404 ? null : body;
  }

  /** Null when the provider does not know the booking; `not_cancellable` when its state forbids it. */
  async cancelBooking(reference: string, options: CallOptions = {}): Promise<UpstreamBooking | 'not_cancellable' | null> {
    const call: Call = {
      kind: 'cancel_booking', method: 'POST',
      path: `/bookings/${encodeURIComponent(reference)}/cancel`,
      deadline: 'booking',
      idempotent: true,
      expected: [404, 409],
      answer: answers.booking,
    };
    const { status, body } = await this.send<UpstreamBooking>(call, options);
    if (status === 404) return null;
    return status === 409 ? 'not_cancellable' : body;
  }

  /**
   * New dates priced for a booking (its own rooms count as free); null when the provider does not
   * know the booking, `not_modifiable` once its state forbids a change. A read: retried.
   */
  async quoteChange(reference: string, request: ChangeQuoteRequest, options: CallOptions = {}): Promise<ChangeQuoteResponse | 'not_modifiable' | null> {
    const call: Call = {
      kind: 'quote_change', method: 'POST',
      path: `/bookings/${encodeURIComponent(reference)}/change-quote`,
      body: request,
      deadline: 'search',
      idempotent: true,
      expected: [404, 409],
      answer: answers.changeQuote,
    };
    const { status, body } = await this.send<ChangeQuoteResponse>(call, options);
    if (status === 404) return null;
    return status === 409 ? 'not_modifiable' : body;
  }

  /**
   * Moves a booking to new dates. The provider de-duplicates on `modification_id`, so the call is
   * retried like a booking; refusals come back as values.
   */
  async modifyBooking(reference: string, request: ModifyRequest, options: CallOptions = {}): Promise<ModifyOutcome> {
    const call: Call = {
      kind: 'modify_booking', method: 'POST',
      path: `/bookings/${encodeURIComponent(reference)}/modify`,
      body: request,
      deadline: 'booking',
      idempotent: true,
      expected: [404, 409],
      answer: answers.booking,
    };
    const { status, body } = await this.send<UpstreamBooking | UpstreamErrorBody>(call, options);
    if (status === 404) return { ok: false, reason: 'not_found' };
    if (status === 409) {
      const code = (body as UpstreamErrorBody).error?.code;
      const reason = code === 'price_mismatch' || code === 'not_modifiable' || code === 'sold_out' ? code : code === 'modification_aborted' ? 'aborted' : 'sold_out';
      return { ok: false, reason };
    }
    return { ok: true, booking: body as UpstreamBooking };
  }

  /**
   * The compensation of modifyBooking: undoes the change if it applied and makes the provider
   * refuse it for ever (a late duplicate cannot apply). Idempotent. Null: unknown booking.
   */
  async abortModification(reference: string, modificationId: string, options: CallOptions = {}): Promise<UpstreamBooking | null> {
    const call: Call = {
      kind: 'abort_modification', method: 'POST',
      path: `/bookings/${encodeURIComponent(reference)}/modifications/${encodeURIComponent(modificationId)}/abort`,
      deadline: 'booking',
      idempotent: true,
      expected: [404],
      answer: answers.booking,
    };
    const { status, body } = await this.send<UpstreamBooking>(call, options);
    return status === 404 ? null : body;
  }

  /**
   * An image at its provider path (`/images/{property_id}/{image_id}/{size}.png`, as the answers'
   * image links give it; no other path is fetched): its bytes and content type (image/png), or
   * undefined when the provider has no such image (404). A read with the content deadline and
   * retries of any other content call, on the breaker the caller names (the public route's own).
   */
  async getImage(path: string, options: CallOptions = {}): Promise<ImageBytes | undefined> {
    if (!IMAGE_PATH.test(path)) throw new TypeError(`not a provider image path: ${path}`);
    const call: Call = {
      kind: 'image',
      method: 'GET',
      path,
      deadline: 'content',
      idempotent: true,
      expected: [404],
      answer: answers.error,
      binary: { type: /^image\/png(;|$)/i, maxBytes: MAX_IMAGE_BYTES },
    };
    const { status, body } = await this.send<ImageBytes>(call, options);
    return status === 404 ? undefined : body;
  }

  /** For /readyz: answers within the content deadline, never throws; bypasses the breaker. */
  async ping(): Promise<boolean> {
    try {
      const res = await this.pool.request({
        method: 'GET',
        path: `${this.basePath}/health`,
        signal: AbortSignal.timeout(Math.min(this.options.deadlines.content, 2_000)),
      });
      await res.body.dump();
      return res.statusCode === 200;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.destroy(), this.scenarioPool.destroy()]);
  }

  private async json<T>(call: Call, options: CallOptions): Promise<T> {
    return (await this.send<T>(call, options)).body;
  }

  /**
   * One logical call: a deadline across all attempts, retries for idempotent calls, the breaker
   * around each attempt (so it counts attempts). Calls under a sandbox scenario skip both and use
   * a pool of their own, so a partner forcing failures or hangs can neither open the circuit nor
   * hold the connections everyone else needs.
   */
  private async send<T>(call: Call, options: CallOptions): Promise<{ status: number; body: T }> {
    const started = performance.now();
    const deadlineMs = this.options.deadlines[call.deadline];
    const deadline = AbortSignal.timeout(deadlineMs);
    const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
    try {
      if (options.scenario) return this.observed(call, started, await this.attempt<T>(this.scenarioPool, call, options, signal, deadlineMs));
      const breaker = this.breakers[options.circuit ?? 'partners'];
      const guarded = () => {
        // Past the deadline (say, after a back-off): give up here, outside the breaker, which
        // must not count an attempt that was never sent.
        if (signal.aborted) throw this.abortFault(options, deadlineMs);
        // While the circuit is not closed, the caller leaving must not end the trial call: the
        // breaker would take that as a success. The trial runs to its own deadline.
        const trial = breaker.state === CircuitState.Closed ? signal : deadline;
        return breaker.execute(() => this.attempt<T>(this.pool, call, options, trial, deadlineMs));
      };
      return this.observed(call, started, call.idempotent ? await this.retry.execute(guarded, signal) : await guarded());
    } catch (error) {
      this.options.observer?.providerCall(call.kind, outcomeOf(error, options), (performance.now() - started) / 1000);
      if (error instanceof BrokenCircuitError) {
        throw new UpstreamError('The inventory provider is unavailable; retry shortly');
      }
      if (error instanceof ProviderFault) {
        (options.log?.logger ?? this.options.logger).warn({ path: call.path.split('?')[0], reason: error.message }, 'upstream call failed');
        throw new UpstreamError();
      }
      throw error;
    }
  }

  /** An answer (2xx, or a status the call expects) told to the observer. */
  private observed<A extends { status: number }>(call: Call, started: number, answer: A): A {
    this.options.observer?.providerCall(call.kind, answer.status < 300 ? 'ok' : 'declined', (performance.now() - started) / 1000);
    return answer;
  }

  /** One attempt; with tracing on, in a span of its own whose traceparent the provider receives. */
  private async attempt<T>(pool: Pool, call: Call, options: CallOptions, signal: AbortSignal, deadlineMs: number) {
    const tracer = this.options.tracer;
    if (!tracer) return this.attemptOnce<T>(pool, call, options, signal, deadlineMs, undefined);
    const span = tracer.attempt(call.method, templateOf(call.path), this.origin, this.basePath + call.path);
    try {
      const answer = await this.attemptOnce<T>(pool, call, options, signal, deadlineMs, span);
      span.end(answer.status);
      return answer;
    } catch (error) {
      span.end(error instanceof ProviderFault ? error.detail.status : undefined, error instanceof Error ? error.message : String(error));
      throw error;
    }
  }

  private async attemptOnce<T>(
    pool: Pool,
    call: Call,
    options: CallOptions,
    signal: AbortSignal,
    deadlineMs: number,
    span: ReturnType<UpstreamTracer['attempt']> | undefined,
  ): Promise<{ status: number; body: T }> {
    if (signal.aborted) throw this.abortFault(options, deadlineMs);
    this.calls++;
    const headers: Record<string, string> = { accept: call.binary ? 'image/png' : 'application/json' };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (options.scenario) headers['x-test-scenario'] = options.scenario;
    span?.headers(headers);
    let res;
    try {
      res = await pool.request({
        method: call.method,
        path: this.basePath + call.path,
        headers,
        body: call.body === undefined ? null : JSON.stringify(call.body),
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw this.abortFault(options, deadlineMs);
      throw new ProviderFault(`network: ${(error as Error).message}`, true);
    }
    if (res.statusCode >= 500) {
      await res.body.dump().catch(() => undefined);
      throw new ProviderFault(`status ${res.statusCode}`, true, { status: res.statusCode });
    }
    if (call.binary && res.statusCode < 300) return { status: res.statusCode, body: (await this.readBinary(res, call.binary, options, signal, deadlineMs)) as T };
    let body: unknown;
    try {
      body = await res.body.json();
    } catch (error) {
      if (signal.aborted) throw this.abortFault(options, deadlineMs);
      throw new ProviderFault(`unreadable answer (${res.statusCode}): ${(error as Error).message}`, false);
    }
    if (res.statusCode >= 300 && !call.expected?.includes(res.statusCode)) {
      // A 4xx we did not expect means our request was wrong, not that the provider is down, so it
      // is not retried (the breaker sees the provider answering).
      (options.log?.logger ?? this.options.logger).error({ path: call.path.split('?')[0], status: res.statusCode, body }, 'upstream refused a request');
      throw new UpstreamError('The inventory provider refused the request');
    }
    const schema = res.statusCode < 300 ? call.answer : answers.error;
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      throw new ProviderFault(`answer (${res.statusCode}) does not fit the protocol: ${parsed.error.issues[0]?.message ?? ''}`, false);
    }
    return { status: res.statusCode, body: parsed.data as T };
  }

  /** A binary answer read whole, refused when it is not of the expected type or larger than allowed. */
  private async readBinary(res: Dispatcher.ResponseData, binary: NonNullable<Call['binary']>, options: CallOptions, signal: AbortSignal, deadlineMs: number): Promise<ImageBytes> {
    const contentType = String(res.headers['content-type'] ?? '');
    const declared = Number(res.headers['content-length'] ?? 0);
    if (!binary.type.test(contentType) || declared > binary.maxBytes) {
      await res.body.dump().catch(() => undefined);
      throw new ProviderFault(`answer (${res.statusCode}) of type "${contentType}" and ${declared || 'unknown'} bytes does not fit the protocol`, false);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        // Leaving the loop destroys the rest of the answer.
        if (size > binary.maxBytes) throw new ProviderFault(`answer (${res.statusCode}) is over ${binary.maxBytes} bytes`, false);
        chunks.push(chunk);
      }
    } catch (error) {
      if (error instanceof ProviderFault) throw error;
      if (signal.aborted) throw this.abortFault(options, deadlineMs);
      throw new ProviderFault(`unreadable answer (${res.statusCode}): ${(error as Error).message}`, false);
    }
    return { bytes: Buffer.concat(chunks, size), contentType };
  }

  private abortFault(options: CallOptions, deadlineMs: number): Error {
    // The caller went away: not the provider's fault, nothing to retry or count.
    if (options.signal?.aborted) return new UpstreamError('The request was cancelled');
    return new ProviderFault(`no answer within ${deadlineMs} ms`, false, { timeout: true });
  }
}

/** How a failed call ended, for the observer (before send() turns it into an UpstreamError). */
function outcomeOf(error: unknown, options: CallOptions): ProviderCallOutcome {
  if (error instanceof BrokenCircuitError) return 'circuit_open';
  if (error instanceof ProviderFault) return error.detail.timeout ? 'timeout' : 'error';
  if (options.signal?.aborted) return 'cancelled';
  return error instanceof UpstreamError ? 'rejected' : 'error';
}
