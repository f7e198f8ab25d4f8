import { setMaxListeners } from 'node:events';
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
   * Takes one of the channel's `limit` subscription places (src/events/subscriptionSlots.ts): on
   * this instance, or with Redis across every instance sharing it; null when all are held.
   */
  admit(channelId: string, limit: number): Promise<SubscriptionSlot | null>;
  /** Subscription places the channel holds on this instance. */
  subscribers(channelId: string): number;
  close(): Promise<void>;
}

type Topics = { 'booking-events': [channelId: string, event: BookingEventMessage] };

// A subscriber that reads slower than events arrive keeps the newest 256 rather than failing.
const SUBSCRIBER_BUFFER = 256;

export function createEventBus(redis: Redis | undefined, logger: Logger): EventBus {
  let closing = false;
  const subscribeClient = redis?.duplicate();
  subscribeClient?.on('error', () => {});
  // In memory: one EventTarget with a listener per subscriber; thousands are expected, not a leak.
  const local = new EventTarget();
  setMaxListeners(0, local);
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
  return {
    kind: redis ? 'redis' : 'memory',
    publish(event) {
      pubsub.publish('booking-events', event.channelId, event);
    },
    subscribe(channelId) {
      const source = pubsub.subscribe('booking-events', channelId);
      return new Repeater<BookingEventMessage>(async (push, stop) => {
        const end = () => stop();
        open.add(end);
        void stop.then(() => {
          open.delete(end);
          return source.return();
        });
        for await (const event of source) await push(event);
        stop();
      }, new SlidingBuffer(SUBSCRIBER_BUFFER));
    },
    admit: (channelId, limit) => slots.admit(channelId, limit),
    subscribers: (channelId) => slots.held(channelId),
    async close() {
      closing = true;
      for (const end of [...open]) end();
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
