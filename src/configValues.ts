import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { normalizeIpEntry } from './services/kernel/index.js';

/** The value forms of src/config.ts's variables: flags, address lists, origins, OTEL pairs, durations. */

export const flag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** A comma-separated list of addresses or CIDR ranges, normalised; `words` stand in it as they are. */
export function addressList(words: readonly string[] = []) {
  return z.string().default('').transform((v, ctx) => {
    const entries = v.split(',').map((s) => s.trim()).filter(Boolean);
    const results = entries.map((entry) => (words.includes(entry) ? { value: entry } : normalizeIpEntry(entry)));
    const bad = results.findIndex((r) => 'error' in r);
    if (bad < 0) return results.map((r) => (r as { value: string }).value);
    ctx.addIssue({ code: 'custom', message: `"${entries[bad]}": ${(results[bad] as { error: string }).error}` });
    return z.NEVER;
  });
}

export const absolute = (path: string): string => (isAbsolute(path) ? path : resolve(process.cwd(), path));

/** scheme://host[:port] and nothing else, as browsers send in the Origin header. */
export function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === text;
  } catch {
    return false;
  }
}

/** The OTEL_* list form: key=value pairs separated by commas, values percent-encoded (W3C Baggage octets). */
export function otelPairs(text: string, ctx: z.RefinementCtx): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const item of text.split(',')) {
    if (!item.trim()) continue;
    const eq = item.indexOf('=');
    const key = eq > 0 ? item.slice(0, eq).trim() : '';
    let value: string | undefined;
    try {
      value = eq > 0 ? decodeURIComponent(item.slice(eq + 1).trim()) : undefined;
    } catch {
      value = undefined;
    }
    if (!key || value === undefined) {
      ctx.addIssue({ code: 'custom', message: `"${item.trim()}" is not key=value (values URL-encoded)` });
      return z.NEVER;
    }
    pairs[key] = value;
  }
  return pairs;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** "500ms", "5s", "5m", "2h" in milliseconds; undefined when it is none of these. */
export function durationMs(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text);
  return match ? Math.round(Number(match[1]) * DURATION_UNITS[match[2]!]!) : undefined;
}
