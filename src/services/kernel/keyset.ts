import { Prisma } from '../../generated/prisma/client.js';
import { ValidationError } from './errors.js';
import { isUuid } from './ids.js';

/**
 * Keyset (cursor) pages of the lists the database holds: bookings, reservations, webhooks and a
 * webhook's deliveries, each ordered by (createdAt, id). A cursor names a position in one list, not
 * an offset, so a page does not shift when rows are added before it (a new booking does not push
 * the next page's first booking back onto it). Cursors are opaque to partners: base64url of
 * `<list>:<createdAt ISO>:<id>`; one of another list, or not one at all, is a validation error
 * naming the argument it came in.
 *
 * The GraphQL connections (src/schema/connections.ts) hand a window to the list's service: rows
 * after `after` and before `before`, at most `limit` of them, read from the far end when
 * `inverted` (a `last` page, which the connection turns round again).
 */
export interface CursorWindow {
  after?: string | undefined;
  before?: string | undefined;
  /** Rows to read (the page and one more, to know whether there is a next one). */
  limit: number;
  /** Read from the end of the list (a `last` page), in reverse order. */
  inverted: boolean;
}

/** A list the database holds, as its service hands it to a connection: the rows of a window, and their count. */
export interface WindowedList<T> {
  rows: (window: CursorWindow) => Promise<T[]>;
  count: () => Promise<number>;
}

/** A row's place in its list. */
export interface Position {
  at: Date;
  id: string;
}

/** Which way a list runs: newest first (bookings) or oldest first (webhooks). */
export type ListOrder = 'asc' | 'desc';

export function cursorOf(list: string, row: Position): string {
  return Buffer.from(`${list}:${row.at.toISOString()}:${row.id}`).toString('base64url');
}

const POSITION = /^([a-z_]+):(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z):([0-9a-f-]{36})$/;

/**
 * The position a cursor of `list` names; anything else is a ValidationError naming `field`. Every
 * part is checked before it reaches a query: the instant it spells (no 2026-02-30 rolled over into
 * March) and one a row can have, an id that is a UUID. 36 dashes or a year 0 would otherwise reach
 * PostgreSQL and fail there, a server error for a client's mistake.
 */
export function positionOf(list: string, cursor: string, field: string): Position {
  const match = POSITION.exec(Buffer.from(cursor, 'base64url').toString());
  if (match && match[1] === list && isUuid(match[3]!)) {
    const at = new Date(match[2]!);
    if (!Number.isNaN(at.getTime()) && at.toISOString() === match[2] && at.getUTCFullYear() >= 1970) return { at, id: match[3]! };
  }
  throw new ValidationError([{ field, reason: 'not a cursor of this list' }]);
}

/** The bounds of a window as row comparisons: rows strictly `below` or `above` a position in (createdAt, id) order. */
interface Bounds {
  below?: Position;
  above?: Position;
  /** The order to read in. */
  direction: ListOrder;
}

function boundsOf(list: string, order: ListOrder, window: CursorWindow, names: { after: string; before: string }): Bounds {
  const after = window.after === undefined ? undefined : positionOf(list, window.after, names.after);
  const before = window.before === undefined ? undefined : positionOf(list, window.before, names.before);
  // In a newest-first list, "after" a row means older than it: below it in (createdAt, id).
  const [below, above] = order === 'desc' ? [after, before] : [before, after];
  const reversed = order === 'desc' ? 'asc' : 'desc';
  return { ...(below && { below }), ...(above && { above }), direction: window.inverted ? reversed : order };
}

/**
 * A Prisma `where` and `orderBy` for the window over a model ordered by (createdAt, id); `take`
 * is window.limit.
 */
export function keysetQuery(
  list: string,
  order: ListOrder,
  window: CursorWindow,
  names = { after: 'after', before: 'before' },
): { where: Record<string, unknown>[]; orderBy: { createdAt?: ListOrder; id?: ListOrder }[] } {
  const { below, above, direction } = boundsOf(list, order, window, names);
  const beyond = (p: Position, cmp: 'lt' | 'gt') => ({ OR: [{ createdAt: { [cmp]: p.at } }, { createdAt: p.at, id: { [cmp]: p.id } }] });
  return {
    where: [...(below ? [beyond(below, 'lt')] : []), ...(above ? [beyond(above, 'gt')] : [])],
    orderBy: [{ createdAt: direction }, { id: direction }],
  };
}

/** The same window as SQL over `created_at` and `id` columns (of `alias`, when given): conditions and ORDER BY. */
export function keysetSql(
  list: string,
  order: ListOrder,
  window: CursorWindow,
  names = { after: 'after', before: 'before' },
): { conditions: Prisma.Sql[]; orderBy: Prisma.Sql } {
  const { below, above, direction } = boundsOf(list, order, window, names);
  const row = (p: Position) => Prisma.sql`(${p.at}::timestamptz, ${p.id}::uuid)`;
  const conditions = [
    ...(below ? [Prisma.sql`("created_at", "id") < ${row(below)}`] : []),
    ...(above ? [Prisma.sql`("created_at", "id") > ${row(above)}`] : []),
  ];
  const orderBy = direction === 'desc' ? Prisma.sql`"created_at" DESC, "id" DESC` : Prisma.sql`"created_at" ASC, "id" ASC`;
  return { conditions, orderBy };
}
