import { Redis } from 'ioredis';

/** One ioredis connection for REDIS_URL, failing commands fast rather than queueing forever. */
export function openRedis(url: string): Redis {
  const redis = new Redis(url, {
    lazyConnect: false,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    connectTimeout: 5_000,
  });
  // Connection errors surface on the commands that fail; keep them from crashing the process.
  redis.on('error', () => {});
  return redis;
}
