import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { Config } from '../config.js';
import { PrismaClient } from '../generated/prisma/client.js';

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
  close(): Promise<void>;
}

// Prisma's own advisory lock id, so this runner and `prisma migrate deploy` exclude each other.
const MIGRATION_LOCK_ID = 72707369;

export async function openDatabase(config: Config): Promise<Database> {
  return config.databaseUrl ? openPostgres(config.databaseUrl, config.databaseSchema) : openPglite(config);
}

async function openPostgres(url: string, schema: string): Promise<Database> {
  const searchPath = `-c search_path="${schema}"`;
  // A small pool of its own for migrations and health checks; Prisma keeps its own pool.
  const pool = new pg.Pool({ connectionString: url, options: searchPath, max: 2 });
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
    adapter: new PrismaPg({ connectionString: url, options: searchPath, max: 10 }, { schema }),
  });
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
    listen: (channel, onNotify) => listenPostgres(url, channel, onNotify),
    close: once(async () => {
      await prisma.$disconnect();
      await pool.end();
    }),
  };
}

async function openPglite(config: Config): Promise<Database> {
  const dir = join(config.dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(db) });
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
    close: once(async () => {
      await prisma.$disconnect();
      await db.close();
    }),
  };
}

/**
 * LISTEN on a connection of its own. Never fails: a connection that cannot be made or is lost is
 * tried again every second until stopped (the dispatcher polls meanwhile).
 */
async function listenPostgres(url: string, channel: string, onNotify: (payload: string) => void) {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    if (stopped) return;
    const next = new pg.Client({ connectionString: url });
    const reconnect = () => {
      if (client !== next) return;
      client = undefined;
      next.end().catch(() => {});
      if (!stopped) retry = setTimeout(() => void connect(), 1_000).unref();
    };
    next.on('error', reconnect);
    next.on('end', reconnect);
    next.on('notification', (message) => onNotify(message.payload ?? ''));
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN "${channel}"`);
    } catch {
      reconnect();
    }
  };
  await connect();
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
