import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { ConfigError } from '../services/kernel/index.js';

/**
 * DATA_DIR holds the embedded database (whose WAL carries webhook signing secrets, the token
 * signing secret and guests' personal data), the operator token and the voucher e-mails: only
 * the service's own user may read it. The directory and every directory under it are 0700, every
 * file 0600 (docs/decisions.md, "Hardening: database and Redis failures").
 */
export const DATA_DIR_MODE = 0o700;
export const DATA_FILE_MODE = 0o600;

/**
 * Makes DATA_DIR (0700) if it is missing and tightens what is there: directories to 0700, files
 * to 0600, symbolic links left as they are (never followed). PGlite writes the files of a new
 * database 0666 and rewrites a few at each start 0644 whatever the umask, so this runs before the
 * database opens and again once it has opened and migrated. Returns how many modes it changed.
 */
export function secureDataDir(dir: string): number {
  mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  let changed = 0;
  const tighten = (path: string, mode: number, current: number) => {
    if ((current & 0o777) === mode) return;
    chmodSync(path, mode);
    changed++;
  };
  // Depth first without recursion: PGlite's tree is a few levels deep, but nothing bounds another's.
  const pending = [dir];
  while (pending.length) {
    const at = pending.pop()!;
    const stat = lstatSync(at);
    if (stat.isSymbolicLink()) continue;
    if (stat.isDirectory()) {
      tighten(at, DATA_DIR_MODE, stat.mode);
      for (const name of readdirSync(at)) pending.push(join(at, name));
    } else if (stat.isFile()) {
      tighten(at, DATA_FILE_MODE, stat.mode);
    }
  }
  return changed;
}

/**
 * Production runs on PostgreSQL: the embedded database is one process's own (no second instance,
 * no failover), so CHANNEL_ENV=production without DATABASE_URL refuses to start, unless an
 * operator sets ALLOW_EMBEDDED_DATABASE_IN_PRODUCTION=true (logged at every start, deps.ts).
 */
export function refuseEmbeddedInProduction(config: Pick<Config, 'env' | 'databaseUrl' | 'allowEmbeddedDatabaseInProduction'>): void {
  if (config.env !== 'production' || config.databaseUrl || config.allowEmbeddedDatabaseInProduction) return;
  throw new ConfigError(
    'CHANNEL_ENV=production needs DATABASE_URL (PostgreSQL): the embedded database under DATA_DIR is one process\'s own, ' +
      'with no second instance and no failover. Set DATABASE_URL, or ALLOW_EMBEDDED_DATABASE_IN_PRODUCTION=true to run production on it anyway',
  );
}
