import { filter, pipe } from 'graphql-yoga';
import { principalOf } from '../context.js';
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

builder.subscriptionField('bookingEvents', (t) =>
  t.field({
    type: BookingEventRef,
    description: "The channel's booking events from now on; `types` narrows them (all when omitted)",
    authScopes: { scope: 'reservations:read' },
    args: {
      types: t.arg({ type: [BookingEventTypeEnum], required: false }),
    },
    subscribe: (_root, args, ctx) => {
      const wanted = args.types?.length ? new Set<string>(args.types) : null;
      const events = ctx.deps.events.subscribe(principalOf(ctx).channelId);
      return wanted ? pipe(events, filter((e: BookingEventMessage) => wanted.has(e.type))) : events;
    },
    resolve: (event) => event,
  }),
);
