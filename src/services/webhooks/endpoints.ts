import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ConflictError, currentTraceparent, NotFoundError, principalOf, storableText } from '../kernel/index.js';
import type { RequestContext } from '../../context.js';
import { TRANSACTION_OPTIONS } from '../../db/client.js';
import { Prisma, type WebhookAttempt, type WebhookDelivery, type WebhookEndpoint } from '../../generated/prisma/client.js';
import { BOOKING_EVENT_TYPES, isUuid, type BookingEventType } from '../bookings/index.js';
import type { Scope } from '../access/index.js';
import { pageOf, type Page } from '../search/index.js';
import { attemptDelivery } from './attempts.js';
import { holdDeliveries, leaseMs, releaseHeld } from './claims.js';
import { PING_EVENT_TYPE, webhookBody } from './fanOut.js';
import { validateWebhookUrl } from './urls.js';

/**
 * Webhook subscriptions of a channel (docs/spec/DECISIONS.md, Webhooks; scope channels:write): create (the
 * signing secret is returned once), list, read, change, delete; the delivery log, a test ping and
 * the replay of a delivery. Shared by REST /channel/v1/webhooks and the GraphQL fields.
 */

export const MAX_WEBHOOKS_PER_CHANNEL = 20;

/**
 * The scopes of the operations that read or resend deliveries (the log, one delivery, a replay):
 * their bodies are booking records with the guests' details, so they need what reading bookings
 * needs as well as what managing webhooks needs. The other webhook operations (a ping's body holds
 * only the webhook id) need channels:write alone.
 */
export const DELIVERY_SCOPES = ['channels:write', 'reservations:read'] as const satisfies readonly Scope[];

export const webhookRules = {
  url: z.string().trim().min(1, 'must not be empty').max(2048),
  events: z
    .array(z.enum(BOOKING_EVENT_TYPES))
    .min(1, 'name at least one event type')
    .refine((list) => new Set(list).size === list.length, 'each event type once'),
  // Refused here rather than failing the write: NUL, lone surrogates (src/services/kernel/text.ts).
  description: storableText(z.string().trim().max(200)).nullable(),
};

export interface WebhookInput {
  url: string;
  /** Omitted: every booking event type. */
  events?: BookingEventType[] | undefined;
  description?: string | null | undefined;
}

export interface WebhookChange {
  url?: string | undefined;
  events?: BookingEventType[] | undefined;
  description?: string | null | undefined;
  /** true resumes a disabled endpoint (held deliveries go out); false holds its deliveries. */
  enabled?: boolean | undefined;
}

/** A webhook as partners read it: never with its secret. */
export type WebhookView = Omit<WebhookEndpoint, 'secret'> & { status: 'active' | 'disabled' };
/** held: waiting for its disabled webhook to be enabled (then pending, due at once). */
export type DeliveryStatus = 'pending' | 'held' | 'delivered' | 'failed';
export type DeliveryView = Omit<WebhookDelivery, 'status' | 'leaseId'> & {
  status: DeliveryStatus;
  attemptLog: WebhookAttempt[];
};

/** What a partner sees of an endpoint (never its secret). */
export function view(endpoint: WebhookEndpoint): WebhookView {
  const { secret: _secret, ...shown } = endpoint;
  return { ...shown, status: endpoint.disabledAt ? 'disabled' : 'active' };
}

/**
 * The attempts a read of a delivery shows: its newest (replays add attempts without end, so the
 * log is bounded; `attempts` counts them all). 50 hold more than one replay's allowance of the
 * default schedule (2 x (7 + 1)).
 */
export const ATTEMPT_LOG_SHOWN = 50;

/** A delivery's newest attempts, newest first (deliveryView puts them first first): what every read of a delivery includes. */
export const ATTEMPT_LOG = {
  attemptLog: { orderBy: [{ attempt: 'desc' }, { startedAt: 'desc' }], take: ATTEMPT_LOG_SHOWN },
} satisfies Prisma.WebhookDeliveryInclude;

export function deliveryView(delivery: WebhookDelivery & { attemptLog: WebhookAttempt[] }): DeliveryView {
  const { leaseId: _lease, ...rest } = delivery;
  return { ...rest, attemptLog: [...delivery.attemptLog].reverse(), status: delivery.status as DeliveryStatus };
}

/** The signing secret: Standard Webhooks' `whsec_` + base64 of 32 random bytes. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function urlPolicy(ctx: RequestContext) {
  const { allowHttp, allowPrivateUrls } = ctx.deps.config.webhooks;
  return { allowHttp, allowPrivate: allowPrivateUrls };
}

export async function createWebhook(ctx: RequestContext, input: WebhookInput): Promise<{ webhook: WebhookView; secret: string }> {
  const { channelId } = principalOf(ctx);
  const url = await validateWebhookUrl(input.url, urlPolicy(ctx));
  const now = ctx.deps.clock();
  const secret = newSecret();
  const endpoint = await ctx.deps.db.prisma.$transaction(async (tx) => {
    // The channel row is the lock that keeps concurrent creations within the limit.
    await tx.$queryRaw`SELECT id FROM channels WHERE id = ${channelId}::uuid FOR UPDATE`;
    const count = await tx.webhookEndpoint.count({ where: { channelId } });
    if (count >= MAX_WEBHOOKS_PER_CHANNEL) {
      throw new ConflictError('WEBHOOK_LIMIT_REACHED', `A channel may have at most ${MAX_WEBHOOKS_PER_CHANNEL} webhooks`, {
        limit: MAX_WEBHOOKS_PER_CHANNEL,
      });
    }
    return tx.webhookEndpoint.create({
      data: {
        id: randomUUID(),
        channelId,
        url,
        events: input.events ?? [...BOOKING_EVENT_TYPES],
        description: input.description?.trim() || null,
        secret,
        createdAt: now,
        updatedAt: now,
      },
    });
  }, TRANSACTION_OPTIONS);
  return { webhook: view(endpoint), secret };
}

export async function listWebhooks(ctx: RequestContext): Promise<WebhookView[]> {
  const endpoints = await ctx.deps.db.prisma.webhookEndpoint.findMany({
    where: { channelId: principalOf(ctx).channelId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return endpoints.map(view);
}

/** The channel's webhook, or 404 (another channel's webhook is unknown, never forbidden). */
async function ownEndpoint(ctx: RequestContext, id: string): Promise<WebhookEndpoint> {
  const endpoint = isUuid(id)
    ? await ctx.deps.db.prisma.webhookEndpoint.findFirst({ where: { id, channelId: principalOf(ctx).channelId } })
    : null;
  if (!endpoint) throw new NotFoundError('No such webhook');
  return endpoint;
}

export async function getWebhook(ctx: RequestContext, id: string): Promise<WebhookView> {
  return view(await ownEndpoint(ctx, id));
}

export async function updateWebhook(ctx: RequestContext, id: string, change: WebhookChange): Promise<WebhookView> {
  const endpoint = await ownEndpoint(ctx, id);
  const url = change.url === undefined ? undefined : await validateWebhookUrl(change.url, urlPolicy(ctx));
  const now = ctx.deps.clock();
  const where = { id: endpoint.id, channelId: endpoint.channelId };
  const { updated, released } = await ctx.deps.db.prisma.$transaction(async (tx) => {
    // FOR UPDATE: a fan-out in progress read the row FOR KEY SHARE and writes this endpoint's
    // deliveries as it found it (pending or held); waiting for it means the moves below see them.
    const [row] = await tx.$queryRaw<{ disabled_at: Date | null }[]>`
      SELECT disabled_at FROM webhook_endpoints WHERE id = ${where.id}::uuid AND channel_id = ${where.channelId}::uuid
      FOR UPDATE`;
    // Deleted since it was read.
    if (!row) throw new NotFoundError('No such webhook');
    const disabling = change.enabled === false && !row.disabled_at;
    const toggle =
      change.enabled === true
        ? { disabledAt: null, disabledReason: null }
        : disabling
          ? { disabledAt: now, disabledReason: 'disabled by the channel' }
          : {};
    const { count } = await tx.webhookEndpoint.updateMany({
      where,
      data: {
        ...(url !== undefined && { url }),
        ...(change.events !== undefined && { events: change.events }),
        ...(change.description !== undefined && { description: change.description?.trim() || null }),
        ...toggle,
        updatedAt: now,
      },
    });
    if (!count) throw new NotFoundError('No such webhook');
    if (disabling) await holdDeliveries(tx, endpoint.id, now);
    const released = change.enabled === true ? await releaseHeld(tx, endpoint.id, now) : 0;
    return { updated: await tx.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } }), released };
  }, TRANSACTION_OPTIONS);
  if (released || (change.enabled === true && endpoint.disabledAt)) ctx.deps.dispatcher.wake();
  return view(updated);
}

/** Deletes the webhook with its delivery log; deliveries not yet made are dropped. */
export async function deleteWebhook(ctx: RequestContext, id: string): Promise<void> {
  const endpoint = await ownEndpoint(ctx, id);
  const { count } = await ctx.deps.db.prisma.webhookEndpoint.deleteMany({ where: { id: endpoint.id, channelId: endpoint.channelId } });
  // Deleted by another request in between.
  if (!count) throw new NotFoundError('No such webhook');
}

export interface DeliveryFilters {
  status?: DeliveryStatus | undefined;
  page: number;
  perPage: number;
}

/** The delivery log of a webhook, newest first, each delivery with its attempts. */
export async function listDeliveries(ctx: RequestContext, webhookId: string, filters: DeliveryFilters): Promise<Page<DeliveryView>> {
  const endpoint = await ownEndpoint(ctx, webhookId);
  const where = { endpointId: endpoint.id, ...(filters.status && { status: filters.status }) };
  const { prisma } = ctx.deps.db;
  const [total, items] = await Promise.all([
    prisma.webhookDelivery.count({ where }),
    prisma.webhookDelivery.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: (filters.page - 1) * filters.perPage,
      take: filters.perPage,
      include: ATTEMPT_LOG,
    }),
  ]);
  return pageOf(items.map(deliveryView), total, filters.page, filters.perPage);
}

async function ownDelivery(ctx: RequestContext, endpoint: WebhookEndpoint, deliveryId: string): Promise<DeliveryView> {
  const delivery = isUuid(deliveryId)
    ? await ctx.deps.db.prisma.webhookDelivery.findFirst({
        where: { id: deliveryId, endpointId: endpoint.id },
        include: ATTEMPT_LOG,
      })
    : null;
  if (!delivery) throw new NotFoundError('No such delivery of this webhook');
  return deliveryView(delivery);
}

export async function getDelivery(ctx: RequestContext, webhookId: string, deliveryId: string): Promise<DeliveryView> {
  return ownDelivery(ctx, await ownEndpoint(ctx, webhookId), deliveryId);
}

/**
 * Sends a finished delivery again, with the same `webhook-id` and body, and a fresh retry
 * schedule (and a fresh allowance of attempts). A delivery still pending is already being
 * retried: 409. A held one waits for its webhook to be enabled, which sends it: 409. So is one of
 * a disabled webhook, which would hold it: enable the webhook first.
 */
export async function replayDelivery(ctx: RequestContext, webhookId: string, deliveryId: string): Promise<DeliveryView> {
  const endpoint = await ownEndpoint(ctx, webhookId);
  const delivery = await ownDelivery(ctx, endpoint, deliveryId);
  if (delivery.status === 'held') throw deliveryHeld();
  if (endpoint.disabledAt) {
    throw new ConflictError('WEBHOOK_DISABLED', 'The webhook is disabled; enable it before replaying deliveries');
  }
  const { count } = await ctx.deps.db.prisma.webhookDelivery.updateMany({
    where: { id: delivery.id, status: { in: ['delivered', 'failed'] } },
    data: {
      status: 'pending',
      nextAttemptAt: ctx.deps.clock(),
      scheduleStep: 0,
      attemptsAtReplay: delivery.attempts,
      leaseId: null,
      deliveredAt: null,
      // A replayed ping gets one more attempt.
      ...(delivery.maxAttempts !== null && { maxAttempts: delivery.attempts + 1 }),
    },
  });
  if (!count) {
    const current = await ctx.deps.db.prisma.webhookDelivery.findUnique({ where: { id: delivery.id }, select: { status: true } });
    if (!current) throw new NotFoundError('No such delivery of this webhook');
    if (current.status === 'held') throw deliveryHeld();
    throw new ConflictError('DELIVERY_PENDING', 'The delivery is still pending; it is retried on its schedule', {
      next_attempt_at: delivery.nextAttemptAt.toISOString(),
    });
  }
  ctx.deps.dispatcher.wake();
  return ownDelivery(ctx, endpoint, delivery.id);
}

function deliveryHeld(): ConflictError {
  return new ConflictError(
    'DELIVERY_HELD',
    'The delivery is held while the webhook is disabled; enabling the webhook sends it, no replay needed',
  );
}

/** The webhook (or its ping) was deleted by another request meanwhile: a foreign key or a missing row. */
function deletedMeanwhile(error: unknown): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (error.code === 'P2003' || error.code === 'P2025') return true;
  // A raw statement (the recording of a successful attempt) reports the driver's error instead.
  const cause = (error.meta?.driverAdapterError as { cause?: { kind?: string } } | undefined)?.cause;
  return error.code === 'P2010' && cause?.kind === 'ForeignKeyConstraintViolation';
}

/**
 * Sends a `webhook.ping` now and answers with its attempt: a way to check the URL and the
 * signature check of the receiver. Works on a disabled webhook too; a ping is not retried.
 */
export async function pingWebhook(ctx: RequestContext, webhookId: string): Promise<DeliveryView> {
  const endpoint = await ownEndpoint(ctx, webhookId);
  const { deps } = ctx;
  const now = deps.clock();
  const id = randomUUID();
  const leaseId = randomUUID();
  const body = webhookBody(PING_EVENT_TYPE, now, JSON.stringify({ webhook_id: endpoint.id }));
  // The ping is sent in the request's trace (tracing on).
  const traceparent = currentTraceparent() ?? null;
  // Written already leased to this request, so no dispatcher takes it in between.
  try {
    await deps.db.prisma.webhookDelivery.create({
      data: {
        id,
        endpointId: endpoint.id,
        channelId: endpoint.channelId,
        type: PING_EVENT_TYPE,
        body,
        status: 'pending',
        attempts: 1,
        nextAttemptAt: new Date(now.getTime() + leaseMs(deps)),
        leaseId,
        maxAttempts: 1,
        createdAt: now,
        traceparent,
      },
    });
    await attemptDelivery(deps, {
      id,
      endpointId: endpoint.id,
      url: endpoint.url,
      secret: endpoint.secret,
      body,
      attempt: 1,
      scheduleStep: 0,
      maxAttempts: 1,
      attemptsAtReplay: 0,
      createdAt: now,
      leaseId,
      traceparent,
    }, ctx.logger);
  } catch (error) {
    // Deleted while the ping was on its way: its delivery went with the webhook.
    if (deletedMeanwhile(error)) throw new NotFoundError('No such webhook');
    throw error;
  }
  return ownDelivery(ctx, endpoint, id);
}
