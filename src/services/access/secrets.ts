import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Credentials the service issues are 256 random bits with a readable prefix. They are stored as
 * SHA-256 digests: with that much entropy a slow password hash adds nothing, and a digest can be
 * looked up by index.
 */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 of a secret in hex (crypto.hash: one call, no Hash object; every request's credential goes through it). */
export function digest(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Constant-time comparison of a presented secret with a stored digest. */
export function matchesDigest(secret: string, storedDigest: string): boolean {
  const presented = Buffer.from(digest(secret), 'hex');
  const stored = Buffer.from(storedDigest, 'hex');
  // Digests always have equal length; only a corrupted stored value differs, and it never matches.
  if (stored.length !== presented.length) return false;
  return timingSafeEqual(presented, stored);
}

export const PREFIX = {
  apiKey: 'ck_',
  clientId: 'app_',
  clientSecret: 'cs_',
  accessToken: 'oat_',
  adminToken: 'adm_',
} as const;
