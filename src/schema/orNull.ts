import { NotFoundError } from '../services/kernel/index.js';

/**
 * A query field's answer for a resource that is not there (or is another channel's): null, as
 * GraphQL lookups by id do; mutations keep the NOT_FOUND error.
 */
export async function orNull<T>(promise: Promise<T>): Promise<T | null> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}
