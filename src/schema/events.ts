import { Repeater } from 'graphql-yoga';
import { principalOf, ServiceUnavailableError, SubscriptionLimitError, UnauthorizedError } from '../services/kernel/index.js';
import type { RequestContext } from '../context.js';
import { authenticate, operationScopes } from '../services/access/index.js';
import { holding } from '../events/subscriptionSlots.js';
import type { BookingEventMessage } from '../services/webhooks/index.js';
import { clearAllDataLoaders } from '@pothos/plugin-dataloader';
import { BookingEventRef, BookingEventTypeEnum } from './bookingTypes.js';
import { builder } from './builder.js';

/**
 * Subscription.bookingEvents (docs/spec/DECISIONS.md, GraphQL): the live booking events of the subscriber's
 * own channel, over graphql-ws on /graphql or over SSE (Accept: text/event-stream). Scope
 * reservations:read, checked when the subscription starts. Events are the outbox's, published once
 * by whichever instance's dispatcher takes them, so every subscriber sees each event once and in
 * the order they happened. Live only: a subscriber that was not connected misses events, which
 * webhooks (with retries) and GET /bookings do not.
 */

/** What a subscription yields when its credential stopped being good: the resolver reports it, then it ends. */
const REVOKED = Symbol('revoked');
/** What it yields when it lost its place in the channel's limit (src/events/subscriptionSlots.ts). */
const LOST = Symbol('lost');

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
      'Ends with UNAUTHORIZED when the credential is revoked or expires. Refused with SUBSCRIPTION_LIMIT_EXCEEDED ' +
      '(details.limit) while the channel holds its limit of subscriptions (SUBSCRIPTIONS_MAX_PER_CHANNEL).',
    authScopes: operationScopes('bookingEvents.subscribe'),
    args: {
      types: t.arg({ type: [BookingEventTypeEnum], required: false }),
    },
    subscribe: async (_root, args, ctx) => {
      const { channelId } = principalOf(ctx);
      const { maxPerChannel } = ctx.deps.config.subscriptions;
      // The place is taken with the check (atomically; across instances with Redis), so a burst of
      // subscriptions cannot all pass the check before any of them counts.
      const slot = await ctx.deps.events.admit(channelId, maxPerChannel).catch((error: unknown) => {
        ctx.logger.error({ err: error }, 'subscription places unavailable');
        throw new ServiceUnavailableError('Live booking events are unavailable for now; subscribe again later');
      });
      if (!slot) {
        const scope = ctx.deps.events.kind === 'redis' ? 'at once' : 'on one instance';
        throw new SubscriptionLimitError(`A channel holds at most ${maxPerChannel} subscriptions ${scope}`, maxPerChannel);
      }
      const wanted = args.types?.length ? new Set<string>(args.types) : null;
      const source = ctx.deps.events.subscribe(channelId);
      const stream = new Repeater<BookingEventMessage | typeof REVOKED | typeof LOST>(async (push, stop) => {
        void stop.then(() => source.return());
        void slot.lost.then(async () => {
          await push(LOST);
          stop();
        });
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
      // Given back when the stream ends, however it ends: also when it is returned before it
      // started (a client gone before the first event), where the executor above never runs.
      return holding(slot, {
        next: () => stream.next(),
        return: async (value) => {
          await source.return();
          return stream.return(value);
        },
        throw: (error) => stream.throw(error),
      });
    },
    resolve: (event, _args, ctx) => {
      // Each event is answered afresh: what the edges of its booking load (the property, the
      // reservation, the quote) is read for this event, not remembered from an earlier one.
      clearAllDataLoaders(ctx);
      ctx.loaders.property.clearAll();
      if (event === REVOKED) throw new UnauthorizedError('The credential of this subscription is no longer valid; subscribe again');
      if (event === LOST) {
        const { maxPerChannel } = ctx.deps.config.subscriptions;
        throw new SubscriptionLimitError(`This subscription lost its place among the channel's ${maxPerChannel}; subscribe again`, maxPerChannel);
      }
      return event;
    },
  }),
);
