import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { migrate, MigrationError, readMigrations } from '../../src/db/migrate.js';
import { cleanupEnv, testEnv } from '../helpers/service.js';

let env: Record<string, string>;
let db: Database;

beforeAll(async () => {
  env = testEnv();
  db = await openDatabase(loadConfig(env));
});
afterAll(async () => {
  await db.close();
  await cleanupEnv(env);
});

describe('migration runner', () => {
  it('applies every migration once, records it as Prisma does, and is idempotent', async () => {
    const all = readMigrations();
    expect(await migrate(db, all)).toEqual(all.map((m) => m.name));
    expect(await migrate(db, all)).toEqual([]);
    const rows = await db.rows<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" ORDER BY migration_name',
    );
    expect(rows.map((r) => [r.migration_name, r.checksum])).toEqual(all.map((m) => [m.name, m.checksum]));
    expect(rows.every((r) => r.finished_at !== null)).toBe(true);
  });

  it('refuses to run when an applied migration was edited', async () => {
    const [first, ...rest] = readMigrations();
    const edited = { ...first!, checksum: '0'.repeat(64) };
    await expect(migrate(db, [edited, ...rest])).rejects.toBeInstanceOf(MigrationError);
  });

  it('rolls a failing migration back whole, recording nothing', async () => {
    const broken = { name: '99999999999999_broken', sql: 'CREATE TABLE "half_made" (id INT);\nSELECT * FROM "no_such_table";', checksum: 'x'.repeat(64) };
    await expect(migrate(db, [...readMigrations(), broken])).rejects.toThrow(/99999999999999_broken failed/);
    const tables = await db.rows<{ n: number }>("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'half_made'");
    expect(tables[0]!.n).toBe(0);
    const recorded = await db.rows<{ n: number }>(`SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE migration_name = '${broken.name}'`);
    expect(recorded[0]!.n).toBe(0);
  });

  it('keeps the balance from going negative at the database level', async () => {
    const channel = await db.prisma.channel.create({ data: { name: 'c' } });
    await expect(db.prisma.channel.update({ where: { id: channel.id }, data: { balance: -1n } })).rejects.toThrow();
  });
});
