import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * The places of a channel's live subscriptions (SUBSCRIPTIONS_MAX_PER_CHANNEL). A place is taken
 * at the moment a subscription is admitted, in one step with the check (so a burst of subscribe
 * requests cannot all pass the check before any is counted), and given back when the subscription
 * ends, however it ends.
 *
 * Without Redis the places are this instance's: a count per channel, checked and taken
 * synchronously. With Redis they are the channel's across every instance sharing it: a sorted set
 * per channel of subscription ids scored by the expiry of their lease, admitted by a Lua script
 * (drop expired leases, count, add: atomic on the Redis server, so a burst spread over several
 * instances is admitted exactly up to the limit). The instance holding a place renews its lease
 * every SLOT_LEASE_MS / 3 while the subscription lives, so the places of an instance that died
 * (no release, no renewal) expire within SLOT_LEASE_MS. Times are the Redis server's clock, so
 * instances' clocks need not agree.
 */

export interface SubscriptionSlot {
  /** Gives the place back; once (later calls do nothing). */
  release(): void;
  /**
   * Settles if this instance lost the place: its lease ran out (Redis unreachable from here for
   * longer than SLOT_LEASE_MS) and the channel's other subscriptions have taken every place since.
   * The subscription must end then. Never settles without Redis.
   */
  readonly lost: Promise<void>;
}

export interface SubscriptionSlots {
  /**
   * Takes one of the channel's `limit` places, or answers null when every one is held. Without
   * Redis the check and the taking happen before this returns its promise (no await between them).
   * Rejects when Redis does not answer, or when the instance closed meanwhile.
   */
  admit(channelId: string, limit: number): Promise<SubscriptionSlot | null>;
  /** The places this instance holds for the channel. */
  held(channelId: string): number;
  /**
   * Renews the leases of every place this instance holds (with Redis; run every SLOT_LEASE_MS / 3):
   * a lease that ran out is taken again if the channel has room, else its subscription is told
   * the place is lost. Failures are logged and tried again at the next round.
   */
  renew(): Promise<void>;
  /** Gives back every place this instance holds, and stops renewing. */
  close(): Promise<void>;
}

/** How long a place lives without renewal (a crashed instance's places are free after this). */
export const SLOT_LEASE_MS = 30_000;

/** The channel's sorted set of subscription ids scored by lease expiry (ms, Redis server time). */
export function slotKey(channelId: string): string {
  return `channel-subscriptions:${channelId}`;
}

// Now in ms by the Redis server's clock; expired leases dropped first in every script.
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
`;

/** KEYS[1] the channel's set; ARGV: lease ms, limit, subscription id. 1 admitted, 0 full. */
const ADMIT = `${NOW}
local lease = tonumber(ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
redis.call('PEXPIRE', KEYS[1], lease * 2)
return 1
`;

/**
 * KEYS[1] the channel's set; ARGV: lease ms, limit, then the ids this instance holds. Renews each
 * held lease; one that expired is taken again if the channel has room. Returns the ids lost.
 */
const RENEW = `${NOW}
local lease = tonumber(ARGV[1])
local lost = {}
for i = 3, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('ZADD', KEYS[1], now + lease, ARGV[i])
  else
    lost[#lost + 1] = ARGV[i]
  end
end
redis.call('PEXPIRE', KEYS[1], lease * 2)
return lost
`;

interface Held {
  channelId: string;
  limit: number;
  markLost: () => void;
}

/**
 * The places of `what` (live subscriptions by default; graphql-ws connections use the same
 * mechanism under keys of their own, src/graphql/wsConnections.ts), kept in Redis under `key`.
 */
export function createSubscriptionSlots(redis: Redis | undefined, logger: Logger, key: (channelId: string) => string = slotKey): SubscriptionSlots {
  const perChannel = new Map<string, number>();
  const count = (channelId: string, delta: number) => {
    const n = (perChannel.get(channelId) ?? 0) + delta;
    if (n > 0) perChannel.set(channelId, n);
    else perChannel.delete(channelId);
  };
  // Every place this instance holds (given back on close); with Redis also by id, for renewal.
  const live = new Set<SubscriptionSlot>();
  const held = new Map<string, Held>();
  const releasing = new Set<Promise<unknown>>();
  let closed = false;

  const take = (channelId: string, id: string | null, limit: number): SubscriptionSlot => {
    count(channelId, 1);
    let released = false;
    let markLost = () => {};
    // One promise per place (a shared never-settling one would keep every subscriber's reaction forever).
    const lost = new Promise<void>((resolve) => (markLost = resolve));
    if (id !== null) held.set(id, { channelId, limit, markLost });
    const slot: SubscriptionSlot = {
      lost,
      release() {
        if (released) return;
        released = true;
        live.delete(slot);
        count(channelId, -1);
        if (id === null || !redis) return;
        held.delete(id);
        const done = redis
          .zrem(key(channelId), id)
          .catch((error: unknown) => logger.warn({ err: error, channelId }, 'subscription place not given back (its lease will run out)'))
          .finally(() => releasing.delete(done));
        releasing.add(done);
      },
    };
    live.add(slot);
    return slot;
  };

  const renew = async () => {
    if (!redis || held.size === 0) return;
    const byChannel = new Map<string, { limit: number; ids: string[] }>();
    for (const [id, h] of held) {
      const entry = byChannel.get(h.channelId) ?? { limit: h.limit, ids: [] };
      entry.limit = Math.max(entry.limit, h.limit);
      entry.ids.push(id);
      byChannel.set(h.channelId, entry);
    }
    await Promise.all(
      [...byChannel].map(async ([channelId, { limit, ids }]) => {
        try {
          const lost = (await redis.eval(RENEW, 1, key(channelId), SLOT_LEASE_MS, limit, ...ids)) as string[];
          for (const id of lost) {
            const h = held.get(id);
            held.delete(id);
            if (h) {
              logger.warn({ channelId }, 'subscription place lost (its lease ran out and another subscription took it)');
              h.markLost();
            }
          }
        } catch (error) {
          logger.warn({ err: error, channelId }, 'subscription places not renewed; trying again');
        }
      }),
    );
  };
  let renewing: Promise<void> | undefined;
  const renewOnce = () => (renewing ??= renew().finally(() => (renewing = undefined)));
  const timer = redis ? setInterval(() => void renewOnce(), SLOT_LEASE_MS / 3).unref() : undefined;

  return {
    admit(channelId, limit) {
      if (!redis) {
        // Checked and taken in one synchronous step.
        return Promise.resolve((perChannel.get(channelId) ?? 0) >= limit ? null : take(channelId, null, limit));
      }
      const id = randomUUID();
      return redis.eval(ADMIT, 1, key(channelId), SLOT_LEASE_MS, limit, id).then((admitted) => {
        if (admitted !== 1) return null;
        const slot = take(channelId, id, limit);
        if (!closed) return slot;
        // Admitted while the instance was closing: given back at once (nothing would renew it).
        slot.release();
        throw new Error('the instance is shutting down');
      });
    },
    held: (channelId) => perChannel.get(channelId) ?? 0,
    renew: renewOnce,
    async close() {
      closed = true;
      clearInterval(timer);
      await renewing;
      for (const slot of [...live]) slot.release();
      await Promise.all(releasing);
    },
  };
}

/**
 * `iterator`, holding `slot` until it ends: the place is given back when the iterator finishes,
 * fails, or is returned or thrown into, whether or not it ever started (a Repeater returned before
 * its first `next` never runs its executor, so a release written there would never happen).
 */
export function holding<T>(slot: SubscriptionSlot, iterator: AsyncIterator<T>): AsyncIterableIterator<T> {
  return {
    async next() {
      try {
        const result = await iterator.next();
        if (result.done) slot.release();
        return result;
      } catch (error) {
        slot.release();
        throw error;
      }
    },
    async return(value?: unknown) {
      slot.release();
      return (await iterator.return?.(value)) ?? { done: true, value: undefined };
    },
    async throw(error?: unknown) {
      slot.release();
      if (iterator.throw) return iterator.throw(error);
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
