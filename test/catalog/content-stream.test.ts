import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * The content file streams with bounded memory (issue 19 item 5): over a real socket, a client
 * that has read only the first chunk of /channel/v1/content/files/content has made the service
 * ask the provider for at most two catalog pages (the one it starts with and the one it reads
 * ahead), however long it waits; a service that built the file in memory would have asked for all
 * of them. Read to the end, the file holds every property of the catalog, in both formats.
 */

const SIZE = 3_000;
/** The catalog's page size the file is read in (PropertyCatalog.pages). */
const PAGE = 500;

let t: TestService;
let origin: string;
let creds: IssuedCredentials;

async function providerPages(): Promise<number> {
  const res = await fetch(`${t.service.simulatorUrl}/_control/stats`);
  return ((await res.json()) as { by_route: Record<string, number> }).by_route['GET /properties'] ?? 0;
}

/** Records of a CSV text (RFC 4180: quoted fields may hold commas, quotes and line breaks). */
function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      record.push(field);
      field = '';
    } else if (ch === '\n') {
      record.push(field.replace(/\r$/, ''));
      records.push(record);
      record = [];
      field = '';
    } else field += ch;
  }
  if (field || record.length) records.push([...record, field]);
  return records;
}

beforeAll(async () => {
  t = await startTestService({ SIMULATOR_SIZE: String(SIZE) });
  origin = `http://127.0.0.1:${await t.service.listen(0)}`;
  creds = await t.channel({ name: 'Content Stream' });
}, 120_000);
afterAll(() => t?.close());

/**
 * Opens the file, reads one chunk, waits, and counts the provider pages asked so far; then reads
 * the rest and counts again.
 */
async function download(format: 'json' | 'csv') {
  const before = await providerPages();
  const res = await request(`${origin}/channel/v1/content/files/content?format=${format}`, {
    headers: { ...apiKey(creds), 'accept-language': 'en-US' },
  });
  expect(res.statusCode).toBe(200);
  const chunks = (res.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const first = await chunks.next();
  expect(first.done).toBe(false);
  // Time for a service that does not wait for the client to run ahead as far as it would.
  await new Promise((r) => setTimeout(r, 1_000));
  const atFirstChunk = (await providerPages()) - before;
  const parts: Buffer[] = [first.value as Buffer];
  for (let next = await chunks.next(); !next.done; next = await chunks.next()) parts.push(next.value as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  return { headers: res.headers, atFirstChunk, pages: (await providerPages()) - before, text };
}

describe(`the content file of ${SIZE} properties`, () => {
  let ratePlans = 0;

  it('JSON streams: the provider has served at most two pages when the client has read one chunk; all of it at the end', async () => {
    const d = await download('json');
    expect(d.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(d.atFirstChunk).toBeGreaterThanOrEqual(1);
    expect(d.atFirstChunk).toBeLessThanOrEqual(2);
    expect(d.pages).toBe(SIZE / PAGE);
    const items = JSON.parse(d.text) as { id: number; room_types: { rate_plans: unknown[] }[] }[];
    expect(items).toHaveLength(SIZE);
    expect(new Set(items.map((p) => p.id)).size).toBe(SIZE);
    expect(items[0]!.id).toBe(1);
    expect(items.at(-1)!.id).toBe(SIZE);
    ratePlans = items.reduce((n, p) => n + p.room_types.reduce((m, r) => m + r.rate_plans.length, 0), 0);
    expect(ratePlans).toBeGreaterThan(SIZE);
  }, 180_000);

  it('CSV streams the same way, one row per rate plan of every property', async () => {
    const d = await download('csv');
    expect(d.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(d.atFirstChunk).toBeGreaterThanOrEqual(1);
    expect(d.atFirstChunk).toBeLessThanOrEqual(2);
    expect(d.pages).toBe(SIZE / PAGE);
    const [header, ...rows] = csvRecords(d.text);
    expect(header![0]).toBe('property_id');
    expect(rows).toHaveLength(ratePlans);
    expect(new Set(rows.map((r) => r[0])).size).toBe(SIZE);
  }, 180_000);
});
