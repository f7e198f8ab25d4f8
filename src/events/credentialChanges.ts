import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CredentialCache, CredentialChange } from '../services/access/index.js';

/**
 * Credential changes (a revoked token, a suspended app, a rotated key or client secret, a new IP
 * allow list) reaching the credential cache of every instance. The instance that made the change
 * drops the stale entries at once; with Redis it also publishes the change, and every instance
 * subscribed drops them when the message arrives. Without Redis (or while it is unreachable) the
 * other instances see the change when their entries expire, within AUTH_CACHE_TTL_MS: the cache's
 * own bound, which no lost message can extend (docs/decisions.md, "Credential cache").
 */
export interface CredentialChanges {
  /** Call after the change is committed: drops what it makes stale here, and tells the other instances. */
  announce(change: CredentialChange): Promise<void>;
  /** Resolves once this instance listens for other instances' changes (at once without Redis or a cache). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/** The Redis channel of the messages; one per deployment's Redis, like the booking-event topics. */
export const CREDENTIAL_CHANGES_CHANNEL = 'channel-service:credential-changes';

export function createCredentialChanges(cache: CredentialCache | null, redis: Redis | undefined, logger: Logger): CredentialChanges {
  let closing = false;
  // A subscribed connection can run no other command, so it is a connection of its own. An
  // instance without a cache has nothing to drop, so it does not listen (it still publishes).
  const subscriber = cache && redis ? redis.duplicate() : undefined;
  let ready: Promise<void> = Promise.resolve();
  if (subscriber && cache) {
    subscriber.on('error', () => {});
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== CREDENTIAL_CHANGES_CHANNEL) return;
      const change = parseChange(message);
      if (change) cache.forget(change);
      else logger.warn({ message: message.slice(0, 200) }, 'credential changes: unreadable message ignored');
    });
    // ioredis subscribes again by itself after a reconnection (autoResubscribe).
    ready = subscriber.subscribe(CREDENTIAL_CHANGES_CHANNEL).then(
      () => undefined,
      (error: unknown) => {
        if (!closing) logger.warn({ err: error }, 'credential changes: Redis subscription failed; changes of other instances apply within AUTH_CACHE_TTL_MS');
      },
    );
  }
  return {
    ready,
    async announce(change) {
      cache?.forget(change);
      if (!redis) return;
      // The change is committed; a failed message only leaves the other instances to their TTL.
      await redis.publish(CREDENTIAL_CHANGES_CHANNEL, JSON.stringify(change)).catch((error: unknown) => {
        logger.warn({ err: error }, 'credential changes: Redis publish failed; other instances apply the change within AUTH_CACHE_TTL_MS');
      });
    },
    async close() {
      closing = true;
      if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
    },
  };
}

/** A message as announce() writes it; anything else is null. */
function parseChange(message: string): CredentialChange | null {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { appId, accessTokenDigest } = value as Record<string, unknown>;
  if (typeof appId === 'string') return { appId };
  if (typeof accessTokenDigest === 'string') return { accessTokenDigest };
  return null;
}
