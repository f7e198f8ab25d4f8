import { ConflictError, isUniqueViolation, ValidationError } from '../kernel/index.js';
import { IdempotencyKeyInProgressError } from './errors.js';
import { keyInFlight } from './inFlight.js';
import { createHash } from 'node:crypto';
import type { AppDeps } from '../../context.js';
import type { Prisma } from '../../generated/prisma/client.js';

/**
 * Idempotency-Key (docs/spec/DECISIONS.md) on booking and cancellation requests: the same key with the same
 * request gives the first response again for 24 hours; the same key with another request is 409
 * IDEMPOTENCY_KEY_REUSED; while the first is still running, 409 IDEMPOTENCY_KEY_IN_PROGRESS.
 * Keys are per channel. A first request that failed on the server side (5xx) does not hold its
 * key, so retrying it runs it again. The surfaces store and replay their own response bodies.
 */

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

const KEY = /^[\x21-\x7e]{1,255}$/;

export interface StoredResponse {
  status: number;
  body: unknown;
}

export type Claim = { kind: 'run' } | { kind: 'replay'; response: StoredResponse };

/**
 * SHA-256 of the parts as JSON with object keys sorted, so the same JSON body with its keys in
 * another order is the same request. Written without recursion: a request body may nest deeper
 * than the call stack allows (JSON.parse takes any depth, JSON.stringify does not), and such a
 * body is the client's mistake (400 from the route's validation), not a fault.
 */
export function fingerprintOf(parts: unknown[]): string {
  const hash = createHash('sha256');
  // Work items: a value to write, or literal text (brackets, commas, keys) already decided.
  const work: ({ value: unknown } | string)[] = [{ value: parts }];
  while (work.length) {
    const item = work.pop()!;
    if (typeof item === 'string') {
      hash.update(item);
      continue;
    }
    const { value } = item;
    if (Array.isArray(value)) {
      // As JSON.stringify writes them: undefined, functions and symbols in an array are null.
      const items = value.map((v) => (v === undefined || typeof v === 'function' || typeof v === 'symbol' ? null : v));
      work.push(']');
      for (let i = items.length - 1; i >= 0; i--) work.push({ value: items[i] }, ...(i > 0 ? [','] : []));
      work.push('[');
    } else if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON !== 'function') {
      // Keys sorted, then as an object orders them (integer-like keys first): the order fingerprints have always had.
      const sorted = Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)));
      const entries = Object.entries(sorted).filter(([, v]) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol');
      work.push('}');
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, v] = entries[i]!;
        work.push({ value: v }, `${JSON.stringify(key)}:`, ...(i > 0 ? [','] : []));
      }
      work.push('{');
    } else {
      hash.update(JSON.stringify(value) ?? 'null');
    }
  }
  return hash.digest('hex');
}

export function checkKey(key: string): void {
  if (!KEY.test(key)) {
    throw new ValidationError([{ field: 'Idempotency-Key', reason: '1 to 255 visible ASCII characters' }]);
  }
}

/**
 * Claims `key` for a request with `fingerprint`: run it (the key is now held), or replay the
 * stored response. A claim left by a process that stopped mid-request is taken over once it is
 * older than `staleMs`.
 */
export async function claim(deps: AppDeps, channelId: string, key: string, fingerprint: string, staleMs: number): Promise<Claim> {
  checkKey(key);
  const { prisma } = deps.db;
  for (let round = 0; round < 3; round++) {
    const now = deps.clock();
    try {
      await prisma.idempotencyKey.create({
        data: { channelId, key, fingerprint, createdAt: now, expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS), leaseOwner: deps.instanceId },
      });
      return { kind: 'run' };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const held = await prisma.idempotencyKey.findUnique({ where: { channelId_key: { channelId, key } } });
    if (!held) continue; // released meanwhile: claim again
    if (held.expiresAt <= now) {
      await prisma.idempotencyKey.deleteMany({ where: { channelId, key, createdAt: held.createdAt } });
      continue;
    }
    if (held.fingerprint !== fingerprint) {
      throw new ConflictError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used for a different request');
    }
    if (held.responseStatus !== null) return { kind: 'replay', response: { status: held.responseStatus, body: held.responseBody } };
    if (now.getTime() - held.createdAt.getTime() > staleMs) {
      const { count } = await prisma.idempotencyKey.updateMany({
        where: { channelId, key, createdAt: held.createdAt, responseStatus: null },
        data: { createdAt: now, leaseOwner: deps.instanceId },
      });
      if (count === 1) return { kind: 'run' };
      continue;
    }
    throw new IdempotencyKeyInProgressError();
  }
  throw new ConflictError('IDEMPOTENCY_KEY_IN_PROGRESS', 'This Idempotency-Key is changing hands; retry shortly');
}

/** Keeps the response of a claimed key (status below 500), or frees the key (5xx). */
export async function settle(deps: AppDeps, channelId: string, key: string, response: StoredResponse): Promise<void> {
  const { prisma } = deps.db;
  if (response.status >= 500) {
    await prisma.idempotencyKey.deleteMany({ where: { channelId, key, responseStatus: null } });
    return;
  }
  await prisma.idempotencyKey.updateMany({
    where: { channelId, key, responseStatus: null },
    data: { responseStatus: response.status, responseBody: storable(response.body) as Prisma.InputJsonValue, leaseOwner: null },
  });
}

/**
 * Frees the keys whose request died before it stored an answer (the database went away under it,
 * or its process did): those of `gone` instances, and this instance's own that none of its
 * requests holds (InFlight). A retry with the key then runs again (a booking's finds its token
 * used, 422 BOOK_TOKEN_USED naming the booking). Run by recoverInFlight; the number freed.
 */
export async function releaseAbandonedKeys(deps: AppDeps, gone: readonly string[]): Promise<number> {
  const { prisma } = deps.db;
  let released = 0;
  if (gone.length) {
    released += (await prisma.idempotencyKey.deleteMany({ where: { responseStatus: null, leaseOwner: { in: [...gone] } } })).count;
  }
  const own = await prisma.idempotencyKey.findMany({
    where: { responseStatus: null, leaseOwner: deps.instanceId },
    select: { channelId: true, key: true, createdAt: true },
    take: 500,
  });
  for (const row of own) {
    if (deps.inFlight.has(keyInFlight(row.channelId, row.key))) continue;
    const { count } = await prisma.idempotencyKey.deleteMany({ where: { ...row, responseStatus: null, leaseOwner: deps.instanceId } });
    released += count;
  }
  return released;
}

/** Owners of keys held without an answer, other than this instance (for recoverInFlight's liveness check). */
export async function keyOwners(deps: AppDeps): Promise<string[]> {
  const rows = await deps.db.prisma.idempotencyKey.findMany({
    where: { responseStatus: null, leaseOwner: { not: null }, NOT: { leaseOwner: deps.instanceId } },
    distinct: ['leaseOwner'],
    select: { leaseOwner: true },
  });
  return rows.map((r) => r.leaseOwner!);
}

/** NUL, and a UTF-16 surrogate without its pair. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * PostgreSQL JSON holds neither NUL (U+0000) nor a lone surrogate, and a refusal may quote what the
 * client sent ("Booking \u0000 was not found", "Unrecognized key: ..."): stored with U+FFFD in
 * their place, so the key keeps its answer instead of the write failing and the key staying held.
 */
function storable(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(UNSTORABLE, '\uFFFD');
  if (Array.isArray(value)) return value.map(storable);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [storable(k) as string, storable(v)]));
  }
  return value;
}

/** Drops keys past their 24 hours. */
export async function purgeExpired(deps: AppDeps): Promise<number> {
  const { count } = await deps.db.prisma.idempotencyKey.deleteMany({ where: { expiresAt: { lte: deps.clock() } } });
  return count;
}
