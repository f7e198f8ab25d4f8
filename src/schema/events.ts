import { Repeater } from 'graphql-yoga';
import { principalOf, type RequestContext } from '../context.js';
import { authenticate } from '../services/auth.js';
import { AppError, UnauthorizedError } from '../services/errors.js';
import { fromBookingRecord } from '../services/bookings.js';
import type { BookingEventMessage } from '../services/webhookDelivery.js';
import { BookingRef } from './bookings.js';
import { builder } from './builder.js';
import { BookingEventTypeEnum } from './webhooks.js';

/**
 * Subscription.bookingEvents (DECISIONS.md, GraphQL): the live booking events of the subscriber's
 * own channel, over graphql-ws on /graphql or over SSE (Accept: text/event-stream). Scope
 * reservations:read, checked when the subscription starts. Events are the outbox's, published once
 * by whichever instance's dispatcher takes them, so every subscriber sees each event once and in
 * the order they happened. Live only: a subscriber that was not connected misses events, which
 * webhooks (with retries) and GET /bookings do not.
 */

const BookingEventRef = builder.objectRef<BookingEventMessage>('BookingEvent').implement({
  description: 'A booking event (spec §6) with the booking as it was when the event happened',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Unique per event; the same event never comes twice on one subscription' }),
    type: t.field({ type: BookingEventTypeEnum, resolve: (e) => e.type as typeof BookingEventTypeEnum.$inferType }),
    occurredAt: t.field({ type: 'DateTime', resolve: (e) => new Date(e.occurredAt) }),
    booking: t.field({ type: BookingRef, resolve: (e) => fromBookingRecord(e.booking) }),
  }),
});

/** What a subscription yields when its credential stopped being good: the resolver reports it, then it ends. */
const REVOKED = Symbol('revoked');

/**
 * Whether the credential the subscription started with still allows it: not revoked, not expired,
 * same channel, still reservations:read. Asked before each event (the credential cache makes it
 * cheap). A revocation drops the credential from the cache when it is announced, so a revoked
 * token or key, or a suspended app, stops receiving at the next event on the instance that made
 * the change and on the others with Redis; without Redis within AUTH_CACHE_TTL_MS, as does an
 * expired token.
 */
async function stillAllowed(ctx: RequestContext, channelId: string): Promise<boolean> {
  if (!ctx.credentials) return true;
  try {
    const principal = await authenticate(ctx.deps.db.prisma, ctx.credentials, {
      cache: ctx.deps.credentials,
      clientIp: ctx.clientIp,
    });
    return principal?.channelId === channelId && principal.scopes.has('reservations:read');
  } catch {
    return false;
  }
}

builder.subscriptionField('bookingEvents', (t) =>
  t.field({
    type: BookingEventRef,
    description:
      "The channel's booking events from now on; `types` narrows them (all when omitted or empty). " +
      'Ends with UNAUTHORIZED when the credential is revoked or expires.',
    authScopes: { scope: 'reservations:read' },
    args: {
      types: t.arg({ type: [BookingEventTypeEnum], required: false }),
    },
    subscribe: (_root, args, ctx) => {
      const { channelId } = principalOf(ctx);
      const { maxPerChannel } = ctx.deps.config.subscriptions;
      if (ctx.deps.events.subscribers(channelId) >= maxPerChannel) {
        throw new AppError(429, 'SUBSCRIPTION_LIMIT_EXCEEDED', `A channel holds at most ${maxPerChannel} subscriptions on one instance`, {
          limit: maxPerChannel,
        });
      }
      const wanted = args.types?.length ? new Set<string>(args.types) : null;
      const source = ctx.deps.events.subscribe(channelId);
      return new Repeater<BookingEventMessage | typeof REVOKED>(async (push, stop) => {
        void stop.then(() => source.return());
        for await (const event of source) {
          if (wanted && !wanted.has(event.type)) continue;
          if (!(await stillAllowed(ctx, channelId))) {
            await push(REVOKED);
            break;
          }
          await push(event);
        }
        stop();
      });
    },
    resolve: (event) => {
      if (event === REVOKED) throw new UnauthorizedError('The credential of this subscription is no longer valid; subscribe again');
      return event;
    },
  }),
);
