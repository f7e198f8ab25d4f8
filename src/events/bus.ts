import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub, Repeater, SlidingBuffer, type PubSub } from 'graphql-yoga';
import type { BookingEventMessage } from '../services/webhooks/index.js';
import { createSubscriptionSlots, type SubscriptionSlot } from './subscriptionSlots.js';

/**
 * Live booking events for subscribers, one topic per channel. With Redis, an event published by
 * any instance reaches the subscribers of every instance (@graphql-yoga/redis-event-target);
 * without it, the bus is this process's own.
 */
export interface EventBus {
  readonly kind: 'redis' | 'memory';
  publish(event: BookingEventMessage): void;
  /** The channel's events from now on, until the iterator is returned or the bus closes. */
  subscribe(channelId: string): Repeater<BookingEventMessage>;
  /**
   * Calls `listener` with each of the channel's events from now on, synchronously as the event
   * arrives, until the returned function is called or the bus closes (then `onClose` is called).
   * The bus holds one subscription per channel, whatever the number of listeners.
   */
  listen(channelId: string, listener: (event: BookingEventMessage) => void, onClose?: () => void): () => void;
  /**
   * Takes one of the channel's `limit` subscription places (src/events/subscriptionSlots.ts): on
   * this instance, or with Redis across every instance sharing it; null when all are held.
   */
  admit(channelId: string, limit: number, transport?: SubscriptionTransport): Promise<SubscriptionSlot | null>;
  /** Subscriptions holding a place on this instance, by transport (metrics). */
  live(): Record<SubscriptionTransport, number>;
  /** Subscription places the channel holds on this instance. */
  subscribers(channelId: string): number;
  close(): Promise<void>;
}

/** How a subscriber is reached: a graphql-ws connection, or an HTTP response (SSE or multipart). */
export type SubscriptionTransport = 'graphql_ws' | 'http';

type Listener = (event: BookingEventMessage) => void;
interface Channel {
  source: Repeater<BookingEventMessage>;
  listeners: Set<{ listener: Listener; onClose: () => void }>;
}

type Topics = { 'booking-events': [channelId: string, event: BookingEventMessage] };

// A subscriber that reads slower than events arrive keeps the newest 256 rather than failing.
const SUBSCRIBER_BUFFER = 256;

export function createEventBus(redis: Redis | undefined, logger: Logger): EventBus {
  let closing = false;
  const subscribeClient = redis?.duplicate();
  subscribeClient?.on('error', () => {});
  // In memory: one EventTarget with one listener per channel (channels below), so Node's
  // MaxListenersExceededWarning (over 10 on one event) never fires however many subscribe.
  const local = new EventTarget();
  const pubsub: PubSub<Topics> = createPubSub<Topics>({
    eventTarget:
      redis && subscribeClient
        ? createRedisEventTarget({
            publishClient: guarded(redis, logger, () => closing),
            subscribeClient: guarded(subscribeClient, logger, () => closing),
          })
        : local,
  });
  // Stops of every open subscription, so closing the bus ends them (and their SSE responses).
  const open = new Set<() => void>();
  const slots = createSubscriptionSlots(redis, logger);
  const live: Record<SubscriptionTransport, number> = { graphql_ws: 0, http: 0 };
  // A place counted under its transport until it is given back (once).
  const counted = (slot: SubscriptionSlot, transport: SubscriptionTransport): SubscriptionSlot => {
    live[transport]++;
    let released = false;
    return {
      lost: slot.lost,
      release() {
        if (released) return;
        released = true;
        live[transport]--;
        slot.release();
      },
    };
  };
  // Per channel: its listeners, and the one pubsub subscription that feeds them all.
  const channels = new Map<string, Channel>();
  const listen = (channelId: string, listener: Listener, onClose: () => void = () => {}) => {
    let channel = channels.get(channelId);
    if (!channel) channel = openChannel(channelId);
    const entry = { listener, onClose };
    channel.listeners.add(entry);
    const current = channel;
    return () => {
      if (!current.listeners.delete(entry) || current.listeners.size > 0) return;
      channels.delete(channelId);
      void current.source.return();
    };
  };
  const openChannel = (channelId: string): Channel => {
    const source = pubsub.subscribe('booking-events', channelId);
    const channel: Channel = { source, listeners: new Set() };
    channels.set(channelId, channel);
    void (async () => {
      try {
        for await (const event of source) {
          // A copy: a listener may come or go while the event is handed out.
          for (const { listener } of [...channel.listeners]) {
            try {
              listener(event);
            } catch (error) {
              logger.error({ err: error, channelId }, 'event bus: a listener failed');
            }
          }
        }
      } finally {
        if (channels.get(channelId) === channel) channels.delete(channelId);
        for (const { onClose } of channel.listeners) onClose();
        channel.listeners.clear();
      }
    })();
    return channel;
  };
  return {
    kind: redis ? 'redis' : 'memory',
    publish(event) {
      pubsub.publish('booking-events', event.channelId, event);
    },
    subscribe(channelId) {
      return new Repeater<BookingEventMessage>(async (push, stop) => {
        const end = () => stop();
        open.add(end);
        const unlisten = listen(channelId, (event) => void push(event), end);
        await stop;
        open.delete(end);
        unlisten();
      }, new SlidingBuffer(SUBSCRIBER_BUFFER));
    },
    listen,
    admit: (channelId, limit, transport = 'http') => slots.admit(channelId, limit).then((slot) => slot && counted(slot, transport)),
    live: () => ({ ...live }),
    subscribers: (channelId) => slots.held(channelId),
    async close() {
      closing = true;
      for (const end of [...open]) end();
      for (const channel of [...channels.values()]) await channel.source.return();
      // Before the Redis client quits (app.ts closes it after the bus).
      await slots.close();
      if (subscribeClient) await subscribeClient.quit().catch(() => subscribeClient.disconnect());
    },
  };
}

/**
 * The Redis event target fires publish/subscribe/unsubscribe without handling their promises; a
 * Redis outage must cost live events (logged), not crash the process with an unhandled rejection.
 */
function guarded(client: Redis, logger: Logger, closing: () => boolean): Redis {
  const fired = new Set(['publish', 'subscribe', 'unsubscribe']);
  return new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof property === 'string' && fired.has(property) && typeof value === 'function') {
        return (...args: unknown[]) =>
          (value as (...a: unknown[]) => Promise<unknown>).apply(target, args).catch((error: unknown) => {
            // Unsubscribes racing the shutdown's quit are expected to fail.
            if (!closing()) logger.warn({ err: error, command: property }, 'event bus: Redis command failed');
          });
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
