import type { Config } from '../../config.js';
import { ConfigError } from './errors.js';
import type { Database } from '../../db/client.js';

/**
 * A database belongs to one environment (docs/decisions.md, "Environments"). The first instance
 * that starts on it records its CHANNEL_ENV in the `settings` table; an instance of the other
 * environment refuses to start, before it writes anything (migrations included), so a sandbox
 * pointed at the production database (or the other way round) never serves. On PostgreSQL the
 * record lives in DATABASE_SCHEMA: each schema is a database of its own here.
 */

export type Environment = Config['env'];

const ENVIRONMENT_SETTING = 'environment';

/** The start is refused: the database is recorded for another environment. A configuration error (main.ts exits 2). */
export class EnvironmentMismatchError extends ConfigError {
  override name = 'EnvironmentMismatchError';
  constructor(
    readonly recorded: string,
    readonly configured: Environment,
    where: string,
  ) {
    super(
      `this database belongs to the ${recorded} environment; CHANNEL_ENV is ${configured} (${where}). ` +
        `Each environment keeps its own database: point this instance at the ${configured} database, or start it with CHANNEL_ENV=${recorded}.`,
    );
  }
}

function whereOf(config: Config): string {
  return config.databaseUrl ? `PostgreSQL schema "${config.databaseSchema}"` : `DATA_DIR ${config.dataDir}`;
}

function refuseOther(recorded: string | undefined, config: Config): void {
  if (recorded !== undefined && recorded !== config.env) throw new EnvironmentMismatchError(recorded, config.env, whereOf(config));
}

/**
 * Before migrations: refuses a database already recorded for another environment. Reads only
 * (a database without the settings table, new or from before this rule, is checked by
 * claimEnvironment once migrated).
 */
export async function checkEnvironment(db: Database, config: Config): Promise<void> {
  const [table] = await db.rows<{ present: boolean }>(`SELECT to_regclass('settings') IS NOT NULL AS "present"`);
  if (!table?.present) return;
  const [row] = await db.rows<{ value: string }>(`SELECT "value" FROM "settings" WHERE "key" = $1`, [ENVIRONMENT_SETTING]);
  refuseOther(row?.value, config);
}

/**
 * After migrations, before anything else is written: records this instance's environment if the
 * database has none (a new database, or one from before this rule: the first instance that starts
 * claims it), then reads the record back and refuses another environment. Instances starting
 * together agree: the first insert wins and everyone compares with it.
 */
export async function claimEnvironment(db: Database, config: Config): Promise<Environment> {
  const { prisma } = db;
  await prisma.setting.createMany({ data: [{ key: ENVIRONMENT_SETTING, value: config.env }], skipDuplicates: true });
  const recorded = await prisma.setting.findUniqueOrThrow({ where: { key: ENVIRONMENT_SETTING } });
  refuseOther(recorded.value, config);
  return config.env;
}
