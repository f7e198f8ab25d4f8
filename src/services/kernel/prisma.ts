import { Prisma } from '../../generated/prisma/client.js';

/** Prisma's code for a unique constraint violation; the one place it is written. */
const UNIQUE_VIOLATION = 'P2002';

/**
 * Whether a database write failed on a unique constraint. `target`, when given, narrows it to a
 * violation of that constraint (Prisma's `meta.target`: the constraint name or its field list).
 */
export function isUniqueViolation(error: unknown, target?: string): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (error.code === RAW_QUERY_FAILED) return rawUniqueViolation(error.meta, target);
  if (error.code !== UNIQUE_VIOLATION) return false;
  if (target === undefined) return true;
  const meta = error.meta?.['target'];
  return Array.isArray(meta) ? meta.includes(target) : meta === target;
}

/** Prisma's code for a failed raw query; the driver adapter's error is in `meta`. */
const RAW_QUERY_FAILED = 'P2010';

/**
 * A raw query's unique violation, as the driver adapters report it (PostgreSQL: the index name;
 * PGlite: the fields): `meta.driverAdapterError.cause` of kind `UniqueConstraintViolation`.
 */
function rawUniqueViolation(meta: Record<string, unknown> | undefined, target: string | undefined): boolean {
  const cause = (meta?.['driverAdapterError'] as { cause?: { kind?: string; constraint?: { index?: string; fields?: string[] } } } | undefined)?.cause;
  if (cause?.kind !== 'UniqueConstraintViolation') return false;
  if (target === undefined) return true;
  return cause.constraint?.index === target || (cause.constraint?.fields ?? []).includes(target);
}

/**
 * A model object (a row as Prisma reads and writes it) as the parameters of a raw statement that
 * writes it in one go: its columns (the fields' names in snake_case, as every `@map` of the schema
 * spells them; a field mapped otherwise would be an unknown column, an error, never a silent loss)
 * and the row as JSON for `json_populate_record(NULL::table, $json)`, which converts each value to
 * its column's type (bigint as a string, dates as ISO instants, Json as it is, enums as text).
 * Undefined fields are left out, so the columns' defaults apply.
 */
export function rowForSql(row: Record<string, unknown>): { columns: Prisma.Sql; json: string } {
  const byColumn: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    if (value === undefined) continue;
    if (!/^[a-z][A-Za-z0-9]*$/.test(name)) throw new Error(`not a field name: ${name}`);
    byColumn[name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value;
  }
  const columns = Prisma.join(Object.keys(byColumn).map((column) => Prisma.raw(`"${column}"`)));
  const json = JSON.stringify(byColumn, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  return { columns, json };
}
