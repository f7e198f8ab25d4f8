import { cursorToOffset, resolveCursorConnection, resolveOffsetConnection, type DefaultConnectionArguments } from '@pothos/plugin-relay';
import { z } from 'zod';
import { ValidationError, type WindowedList } from '../services/kernel/index.js';
import type { PositionalList } from '../services/search/index.js';
import { builder } from './builder.js';

/**
 * Relay cursor connections over the services' lists (docs/decisions.md, "GraphQL: pagination").
 * Every list takes `first`/`after`; the lists the database holds also page back with
 * `last`/`before`, by keyset cursors the list's service makes and reads. A page holds 20 items
 * unless `first` or `last` says otherwise, at most 100. `totalCount`, where a list has one, is
 * counted only when it is selected.
 */

export const PAGE_SIZE = { default: 20, max: 100 } as const;

/** The zod rules of the connection arguments, for a field's `validate` schema (zod drops what it does not name). */
export const connectionArgs = {
  first: z.int().min(0).max(PAGE_SIZE.max).nullish(),
  last: z.int().min(0).max(PAGE_SIZE.max).nullish(),
  after: z.string().max(512).nullish(),
  before: z.string().max(512).nullish(),
};

/** The same for the lists that page forward only. */
export const forwardConnectionArgs = { first: connectionArgs.first, after: connectionArgs.after };

function once(count: () => Promise<number>): () => Promise<number> {
  let made: Promise<number> | undefined;
  return () => (made ??= count());
}

/** What a connection resolver returns: its edges, where they sit, and (where the list counts) its count. */
export interface ConnectionPage<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount?: () => Promise<number>;
}

/** A page of `list` for the connection arguments, each node with the cursor its service gives it. */
export async function keysetConnection<T>(
  args: DefaultConnectionArguments,
  list: WindowedList<T>,
  cursorOf: (node: T) => string,
): Promise<ConnectionPage<T>> {
  const connection = await resolveCursorConnection(
    { args, toCursor: (node) => cursorOf(node as T), defaultSize: PAGE_SIZE.default, maxSize: PAGE_SIZE.max },
    ({ after, before, limit, inverted }): Promise<T[]> => list.rows({ after, before, limit, inverted }),
  );
  const page = connection as unknown as ConnectionPage<T>;
  // An empty page's cursors are the one it was asked from, or none (the plugin would give '').
  const { startCursor, endCursor } = page.pageInfo;
  return { ...page, pageInfo: { ...page.pageInfo, startCursor: startCursor || null, endCursor: endCursor || null }, totalCount: once(list.count) };
}

/** A page of a list already in memory (a search's results, the properties asked for by id), by position. */
export async function arrayConnection<T>(args: DefaultConnectionArguments, items: PositionalList<T>): Promise<ConnectionPage<T>> {
  for (const name of ['after', 'before'] as const) {
    const cursor = args[name];
    if (cursor != null && !isOffsetCursor(cursor)) throw new ValidationError([{ field: name, reason: 'not a cursor of this list' }]);
  }
  const connection = await resolveOffsetConnection(
    { args, totalCount: items.length, defaultSize: PAGE_SIZE.default, maxSize: PAGE_SIZE.max },
    ({ offset, limit }) => items.slice(offset, offset + limit),
  );
  return { ...(connection as unknown as ConnectionPage<T>), totalCount: () => Promise.resolve(items.length) };
}

function isOffsetCursor(cursor: string): boolean {
  try {
    const offset = cursorToOffset(cursor);
    return Number.isSafeInteger(offset) && offset >= 0;
  } catch {
    return false;
  }
}

/** The totalCount of a page a counting list made. */
export function countOf(page: unknown): Promise<number> {
  const count = (page as ConnectionPage<unknown>).totalCount;
  if (!count) throw new Error('this connection does not count');
  return count();
}

/**
 * The connection type of a list that counts: edges, pageInfo and `totalCount` (`counted` says what
 * it counts), the count made only when selected.
 */
export function countedConnection<Type extends Parameters<typeof builder.connectionObject>[0]['type']>(
  type: Type,
  name: string,
  description: string,
  counted: string,
) {
  return builder.connectionObject({
    type,
    name,
    description,
    fields: (t) => ({
      totalCount: t.int({ description: `${counted} (counted only when asked for)`, resolve: (page) => countOf(page) }),
    }),
  });
}

