import { ValidationError, type FieldIssue } from '../services/kernel/index.js';

/**
 * Field names of validation errors, renamed for GraphQL in one way. The services name fields as
 * REST does (snake_case, dotted paths: `rooms.0.children_ages`, `check_in_to`); a GraphQL error
 * names the argument: the path under its argument (`input`, `filter`, `input.items.3`, or none
 * for a top-level argument), each segment in camelCase (`input.rooms.0.childrenAges`,
 * `filter.checkInTo`).
 */
export function graphqlField(prefix: string, field: string): string {
  const camel = (name: string) => name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
  return [prefix, ...field.split('.').map(camel)].filter(Boolean).join('.');
}

/**
 * A names map for a service that names cross-field errors itself (search, batch rates, date
 * changes, the party and filter rules of bookings): each key, which is the GraphQL field's name,
 * under `prefix`.
 */
export function graphqlNames<K extends string>(prefix: string, keys: readonly K[]): Record<K, string> {
  return Object.fromEntries(keys.map((key) => [key, graphqlField(prefix, key)])) as Record<K, string>;
}

/** A service call (its promise, or a function making it) whose ValidationError fields are renamed for GraphQL under `prefix` (graphqlField). */
export async function withGraphQLFields<T>(prefix: string, work: Promise<T> | (() => T | Promise<T>)): Promise<T> {
  try {
    return await (typeof work === 'function' ? work() : work);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const { fields } = error.details as { fields: FieldIssue[] };
    throw new ValidationError(
      fields.map((f) => ({ field: graphqlField(prefix, f.field), reason: f.reason })),
      error.message,
    );
  }
}

/** The stay fields the search services name in cross-field errors (search.ts FieldNames). */
export const STAY_FIELDS = ['checkin', 'checkout', 'adults', 'occupancy', 'children', 'childrenAges', 'rooms', 'priceMin', 'priceMax'] as const;
