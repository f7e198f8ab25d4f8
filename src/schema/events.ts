import { Repeater } from 'graphql-yoga';
import { principalOf, ServiceUnavailableError, SubscriptionLimitError, UnauthorizedError } from '../services/kernel/index.js';
import type { RequestContext, SubscriptionEnd } from '../context.js';
import { authenticate, operationScopes } from '../services/access/index.js';
import { holding } from '../events/subscriptionSlots.js';
import type { BookingEventMessage } from '../services/webhooks/index.js';
import { clearAllDataLoaders } from '@pothos/plugin-dataloader';
import { BookingEventRef, BookingEventTypeEnum } from './bookingTypes.js';
import { builder } from './builder.js';
import { chargeEvent } from '../graphql/charges.js';

/**
 * Subscription.bookingEvents (docs/spec/DECISIONS.md, GraphQL): the live booking events of the subscriber's
 * own channel, over graphql-ws on /graphql or over SSE (Accept: text/event-stream). Scope
 * reservations:read, checked when the subscription starts. Events are the outbox's, published once
 * by whichever instance's dispatcher takes them, so every subscriber sees each event once and in
 * the order they happened. Live only: a subscriber that was not connected misses events, which
 * webhooks (with retries) and GET /bookings do not.
 */

/**
 * Besides events, a subscription's stream yields why it ends when it ends for a reason of its own
 * (the resolver reports it as an error, then the stream ends): 'revoked' when its credential
 * stopped being good, 'lost' when it lost its place in the channel's limit
 * (src/events/subscriptionSlots.ts), 'failed' when the execution it shared failed.
 */
type Streamed = BookingEventMessage | SubscriptionEnd;

/**
 * Whether the credential the subscription started with still allows it: not revoked, not expired,
 * same channel, still reservations:read. Asked before each event (the credential cache makes it
 * cheap). A revocation drops the credential from the cache when it is announced, so a revoked
 * token or key, or a suspended app, stops receiving at the next event on the instance that made
 * the change and on the others with Redis; without Redis within AUTH_CACHE_TTL_MS, as does an
 * expired token. It holds only what it asks with (a shared subscriber keeps it for its life).
 */
function stillAllowed(ctx: RequestContext, channelId: string): () => Promise<boolean> {
  const { deps, credentials, clientIp } = ctx;
  return () => credentialAllows(deps, credentials, clientIp, channelId);
}

async function credentialAllows(deps: RequestContext['deps'], credentials: RequestContext['credentials'], clientIp: string | undefined, channelId: string): Promise<boolean> {
  if (!credentials) return true;
  try {
    const principal = await authenticate(deps.db.prisma, credentials, { cache: deps.credentials, clientIp });
    return principal?.channelId === channelId && principal.scopes.has('reservations:read');
  } catch {
    return false;
  }
}

/** The stream of a shared subscriber's own operation: empty (multiplex.ts sends what it receives). */
async function* nothing(): AsyncGenerator<Streamed> {}

builder.subscriptionField('bookingEvents', (t) =>
  t.field({
    type: BookingEventRef,
    description:
      "The channel's booking events from now on; `types` narrows them (all when omitted or empty). " +
      "Each event is charged what the selection costs as a query, before it runs; an event the channel's points do not " +
      'cover is an error RATE_LIMIT_EXCEEDED (details.event_id, booking_id) and the subscription goes on. ' +
      'Ends with UNAUTHORIZED when the credential is revoked or expires. Refused with SUBSCRIPTION_LIMIT_EXCEEDED ' +
      '(details.limit) while the channel holds its limit of subscriptions (SUBSCRIPTIONS_MAX_PER_CHANNEL).',
    authScopes: operationScopes('bookingEvents.subscribe'),
    args: {
      types: t.arg({ type: [BookingEventTypeEnum], required: false }),
    },
    subscribe: async (_root, args, ctx) => {
      const { channelId } = principalOf(ctx);
      const wanted = args.types?.length ? new Set<string>(args.types) : null;
      // graphql-ws (src/graphql/multiplex.ts): the one execution shared by the subscribers of the
      // same channel, scopes, document and variables takes the events; it holds no place, and
      // each subscriber's credential is asked by the sharing, per subscriber, before each event.
      if (ctx.sharing?.role === 'group') return ctx.sharing.source(channelId, wanted);
      const { maxPerChannel } = ctx.deps.config.subscriptions;
      // The place is taken with the check (atomically; across instances with Redis), so a burst of
      // subscriptions cannot all pass the check before any of them counts.
      const slot = await ctx.deps.events.admit(channelId, maxPerChannel, ctx.sharing ? 'graphql_ws' : 'http').catch((error: unknown) => {
        ctx.logger.error({ err: error }, 'subscription places unavailable');
        throw new ServiceUnavailableError('Live booking events are unavailable for now; subscribe again later');
      });
      if (!slot) {
        const scope = ctx.deps.events.kind === 'redis' ? 'at once' : 'on one instance';
        throw new SubscriptionLimitError(`A channel holds at most ${maxPerChannel} subscriptions ${scope}`, maxPerChannel);
      }
      if (ctx.sharing?.role === 'member') {
        // One subscriber of a shared execution: the events (and its error, if it ends alone) reach
        // it from there, which now holds its place and gives it back however it ends.
        ctx.sharing.join({
          channelId,
          slot,
          credentialKey: `${ctx.credentials?.apiKey ?? ''}\n${ctx.credentials?.authorization ?? ''}\n${ctx.clientIp ?? ''}`,
          allowed: stillAllowed(ctx, channelId),
        });
        return nothing();
      }
      const source = ctx.deps.events.subscribe(channelId);
      const stream = new Repeater<Streamed>(async (push, stop) => {
        void stop.then(() => source.return());
        void slot.lost.then(async () => {
          await push('lost');
          stop();
        });
        for await (const event of source) {
          if (wanted && !wanted.has(event.type)) continue;
          if (!(await credentialAllows(ctx.deps, ctx.credentials, ctx.clientIp, channelId))) {
            await push('revoked');
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
    resolve: async (event, _args, ctx) => {
      // Each event is answered afresh: what the edges of its booking load (the property, the
      // reservation, the quote) is read for this event, not remembered from an earlier one.
      if (event === 'revoked') throw new UnauthorizedError('The credential of this subscription is no longer valid; subscribe again');
      if (event === 'lost') {
        const { maxPerChannel } = ctx.deps.config.subscriptions;
        throw new SubscriptionLimitError(`This subscription lost its place among the channel's ${maxPerChannel}; subscribe again`, maxPerChannel);
      }
      if (event === 'failed') throw new ServiceUnavailableError('Live booking events failed on this instance; subscribe again');
      // Charged before its selection runs; over the channel's limit the event is this error
      // (RATE_LIMIT_EXCEEDED naming it) and the subscription goes on (src/graphql/charges.ts).
      await chargeEvent(ctx, event);
      clearAllDataLoaders(ctx);
      ctx.loaders.property.clearAll();
      return event;
    },
  }),
);
