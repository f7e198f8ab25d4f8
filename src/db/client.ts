import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { Config } from '../config.js';
import { PrismaClient } from '../generated/prisma/client.js';
import { DATA_DIR_MODE, refuseEmbeddedInProduction, secureDataDir } from './dataDir.js';
import { observedAdapter, type DatabaseObserver } from './observed.js';

/**
 * The database behind the service: PostgreSQL through @prisma/adapter-pg when DATABASE_URL is
 * set, otherwise an embedded PGlite under DATA_DIR. Both run the same migrations and queries.
 */
export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly prisma: PrismaClient;
  /** Runs a multi-statement SQL script outside Prisma (migrations). */
  runScript(sql: string): Promise<void>;
  /** Rows of a parameterless query, outside Prisma (migrations). */
  rows<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs fn while holding the cluster-wide migration lock (one migrator at a time). */
  withMigrationLock<T>(fn: () => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  /**
   * Calls `onNotify` with the payload of each NOTIFY on `channel` (sent when the notifying
   * transaction commits). PostgreSQL keeps a dedicated connection, reconnecting after a loss.
   * Resolves with a function that stops listening.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * This instance's liveness lease: a session advisory lock derived from `instanceId`, held on a
   * connection of its own for as long as the process lives (PostgreSQL drops it the moment the
   * process or its connection dies). A lost connection is made again and the lock taken again;
   * `onLost` hears of the loss. Resolves, once the lock is held, with a function that lets it go.
   */
  holdLiveness(instanceId: string, onLost?: (error: unknown) => void): Promise<() => Promise<void>>;
  /**
   * Of `instanceIds`, those that are gone: their liveness lock was free on every look over
   * LIVENESS_GRACE_MS (a living instance whose liveness connection was lost takes its lock again
   * well within it). Resolves after that grace when a lock is found free, at once otherwise.
   */
  goneInstances(instanceIds: readonly string[]): Promise<string[]>;
  close(): Promise<void>;
}

/** The advisory lock key of an instance's liveness lease: 64 bits of its id's SHA-256, as PostgreSQL's bigint. */
export function livenessKey(instanceId: string): string {
  return createHash('sha256').update(`liveness:${instanceId}`).digest().readBigInt64BE(0).toString();
}

/**
 * How long an instance's liveness lock must stay free before another instance takes its bookings
 * over: longer than making a lost liveness connection again takes (at once, then every second),
 * so a connection blip, a terminated backend or a PostgreSQL restart never passes for a death
 * (docs/decisions.md, "Hardening: database and Redis failures").
 */
export const LIVENESS_GRACE_MS = 5_000;

/** How often a free liveness lock is looked at again during the grace. */
const LIVENESS_LOOK_MS = 250;

/** How long making a connection to PostgreSQL may take before it fails (the request then answers 503). */
export const CONNECT_TIMEOUT_MS = 10_000;

// Prisma's own advisory lock id, so this runner and `prisma migrate deploy` exclude each other.
const MIGRATION_LOCK_ID = 72707369;

/** How the Prisma client's driver adapter is wrapped (tracing: src/telemetry/database.ts); unwrapped when absent. */
export type AdapterWrapper = <F extends SqlDriverAdapterFactory>(factory: F) => F;

/**
 * `observer` (the service's metrics) hears of every SQL statement and transaction Prisma runs
 * (observed.ts); `wrap` wraps the observed adapter once more (tracing).
 */
export async function openDatabase(
  config: Config,
  observer?: DatabaseObserver,
  wrap: AdapterWrapper = (factory) => factory,
  /** PostgreSQL's application_name of every connection (pg_stat_activity shows which instance holds which). */
  applicationName = 'channel-service',
): Promise<Database> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl, config.databaseSchema, { observer, wrap, applicationName });
  refuseEmbeddedInProduction(config);
  return openPglite(config, observer, wrap);
}

interface PostgresOptions {
  observer: DatabaseObserver | undefined;
  wrap: AdapterWrapper;
  applicationName: string;
}

async function openPostgres(url: string, schema: string, { observer, wrap, applicationName }: PostgresOptions): Promise<Database> {
  const searchPath = `-c search_path="${schema}"`;
  const connection = { connectionString: url, application_name: applicationName, connectionTimeoutMillis: CONNECT_TIMEOUT_MS };
  // A small pool of its own for migrations and health checks; Prisma keeps its own pool.
  const pool = new pg.Pool({ ...connection, options: searchPath, max: 2 });
  // An idle client's network error must not crash the process; the next query reports it.
  pool.on('error', () => {});
  if (schema !== 'public') {
    // IF NOT EXISTS still races when instances start together: the loser's unique violation
    // (23505) or duplicate schema (42P06) means the schema is there.
    await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`).catch((error: { code?: string }) => {
      if (error.code !== '23505' && error.code !== '42P06') throw error;
    });
  }
  const prisma = new PrismaClient({
    adapter: wrap(observedAdapter(new PrismaPg({ ...connection, options: searchPath, max: 10 }, { schema }), observer)),
  });
  // Liveness locks held by this process (holdLiveness), let go on close.
  const releases = new Set<() => Promise<void>>();
  let closed = false;
  // Of `ids`, those whose liveness lock another session can take now (let go at once).
  const freeLocks = async (ids: readonly string[]): Promise<string[]> => {
    const client = await pool.connect();
    try {
      const free: string[] = [];
      for (const id of ids) {
        const key = livenessKey(id);
        const { rows } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS got', [key]);
        if (!rows[0]?.got) continue;
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
        free.push(id);
      }
      return free;
    } finally {
      client.release();
    }
  };
  return {
    kind: 'postgres',
    prisma,
    async runScript(sql) {
      await pool.query(sql);
    },
    async rows<T>(sql: string, params: unknown[] = []) {
      return (await pool.query(sql, params)).rows as T[];
    },
    async withMigrationLock(fn) {
      const client = await pool.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
        return await fn();
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => {});
        client.release();
      }
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    listen: (channel, onNotify) => listenPostgres(connection, channel, onNotify),
    async holdLiveness(instanceId, onLost) {
      const release = await holdPostgresLiveness(connection, livenessKey(instanceId), onLost);
      releases.add(release);
      return async () => {
        releases.delete(release);
        await release();
      };
    },
    async goneInstances(instanceIds) {
      if (!instanceIds.length) return [];
      // Free on every look over the grace, or alive: a lock taken again even once is a living owner.
      let free = await freeLocks(instanceIds);
      const until = Date.now() + LIVENESS_GRACE_MS;
      while (free.length && !closed) {
        if (Date.now() >= until) return free;
        await new Promise((resolve) => setTimeout(resolve, LIVENESS_LOOK_MS));
        if (!closed) free = await freeLocks(free);
      }
      return [];
    },
    close: once(async () => {
      closed = true;
      await Promise.all([...releases].map((release) => release()));
      await prisma.$disconnect();
      await pool.end();
    }),
  };
}

async function openPglite(config: Config, observer: DatabaseObserver | undefined, wrap: AdapterWrapper): Promise<Database> {
  const dir = join(config.dataDir, 'pglite');
  // Only the service's user reads DATA_DIR: tightened before PGlite opens it and after (dataDir.ts).
  mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  secureDataDir(config.dataDir);
  const db = await PGlite.create(dir);
  secureDataDir(config.dataDir);
  const prisma = new PrismaClient({ adapter: wrap(observedAdapter(new PrismaPGlite(db), observer)) });
  let living: string | undefined;
  return {
    kind: 'pglite',
    prisma,
    async runScript(sql) {
      await db.exec(sql);
    },
    async rows<T>(sql: string, params: unknown[] = []) {
      return (await db.query<T>(sql, params)).rows;
    },
    // One process owns the data directory, so there is no other migrator to exclude.
    withMigrationLock: (fn) => fn(),
    async ping() {
      await db.query('SELECT 1');
    },
    async listen(channel, onNotify) {
      const stop = await db.listen(channel, onNotify);
      return async () => {
        await stop().catch(() => {});
      };
    },
    // One process owns the data directory: an instance other than this one is a past incarnation.
    async holdLiveness(instanceId) {
      living = instanceId;
      return async () => {
        if (living === instanceId) living = undefined;
      };
    },
    goneInstances: async (instanceIds) => instanceIds.filter((id) => id !== living),
    close: once(async () => {
      await prisma.$disconnect();
      await db.close();
    }),
  };
}

/** What every connection of the service to PostgreSQL is made with. */
interface ConnectionConfig {
  connectionString: string;
  application_name: string;
  connectionTimeoutMillis: number;
}

/**
 * LISTEN on a connection of its own. Never fails: a connection that cannot be made or is lost is
 * tried again until stopped (the dispatcher polls meanwhile).
 */
function listenPostgres(connection: ConnectionConfig, channel: string, onNotify: (payload: string) => void) {
  return heldConnection(connection, 'LISTEN', async (client) => {
    client.on('notification', (message) => onNotify(message.payload ?? ''));
    await client.query(`LISTEN "${channel}"`);
  });
}

/**
 * Holds the advisory lock `key` on a connection of its own, with TCP keepalives both ways so that
 * a host that vanishes (not only a process that dies) frees it within about half a minute. A lost
 * connection is made again at once, then every second, and the lock taken again, well within the
 * LIVENESS_GRACE_MS another instance waits before it counts this one gone. The first lock is taken
 * before the instance writes anything; failing there fails the start.
 */
function holdPostgresLiveness(connection: ConnectionConfig, key: string, onLost?: (error: unknown) => void) {
  return heldConnection(
    connection,
    'liveness',
    async (client) => {
      await client.query('SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3');
      await client.query('SELECT pg_advisory_lock($1::bigint)', [key]);
    },
    { required: true, keepAlive: true, onLost },
  );
}

/** After a loss, the first try to connect again comes this soon; the next ones a second apart. */
const RECONNECT_FIRST_MS = 50;
const RECONNECT_EVERY_MS = 1_000;

/**
 * A connection of its own that `setup` prepares (a LISTEN, an advisory lock), made again after
 * any loss (at once, then every second while it fails; `onLost` told once per loss) until the
 * function it returns stops it. `required`: the first connection's failure is thrown; otherwise
 * it is retried as a loss is.
 */
async function heldConnection(
  connection: ConnectionConfig,
  label: string,
  setup: (client: pg.Client) => Promise<void>,
  options: { required?: boolean; keepAlive?: boolean; onLost?: ((error: unknown) => void) | undefined } = {},
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  // Tries since the connection was last made: the first comes at once, then one a second.
  let tries = 0;
  // One way back after any loss: drop the connection, tell (once per loss), try again (once).
  const lost = (from: pg.Client | undefined, error: unknown) => {
    if (from !== client) return;
    client = undefined;
    from?.end().catch(() => {});
    if (stopped || retry) return;
    if (tries === 0) options.onLost?.(error);
    retry = setTimeout(
      () => {
        retry = undefined;
        tries++;
        void connect().catch((e: unknown) => lost(client, e));
      },
      tries === 0 ? RECONNECT_FIRST_MS : RECONNECT_EVERY_MS,
    ).unref();
  };
  const connect = async (): Promise<void> => {
    const next = new pg.Client({
      ...connection,
      ...(options.keepAlive ? { keepAlive: true, keepAliveInitialDelayMillis: 10_000 } : {}),
    });
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next, new Error(`the ${label} connection ended`)));
    client = next;
    await next.connect();
    await setup(next);
    if (client === next) tries = 0;
  };
  try {
    await connect();
  } catch (error) {
    if (options.required) {
      stopped = true;
      await client?.end().catch(() => {});
      throw error;
    }
    lost(client, error);
  }
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const last = client;
    client = undefined;
    await last?.end().catch(() => {});
  };
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= fn());
}

/**
 * Options of every interactive transaction: the embedded database runs one transaction at a time,
 * so under a burst (fifty bookings at once) a transaction may wait its turn well past Prisma's
 * 2 s default before it starts.
 */
export const TRANSACTION_OPTIONS = { maxWait: 20_000, timeout: 20_000 } as const;
