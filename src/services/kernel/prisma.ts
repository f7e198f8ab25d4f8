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

/**
 * Prisma's codes of a database it cannot reach or lost: P1001 unreachable, P1002 and P1008 timed
 * out, P1017 the server closed the connection, P2024 no connection from the pool in time.
 */
const UNREACHABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);

/** The driver adapters' kinds of the same (the cause in `meta.driverAdapterError`). */
const UNREACHABLE_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);

/**
 * PostgreSQL's SQLSTATEs of a server going away or not taking connections: class 08 (connection
 * exception), 57P01-57P03 (terminated by an administrator, crash shutdown, cannot connect now:
 * starting up or shutting down), 53300 (too many connections).
 */
const UNREACHABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;

/** node-postgres's own errors of a connection lost or never made, which carry no SQLSTATE. */
const DRIVER_MESSAGES = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable)/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * Whether a database call failed because the database could not be reached or the connection was
 * lost (a restart, a network cut, a terminated backend), as opposed to a fault of the statement:
 * the one rule, for Prisma's errors, the driver adapters' and node-postgres's. Such a failure is an
 * outage (503 with Retry-After: DatabaseUnavailableError), never INTERNAL_ERROR.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message, meta } = e as { code?: unknown; message?: unknown; meta?: Record<string, unknown> };
    if (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || SOCKET_CODES.has(code) || UNREACHABLE_SQLSTATE.test(code))) return true;
    if (typeof message === 'string' && DRIVER_MESSAGES.test(message)) return true;
    const cause = (meta?.['driverAdapterError'] as { cause?: { kind?: string; code?: string } } | undefined)?.cause ?? (e as { cause?: { kind?: string; code?: string } }).cause;
    if (cause && typeof cause === 'object' && typeof cause.kind === 'string') {
      if (UNREACHABLE_KINDS.has(cause.kind)) return true;
      if (cause.kind === 'postgres' && typeof cause.code === 'string' && UNREACHABLE_SQLSTATE.test(cause.code)) return true;
    }
  }
  return false;
}

/** The waits before each new try of againWhenUnavailable: about two seconds in all. */
const AGAIN_AFTER_MS = [50, 400, 1_500];

/**
 * Runs `write` and, when it fails because the connection was lost or the database could not be
 * reached (isDatabaseUnavailable), runs it again a few times over about two seconds: a terminated
 * backend or a connection cut costs a reconnection, not the request. Only for writes that may run
 * twice (conditional moves, an insert that looks first whether it happened: `attempt` counts the
 * tries, 0 the first). The last failure is thrown.
 */
export async function againWhenUnavailable<T>(write: (attempt: number) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write(attempt);
    } catch (error) {
      const wait = AGAIN_AFTER_MS[attempt];
      if (wait === undefined || !isDatabaseUnavailable(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
