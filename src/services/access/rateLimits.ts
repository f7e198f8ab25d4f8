import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, type RateLimiterRes } from 'rate-limiter-flexible';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { RateLimitError } from '../kernel/index.js';

/** Outcome of charging one request against a fixed-window limit. */
export interface RateDecision {
  allowed: boolean;
  /** Points the window allows. */
  limit: number;
  /** Points left in the window after this charge (0 when refused). */
  remaining: number;
  /** Whole seconds until the window resets (at least 1). */
  resetSeconds: number;
  /** Milliseconds until the window resets, as the limiter counts them. */
  resetMs: number;
  /** Points this request was charged (nothing is kept of a refused charge). */
  cost: number;
}

export interface RateLimiter {
  /**
   * Charges `points` to `key` against `limit` points per window (the limiter's own `points` when
   * omitted). A charge that would go past the limit is refused and not kept, so a refused
   * expensive request does not use up what a cheaper one could still have.
   */
  consume(key: string, points?: number, limit?: number): Promise<RateDecision>;
}

export interface RateLimitOptions {
  name: string;
  /** Points per window when consume() is given no limit of its own. */
  points: number;
  durationSeconds: number;
  /** Shared across instances when given; in-process otherwise. */
  redis?: Redis | undefined;
}

/**
 * Counts far past any real limit: rate-limiter-flexible only counts (and keeps the window), and
 * each consume() compares the count with the limit it is given, so keys with different limits
 * (channels) share one limiter.
 */
const NO_CEILING = Number.MAX_SAFE_INTEGER;

/** A refund this close to the window's end could land in the next window; it is not made. */
const REFUND_MARGIN_MS = 1_000;

/**
 * After Redis failed a charge (unreachable, or no answer within REDIS_COMMAND_TIMEOUT_MS), the
 * instance counts on its own this long before one charge asks Redis again (the others keep
 * counting here until it answers), so a Redis that stops answering costs one request the timeout
 * per second, not every request.
 */
export const REDIS_FALLBACK_MS = 1_000;

/**
 * A fixed-window limiter from rate-limiter-flexible: in memory without Redis, shared through
 * Redis with it (one atomic INCRBY per charge, so instances sharing a Redis together allow the
 * limit exactly). The window of a key starts with its first charge. If Redis fails or does not
 * answer in time, this instance's own count (in memory) stands in rather than failing or holding
 * requests (docs/operations.md, "When Redis or PostgreSQL fail").
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const base = { points: NO_CEILING, duration: options.durationSeconds, keyPrefix: `rl:${options.name}` };
  const memory = new RateLimiterMemory(base);
  const shared = options.redis ? new RateLimiterRedis({ ...base, storeClient: options.redis, rejectIfRedisNotReady: true }) : null;
  // After a failure: when Redis failed, and whether one charge is asking it again meanwhile.
  let failedAt: number | null = null;
  let probing = false;
  // The limiter a charge goes to: Redis, unless it failed within REDIS_FALLBACK_MS; after that one
  // charge asks it again while the others still count here, until it answers.
  const charge = async (key: string, points: number): Promise<{ res: RateLimiterRes; limiter: RateLimiterAbstract }> => {
    const recovering = failedAt !== null;
    if (shared && !(recovering && (probing || performance.now() - failedAt! < REDIS_FALLBACK_MS))) {
      probing = recovering;
      try {
        const res = await shared.consume(key, points);
        failedAt = null;
        return { res, limiter: shared };
      } catch {
        // Never a refusal (the count has no ceiling): Redis failed.
        failedAt = performance.now();
      } finally {
        if (recovering) probing = false;
      }
    }
    return { res: await memory.consume(key, points), limiter: memory };
  };

  return {
    async consume(key, points = 1, limit = options.points) {
      const { res, limiter } = await charge(key, points);
      const consumed = res.consumedPoints;
      const resetSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      const resetMs = res.msBeforeNext;
      if (consumed <= limit) {
        return { allowed: true, limit, remaining: limit - consumed, resetSeconds, resetMs, cost: points };
      }
      // Given back where it was taken; a refund Redis fails to make only leaves the count high.
      if (points > 0 && res.msBeforeNext > REFUND_MARGIN_MS) await limiter.reward(key, points).catch(() => {});
      return { allowed: false, limit, remaining: Math.max(0, limit - (consumed - points)), resetSeconds, resetMs, cost: points };
    },
  };
}

export interface ChannelRateLimitOptions {
  /** Which of the channel's two limits applies: the deployment's (CHANNEL_ENV). */
  env: 'sandbox' | 'production';
  windowSeconds: number;
  /** How long a channel's limit is reused before it is read again; 0 reads it per request. */
  cacheTtlMs: number;
  redis?: Redis | undefined;
}

/**
 * The API's limit (v1, v2, GraphQL): each channel may spend its own `rate_limit` (the value for
 * this deployment's environment) in points per window; a REST request costs 1 point, a GraphQL
 * operation its documentCost. The limit is read from the channel and cached briefly.
 */
export class ChannelRateLimits {
  private readonly limiter: RateLimiter;
  private readonly limits: LRUCache<string, number> | null;
  /**
   * Channels this instance saw left with no point in their window (each kept until the window ends,
   * or RATE_LIMIT_CACHE_TTL_MS if sooner; with 0, none is kept):
   * GraphQL refuses their requests before parsing anything (docs/decisions.md, "Hardening:
   * subscriptions and refused work").
   */
  private readonly spent = new LRUCache<string, { decision: RateDecision; windowEnds: number }>({ max: 10_000 });

  constructor(
    private readonly prisma: PrismaClient,
    private readonly options: ChannelRateLimitOptions,
  ) {
    this.limiter = createRateLimiter({
      name: `api:${options.env}`,
      points: 0,
      durationSeconds: options.windowSeconds,
      redis: options.redis,
    });
    // fetch() shares one lookup among the requests that miss at once.
    this.limits =
      options.cacheTtlMs > 0
        ? new LRUCache<string, number>({
            max: 10_000,
            ttl: options.cacheTtlMs,
            fetchMethod: (channelId) => this.readLimit(channelId),
          })
        : null;
  }

  /** Charges `cost` points to the channel. */
  async charge(channelId: string, cost: number): Promise<RateDecision> {
    const limit = await this.limitOf(channelId);
    const decision = await this.limiter.consume(channelId, cost, limit);
    // Kept as long as the channel's limit is (an operator's change applies as soon), at most to the window's end.
    const keep = Math.min(decision.resetMs, this.options.cacheTtlMs);
    if (decision.remaining === 0 && keep > 0) this.spent.set(channelId, { decision, windowEnds: Date.now() + decision.resetMs }, { ttl: keep });
    return decision;
  }

  /**
   * The refusal of any further charge to the channel, when this instance knows it has no point
   * left in its window (a charge here left it at 0, or was refused with 0 left, moments ago); null
   * otherwise. Asks nothing of Redis or the database: a refusal made before any work.
   */
  spentUntilReset(channelId: string): RateDecision | null {
    const spent = this.spent.get(channelId);
    if (!spent) return null;
    const resetMs = Math.max(0, spent.windowEnds - Date.now());
    return { allowed: false, limit: spent.decision.limit, remaining: 0, resetMs, resetSeconds: Math.max(1, Math.ceil(resetMs / 1000)), cost: 1 };
  }

  /** Forgets the cached limit of a channel (an operator changed it through this instance). */
  forget(channelId: string): void {
    this.limits?.delete(channelId);
    this.spent.delete(channelId);
  }

  /** The channel's points per window in this environment (0 for a channel that no longer exists). */
  private async limitOf(channelId: string): Promise<number> {
    if (!this.limits) return this.readLimit(channelId);
    return (await this.limits.fetch(channelId)) ?? 0;
  }

  private async readLimit(channelId: string): Promise<number> {
    const channel = await this.prisma.channel.findUnique({
      where: { id: channelId },
      select: { rateLimitSandbox: true, rateLimitProduction: true },
    });
    if (!channel) return 0;
    return this.options.env === 'production' ? channel.rateLimitProduction : channel.rateLimitSandbox;
  }
}

/**
 * Points a request doing the work of `items` requests costs (a batch, REST or GraphQL): one per
 * item, as the same work sent one request at a time would, so batching saves round trips, not
 * limit. The one rule for both surfaces (rest-adapters/rateLimit.ts, src/graphql/cost.ts).
 */
export function batchCost(items: number): number {
  return Math.max(1, items);
}

/** The X-RateLimit-* response headers of a decision (REST and GraphQL). */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(decision.limit),
    'X-RateLimit-Remaining': String(decision.remaining),
    'X-RateLimit-Reset': String(decision.resetSeconds),
  };
}

/** What an address was counting, as its refusal names it, and what it may do instead. */
export interface AddressCount {
  /** "requests without a credential", "graphql-ws connection attempts". */
  readonly what: string;
  /** Appended to the refusal's advice (", or send a credential"). */
  readonly instead?: string;
}

/**
 * Charges one request or attempt to its client address (PUBLIC_REQUESTS_PER_ADDRESS_MINUTE,
 * SUBSCRIPTIONS_CONNECTS_PER_ADDRESS_MINUTE): the refusal, 429 RATE_LIMIT_EXCEEDED with
 * Retry-After and `details { retry_after, limit }`, once the address is past `limit` in its
 * minute; null otherwise. A count that fails (the limiter falls back to its own count first, so
 * only something unexpected) lets the request through: a broken counter must not take the public
 * routes or the subscriptions down.
 */
export async function addressRefusal(
  limiter: RateLimiter,
  clientIp: string | undefined,
  limit: number,
  count: AddressCount,
  onError: (error: unknown) => void,
): Promise<RateLimitError | null> {
  let decision: RateDecision;
  try {
    decision = await limiter.consume(clientIp ?? 'unknown', 1, limit);
  } catch (error) {
    onError(error);
    return null;
  }
  if (decision.allowed) return null;
  return new RateLimitError(
    decision.resetSeconds,
    `Too many ${count.what} from ${clientIp ?? 'this address'}: at most ${limit} a minute; retry in ${decision.resetSeconds} s${count.instead ?? ''}`,
    { limit },
  );
}
