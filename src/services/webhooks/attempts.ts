import { randomUUID } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { AppDeps } from '../../context.js';
import { TRANSACTION_OPTIONS } from '../../db/client.js';
import { hostOf, isPublicAddress, publicOnlyLookup } from './urls.js';
import { holdDeliveries, maxTotalAttempts, type ClaimedDelivery } from './claims.js';

// ---------------------------------------------------------------------------------------------
// 3. Attempts

export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  startedAt: Date;
  durationMs: number;
}

const RESPONSE_KEEP_BYTES = 1024;

/**
 * How an attempt ended, for metrics: `success` a 2xx; `http_error` another status; `timeout` no
 * complete answer in time; `refused` the URL is not allowed (scheme, address); `network_error`
 * no answer (a refused connection, a name that does not resolve, a reset).
 */
export type WebhookAttemptOutcome = 'success' | 'http_error' | 'timeout' | 'refused' | 'network_error';

function attemptOutcomeOf(outcome: Omit<AttemptOutcome, 'startedAt' | 'durationMs'>): WebhookAttemptOutcome {
  if (outcome.ok) return 'success';
  if (outcome.statusCode !== null) return 'http_error';
  if (outcome.error?.startsWith('timeout')) return 'timeout';
  return outcome.error?.startsWith('refused') ? 'refused' : 'network_error';
}

/** Signs and POSTs webhook bodies; one connection pool for every endpoint. */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(
    private readonly options: {
      timeoutMs: number;
      allowHttp: boolean;
      allowPrivateUrls: boolean;
      connections: number;
      /** Hears of every attempt (the service's metrics). */
      observe?: (outcome: WebhookAttemptOutcome, seconds: number) => void;
    },
  ) {
    this.agent = new Agent({
      connections: options.connections,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 10_000,
      connect: {
        timeout: options.timeoutMs,
        ...(options.allowPrivateUrls ? {} : { lookup: publicOnlyLookup }),
      },
    });
  }

  /** One attempt: 2xx is success; anything else, a timeout or a refused address is a failure. */
  /** `traceparent`: the W3C trace context sent with the attempt (the trace of its event), if any. */
  async send(delivery: Pick<ClaimedDelivery, 'id' | 'url' | 'secret' | 'body'> & { traceparent?: string | null | undefined }): Promise<AttemptOutcome> {
    const startedAt = new Date();
    const started = performance.now();
    const done = (outcome: Omit<AttemptOutcome, 'startedAt' | 'durationMs'>): AttemptOutcome => {
      const elapsed = performance.now() - started;
      this.options.observe?.(attemptOutcomeOf(outcome), elapsed / 1000);
      return { ...outcome, startedAt, durationMs: Math.round(elapsed) };
    };
    try {
      this.checkTarget(delivery.url);
      // The signed timestamp is the real time of sending: receivers check it against their clocks.
      const signature = new Webhook(delivery.secret).sign(delivery.id, startedAt, delivery.body);
      const response = await request(delivery.url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'channel-service-webhooks/1',
          'webhook-id': delivery.id,
          'webhook-timestamp': String(Math.floor(startedAt.getTime() / 1000)),
          'webhook-signature': signature,
          ...(delivery.traceparent ? { traceparent: delivery.traceparent } : {}),
        },
        body: delivery.body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const responseBody = await readPrefix(response.body, RESPONSE_KEEP_BYTES);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return done({ ok, statusCode: response.statusCode, responseBody, error: ok ? null : `HTTP ${response.statusCode}` });
    } catch (error) {
      return done({ ok: false, statusCode: null, responseBody: null, error: describe(error, this.options.timeoutMs) });
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Checks a saved URL against today's policy; names are checked at connection time by the lookup. */
  private checkTarget(raw: string): void {
    const url = new URL(raw);
    if (url.protocol !== 'https:' && !(this.options.allowHttp && url.protocol === 'http:')) {
      throw new Error(`refused: ${url.protocol} URLs are not allowed`);
    }
    const host = hostOf(url);
    if (!this.options.allowPrivateUrls && ipaddr.isValid(host) && !isPublicAddress(host)) {
      throw new Error(`refused: ${host} is not a public address`);
    }
  }
}

async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return storable(Buffer.concat(chunks).subarray(0, limit).toString('utf8'));
}

/** PostgreSQL text cannot hold NUL; a receiver's answer may. */
function storable(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD');
}

function describe(error: unknown, timeoutMs: number): string {
  return storable(explain(error, timeoutMs)).slice(0, 1_000);
}

function explain(error: unknown, timeoutMs: number): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return `timeout: no complete answer within ${timeoutMs} ms`;
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error) return `${error.message}: ${cause.message}`;
    return error.message;
  }
  return String(error);
}

/** The wait before retry number `step` (0-based) with ±10 % jitter, or null when the schedule is over. */
export function retryDelayMs(schedule: readonly number[], step: number, random = Math.random): number | null {
  const base = schedule[step];
  if (base === undefined) return null;
  return Math.round(base * (0.9 + random() * 0.2));
}

/**
 * Makes one attempt of a claimed delivery and records it with its consequence. Returns the outcome.
 * A delivery that runs out of retries without a success since it was made disables its endpoint:
 * it has then failed for the whole schedule (more than 24 hours by default); the endpoint's
 * waiting deliveries are then held. A failure that reaches maxTotalAttempts (after interruptions)
 * fails the delivery without disabling anything.
 */
export async function attemptDelivery(
  deps: AppDeps,
  claimed: ClaimedDelivery,
  logger: Logger = deps.logger,
): Promise<AttemptOutcome> {
  const { tracing } = deps;
  if (!tracing) return attemptAndRecord(deps, claimed, logger, claimed.traceparent);
  // A span per attempt, child of the trace that wrote the event (a root of its own without one);
  // the receiver gets its traceparent, and the attempt's record is written inside it.
  const parent = claimed.traceparent ? tracing.extract(claimed.traceparent) : ROOT_CONTEXT;
  const span = tracing.startSpan(
    'webhook.deliver',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'server.address': hostOf(new URL(claimed.url)),
        'webhook.delivery_id': claimed.id,
        'webhook.attempt': claimed.attempt,
      },
    },
    parent,
  );
  try {
    const outcome = await tracing.with(trace.setSpan(parent, span), () => attemptAndRecord(deps, claimed, logger, tracing.traceparentOf(span)));
    if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode);
    if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? 'failed' });
    return outcome;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}

async function attemptAndRecord(deps: AppDeps, claimed: ClaimedDelivery, logger: Logger, traceparent: string | null): Promise<AttemptOutcome> {
  const outcome = await deps.webhookSender.send({ ...claimed, traceparent });
  if (outcome.ok) {
    // Batched with the other successes of this instance (outcomes.ts): one statement for many.
    await deps.webhookOutcomes.success(claimed, outcome);
    return outcome;
  }
  const now = deps.clock();
  await deps.db.prisma.$transaction(async (tx) => {
    await tx.webhookAttempt.create({
      data: {
        id: randomUUID(),
        deliveryId: claimed.id,
        attempt: claimed.attempt,
        startedAt: outcome.startedAt,
        durationMs: outcome.durationMs,
        statusCode: outcome.statusCode,
        responseBody: outcome.responseBody,
        error: outcome.error,
      },
    });
    const mine = { id: claimed.id, leaseId: claimed.leaseId };
    const { retrySchedule } = deps.config.webhooks;
    const scheduled = retryDelayMs(retrySchedule, claimed.scheduleStep);
    const attemptsOver =
      (claimed.maxAttempts !== null && claimed.attempt >= claimed.maxAttempts) ||
      claimed.attempt - claimed.attemptsAtReplay >= maxTotalAttempts(retrySchedule);
    const delay = attemptsOver ? null : scheduled;
    if (delay !== null) {
      await tx.webhookDelivery.updateMany({
        where: mine,
        data: { nextAttemptAt: new Date(now.getTime() + delay), scheduleStep: { increment: 1 }, leaseId: null },
      });
      return;
    }
    const { count } = await tx.webhookDelivery.updateMany({ where: mine, data: { status: 'failed', leaseId: null } });
    // Only a schedule run out disables (not a ping, nor the cap on interrupted attempts).
    if (count && claimed.maxAttempts === null && scheduled === null) {
      const disabled = await tx.webhookEndpoint.updateMany({
        where: {
          id: claimed.endpointId,
          disabledAt: null,
          OR: [{ lastSuccessAt: null }, { lastSuccessAt: { lt: claimed.createdAt } }],
          // last_success_at is written at most once a second (outcomes.ts): a success it does not
          // show yet (or lost in a crash) is still a delivery delivered since this one was made.
          deliveries: { none: { status: 'delivered', deliveredAt: { gte: claimed.createdAt } } },
        },
        data: {
          disabledAt: now,
          disabledReason: `delivery ${claimed.id} failed on every attempt of its retry schedule`,
          updatedAt: now,
        },
      });
      if (disabled.count) {
        const held = await holdDeliveries(tx, claimed.endpointId, now);
        logger.warn({ endpointId: claimed.endpointId, deliveryId: claimed.id, held }, 'webhook endpoint disabled');
      }
    }
  }, TRANSACTION_OPTIONS);
  return outcome;
}
