import { Redis } from 'ioredis';

/**
 * One ioredis connection for REDIS_URL, failing commands fast rather than queueing forever: a
 * command with no answer within `commandTimeoutMs` (REDIS_COMMAND_TIMEOUT_MS) fails, so a Redis
 * that stops answering (frozen, a network that drops packets) costs a request that long and then
 * its fallback (the rate limiter's own count, the credential cache's TTL), never the request
 * deadline. Connections made from it (duplicate(): the subscribers) have the same bound.
 */
export function openRedis(url: string, commandTimeoutMs: number): Redis {
  const redis = new Redis(url, {
    lazyConnect: false,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    connectTimeout: 5_000,
    commandTimeout: commandTimeoutMs,
  });
  // Connection errors surface on the commands that fail; keep them from crashing the process.
  redis.on('error', () => {});
  return redis;
}
