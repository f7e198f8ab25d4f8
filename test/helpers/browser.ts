import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Debian's Chromium driven by playwright-core, the one way the browser tests start it: headless,
 * no sandbox, a fresh profile, and no traffic of its own (background networking, component
 * updates, sync off). `hostResolverRules` limits what names resolve, so a page can reach only
 * what the test serves.
 */

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface Browser {
  context: BrowserContext;
  /** Closes the browser and deletes its profile. */
  close(): Promise<void>;
}

export async function launchChromium(options: {
  /** Names the temporary profile directory. */
  name: string;
  viewport?: { width: number; height: number };
  /** Chromium's --host-resolver-rules, e.g. `MAP * ~NOTFOUND , EXCLUDE 127.0.0.1`. */
  hostResolverRules?: string;
}): Promise<Browser> {
  expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: run bash scripts/ensure-chromium.sh (npm test does)`).toBe(true);
  const profile = mkdtempSync(join(tmpdir(), `${options.name}-chromium-`));
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  if (options.hostResolverRules) args.push(`--host-resolver-rules=${options.hostResolverRules}`);
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      ...(options.viewport && { viewport: options.viewport }),
      args,
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  return {
    context,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
