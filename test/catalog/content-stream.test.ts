import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * The content file streams with bounded memory (issue 19 item 5). Over a real socket, a client
 * reads the first chunk of /channel/v1/content/files/content and then stops reading: the service
 * goes on only as far as the connection takes (the page it is writing, the one it has read ahead,
 * and what the kernel's socket buffers hold, a few MB on loopback: 2 or 3 pages of ~2 MB here),
 * then stops asking the provider for pages and stays stopped however long the client waits; a
 * service that built the file in memory would ask for every page. Read to the end, the file holds
 * every property of the catalog once, in both formats.
 */

const SIZE = 8_000;
/** The catalog's page size the file is read in (PropertyCatalog.pages). */
const PAGE = 500;
/**
 * Pages the service may have asked for while the client reads nothing: two of its own, and the
 * socket buffers' worth (4 to 5 pages in all, measured here); at most half the file.
 */
const LEAD = 8;

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
  // A connection of its own: a connection that has carried a file fast has grown its socket
  // buffers (Linux autotunes them up to tens of MB), which would hold more of the next one.
  const client = new Client(origin);
  const res = await client.request({
    method: 'GET',
    path: `/channel/v1/content/files/content?format=${format}`,
    headers: { ...apiKey(creds), 'accept-language': 'en-US' },
  });
  expect(res.statusCode).toBe(200);
  const chunks = (res.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const first = await chunks.next();
  expect(first.done).toBe(false);
  // The client reads nothing more: wait until the service has stopped asking for pages (no new
  // page for a whole second), and check that it stays stopped.
  let stalled = (await providerPages()) - before;
  for (let quiet = 0, waited = 0; quiet < 1_000 && waited < 20_000; waited += 250) {
    await new Promise((r) => setTimeout(r, 250));
    const now = (await providerPages()) - before;
    quiet = now === stalled ? quiet + 250 : 0;
    stalled = now;
  }
  await new Promise((r) => setTimeout(r, 1_000));
  const later = (await providerPages()) - before;
  const parts: Buffer[] = [first.value as Buffer];
  for (let next = await chunks.next(); !next.done; next = await chunks.next()) parts.push(next.value as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  await client.close();
  return { headers: res.headers, stalled, later, pages: (await providerPages()) - before, text };
}

describe(`the content file of ${SIZE} properties`, () => {
  let ratePlans = 0;

  it('JSON streams: while the client reads nothing, the service stops within a few pages; all of it at the end', async () => {
    const d = await download('json');
    expect(d.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(d.stalled).toBeGreaterThanOrEqual(1);
    expect(d.stalled).toBeLessThanOrEqual(LEAD);
    expect(d.later).toBe(d.stalled);
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
    expect(d.stalled).toBeGreaterThanOrEqual(1);
    expect(d.stalled).toBeLessThanOrEqual(LEAD);
    expect(d.later).toBe(d.stalled);
    expect(d.pages).toBe(SIZE / PAGE);
    const [header, ...rows] = csvRecords(d.text);
    expect(header![0]).toBe('property_id');
    expect(rows).toHaveLength(ratePlans);
    expect(new Set(rows.map((r) => r[0])).size).toBe(SIZE);
  }, 180_000);
});
