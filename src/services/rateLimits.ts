import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** Outcome of charging one request against a fixed-window limit. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets. */
  resetSeconds: number;
}

export interface RateLimiter {
  consume(key: string, points?: number): Promise<RateDecision>;
}

export interface RateLimitOptions {
  name: string;
  points: number;
  durationSeconds: number;
  /** Shared across instances when given; in-process otherwise. */
  redis?: Redis | undefined;
}

/**
 * A fixed-window limiter from rate-limiter-flexible: in memory without Redis, shared through
 * Redis with it. If Redis fails, an in-memory limiter stands in rather than failing requests.
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const base = { points: options.points, duration: options.durationSeconds, keyPrefix: `rl:${options.name}` };
  const limiter = options.redis
    ? new RateLimiterRedis({
        ...base,
        storeClient: options.redis,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory(base),
      })
    : new RateLimiterMemory(base);

  return {
    async consume(key, points = 1) {
      try {
        const res = await limiter.consume(key, points);
        return decision(true, options.points, res);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return decision(false, options.points, rejection);
        throw rejection;
      }
    },
  };
}

function decision(allowed: boolean, limit: number, res: RateLimiterRes): RateDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, res.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  };
}
