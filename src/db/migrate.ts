import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Database } from './client.js';

/**
 * Applies prisma/migrations/<name>/migration.sql in order, recording each in Prisma's own
 * `_prisma_migrations` table (same columns and checksums), so `prisma migrate deploy` and this
 * runner agree about what has been applied. Used because the Prisma CLI's schema-engine binary
 * cannot be downloaded everywhere; the SQL itself stays in Prisma's layout.
 */

const HISTORY_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
);`;

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

interface HistoryRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** The migrations folder of the project, found from this file whether run from src/ or dist/. */
export function migrationsDir(): string {
  let dir = import.meta.dirname;
  for (;;) {
    const candidate = join(dir, 'prisma', 'migrations');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new MigrationError('prisma/migrations not found above ' + import.meta.dirname);
    dir = parent;
  }
}

export function readMigrations(dir = migrationsDir()): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/** Applies every pending migration; returns the names applied. Safe to run from several instances. */
export async function migrate(db: Database, migrations = readMigrations()): Promise<string[]> {
  return db.withMigrationLock(async () => {
    await db.runScript(HISTORY_TABLE);
    const history = await db.rows<HistoryRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"',
    );
    const applied = new Map<string, HistoryRow>();
    for (const row of history) {
      if (row.rolled_back_at) continue;
      if (!row.finished_at) {
        throw new MigrationError(`migration ${row.migration_name} failed earlier; repair the database first`);
      }
      applied.set(row.migration_name, row);
    }

    const done: string[] = [];
    for (const migration of migrations) {
      const previous = applied.get(migration.name);
      if (previous) {
        if (previous.checksum !== migration.checksum) {
          throw new MigrationError(`migration ${migration.name} was changed after it was applied`);
        }
        continue;
      }
      // One simple-protocol script runs as one implicit transaction: the migration and its
      // history row commit together, or neither does.
      const id = randomUUID();
      await db
        .runScript(
          `${migration.sql}\n;INSERT INTO "_prisma_migrations" ` +
            `(id, checksum, migration_name, finished_at, applied_steps_count) VALUES ` +
            `('${id}', '${migration.checksum}', '${migration.name.replaceAll("'", "''")}', now(), 1);`,
        )
        .catch((error: unknown) => {
          throw new MigrationError(`migration ${migration.name} failed: ${(error as Error).message}`);
        });
      done.push(migration.name);
    }
    return done;
  });
}
