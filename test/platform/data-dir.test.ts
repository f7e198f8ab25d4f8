import { spawn } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createService } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { cleanupEnv, startTestServiceOn, testEnv } from '../helpers/service.js';

/**
 * DATA_DIR (the embedded database, whose WAL holds webhook and token-signing secrets and guests'
 * data; the operator token; the voucher e-mails) is the service user's only: 0700 directories and
 * 0600 files, an existing tree tightened at every start, PGlite's own files included (it writes
 * them 0666). And production does not start on the embedded database unless an operator says so.
 */

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** Every entry under `dir` (itself included) whose mode is not 0700 (directories) or 0600 (files). */
function looseModes(dir: string): string[] {
  const loose: string[] = [];
  const walk = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    const mode = stat.mode & 0o777;
    const want = stat.isDirectory() ? 0o700 : 0o600;
    if (mode !== want) loose.push(`${path.slice(dir.length) || '/'} ${mode.toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return loose;
}

describe('DATA_DIR', () => {
  it('is made 0700 with every file 0600, and an existing world-readable tree is tightened at each start', async () => {
    const env = testEnv();
    const dir = env.DATA_DIR!;
    // A tree as an older version left it: world-readable directories and files.
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, 'outbox-mail'), { mode: 0o755 });
    writeFileSync(join(dir, 'outbox-mail', 'old.eml'), 'From: x\r\n\r\nold', { mode: 0o644 });
    writeFileSync(join(dir, 'admin-token'), 'adm_old_token_kept_for_the_test_0000\n', { mode: 0o666 });
    chmodSync(join(dir, 'admin-token'), 0o666);
    // A link is not followed: what it points at is not the service's to change.
    const outside = mkdtempSync(join(tmpdir(), 'channel-outside-'));
    made.push(outside);
    writeFileSync(join(outside, 'shared.txt'), 'not ours');
    chmodSync(join(outside, 'shared.txt'), 0o644);
    symlinkSync(join(outside, 'shared.txt'), join(dir, 'link'));
    expect(looseModes(dir).length).toBeGreaterThan(0);

    try {
      for (let start = 0; start < 2; start++) {
        const t = await startTestServiceOn(env);
        try {
          // Running: the database files, the operator token, the old mail, all of it.
          expect(looseModes(dir)).toEqual([]);
          if (t.service.deps.db.kind === 'pglite') expect(readdirSync(join(dir, 'pglite')).length).toBeGreaterThan(5);
        } finally {
          await t.close();
        }
        // PGlite rewrites some files at open: each start tightens them again.
        expect(looseModes(dir)).toEqual([]);
      }
      expect(lstatSync(join(outside, 'shared.txt')).mode & 0o777).toBe(0o644);
    } finally {
      await cleanupEnv(env);
    }
  }, 120_000);
});

describe('production on the embedded database', () => {
  /** An environment without DATABASE_URL whatever this run's database is: the embedded one. */
  function embedded(extra: Record<string, string> = {}): Record<string, string> {
    const dataDir = mkdtempSync(join(tmpdir(), 'channel-prod-'));
    made.push(dataDir);
    return { DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', CHANNEL_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com', BOOKING_SYNC_INTERVAL_MS: '0', BOOKING_RECOVERY_INTERVAL_MS: '0', ...extra };
  }

  it('refuses to start without DATABASE_URL, with a ConfigError saying so, before it writes anything', async () => {
    const env = embedded();
    const refused = createService(loadConfig(env));
    await expect(refused).rejects.toBeInstanceOf(ConfigError);
    await expect(refused).rejects.toThrow(/CHANNEL_ENV=production needs DATABASE_URL \(PostgreSQL\).*ALLOW_EMBEDDED_DATABASE_IN_PRODUCTION=true/s);
    expect(readdirSync(env.DATA_DIR!)).toEqual([]);
  });

  it('the process exits with code 2 and the message, as for any bad configuration', async () => {
    const env = embedded();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('CHANNEL_ENV=production needs DATABASE_URL');
  }, 60_000);

  it('starts when an operator sets ALLOW_EMBEDDED_DATABASE_IN_PRODUCTION=true, and says so at error level', async () => {
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const service = await createService(loadConfig(embedded({ ALLOW_EMBEDDED_DATABASE_IN_PRODUCTION: 'true' })), { logger: pino({ level: 'info' }, sink) });
    try {
      expect(service.deps.db.kind).toBe('pglite');
      expect(service.deps.config.env).toBe('production');
      expect(lines.find((l) => l.msg.includes('production runs on the embedded database'))?.level).toBe(50);
    } finally {
      await service.close();
    }
  }, 60_000);
});
