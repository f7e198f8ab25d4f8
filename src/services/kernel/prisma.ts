import { Prisma } from '../../generated/prisma/client.js';

/** Prisma's code for a unique constraint violation; the one place it is written. */
const UNIQUE_VIOLATION = 'P2002';

/**
 * Whether a database write failed on a unique constraint. `target`, when given, narrows it to a
 * violation of that constraint (Prisma's `meta.target`: the constraint name or its field list).
 */
export function isUniqueViolation(error: unknown, target?: string): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError) || error.code !== UNIQUE_VIOLATION) return false;
  if (target === undefined) return true;
  const meta = error.meta?.['target'];
  return Array.isArray(meta) ? meta.includes(target) : meta === target;
}
