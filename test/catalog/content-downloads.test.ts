import { Client, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { startBreakerRig, type BreakerRig } from '../helpers/faultProxy.js';
import { expectError } from '../helpers/http.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * Content-file downloads are bounded: at most DOWNLOADS_PER_CHANNEL at once per channel (the next
 * is 429 RATE_LIMIT_EXCEEDED) and DOWNLOADS_PER_INSTANCE on the instance (the next is 503
 * SERVICE_UNAVAILABLE), both with Retry-After; a reader that takes nothing for
 * DOWNLOAD_WRITE_TIMEOUT_MS is cut and its place given back; and a burst of downloads failing
 * at the provider opens only the downloads' breaker, so partners' searches are still answered.
 */

const FILE = '/channel/v1/content/files/content?format=json';

/** Opens the file over a connection of its own and reads its first chunk, then nothing more. */
async function stalled(origin: string, clients: Client[], who: IssuedCredentials): Promise<{ res: Dispatcher.ResponseData; rest: AsyncIterator<Buffer> }> {
  const client = new Client(origin);
  clients.push(client);
  const res = await client.request({ method: 'GET', path: FILE, headers: apiKey(who) });
  expect(res.statusCode).toBe(200);
  const rest = (res.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  expect((await rest.next()).done).toBe(false);
  return { res, rest };
}

/** Until `done()` holds, polled every 100 ms for at most 15 s. */
async function until(done: () => boolean): Promise<void> {
  const started = Date.now();
  while (!done() && Date.now() - started < 15_000) await new Promise((r) => setTimeout(r, 100));
}

describe('places', () => {
  let t: TestService;
  let origin: string;
  let a: IssuedCredentials;
  let b: IssuedCredentials;
  let c: IssuedCredentials;
  const clients: Client[] = [];

  beforeAll(async () => {
    // Large enough that a reader taking nothing stalls the file well before its end; no reader is
    // cut while the places are tried, however loaded the machine (the write timeout has its own
    // test), nor ends by a page of the file the loaded machine's provider is slow to give.
    t = await startTestService({
      SIMULATOR_SIZE: '8000',
      DOWNLOADS_PER_CHANNEL: '2',
      DOWNLOADS_PER_INSTANCE: '3',
      DOWNLOAD_WRITE_TIMEOUT_MS: '120000',
      UPSTREAM_CONTENT_TIMEOUT_MS: '60000',
    });
    origin = `http://127.0.0.1:${await t.service.listen(0)}`;
    [a, b, c] = await Promise.all([t.channel({ name: 'Downloads A' }), t.channel({ name: 'Downloads B' }), t.channel({ name: 'Downloads C' })]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.destroy()));
    await t?.close();
  });

  it('the third download of a channel is 429, the fourth of the instance 503; a reader that leaves gives its place back', async () => {
    const held = [await stalled(origin, clients, a), await stalled(origin, clients, a)];
    const third = await t.request(FILE, { headers: apiKey(a) });
    const error = await expectError(third, 429, 'RATE_LIMIT_EXCEEDED');
    expect(third.headers.get('retry-after')).toBe('5');
    expect(error.details).toMatchObject({ limit: 2 });
    held.push(await stalled(origin, clients, b));
    const full = await t.request(FILE, { headers: apiKey(c) });
    await expectError(full, 503, 'SERVICE_UNAVAILABLE');
    expect(full.headers.get('retry-after')).toBe('5');
    expect(t.service.deps.downloads.inProgress).toBe(3);

    // The readers hang up: their places are given back.
    await Promise.all(clients.map((client) => client.destroy()));
    await until(() => t.service.deps.downloads.inProgress === 0);
    expect(t.service.deps.downloads.inProgress).toBe(0);
    const again = await t.request(FILE, { headers: apiKey(c) });
    expect(again.status).toBe(200);
    expect((await again.json()) as unknown[]).toHaveLength(8000);
    expect(t.service.deps.downloads.inProgress).toBe(0);
  }, 90_000);
});

describe('the write timeout', () => {
  let t: TestService;
  let origin: string;
  let a: IssuedCredentials;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestService({ SIMULATOR_SIZE: '8000', DOWNLOAD_WRITE_TIMEOUT_MS: '1500' });
    origin = `http://127.0.0.1:${await t.service.listen(0)}`;
    a = await t.channel({ name: 'Stalling Reader' });
  }, 120_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.destroy()));
    await t?.close();
  });

  it('a reader that takes nothing is cut after DOWNLOAD_WRITE_TIMEOUT_MS and its place freed; one that reads gets all of it', async () => {
    const opened = Date.now();
    const held = await stalled(origin, clients, a);
    expect(t.service.deps.downloads.inProgress).toBe(1);
    await until(() => t.service.deps.downloads.inProgress === 0);
    expect(t.service.deps.downloads.inProgress).toBe(0);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(1_500);
    // The reader finds its file cut short: reading on ends in an error, never the closing bracket.
    let text = '';
    const outcome = await (async () => {
      for (let next = await held.rest.next(); !next.done; next = await held.rest.next()) text += next.value.toString('utf8');
      return 'ended';
    })().catch(() => 'cut');
    expect(outcome === 'cut' || !text.endsWith(']')).toBe(true);
    const again = await t.request(FILE, { headers: apiKey(a) });
    expect(again.status).toBe(200);
    expect((await again.json()) as unknown[]).toHaveLength(8000);
    expect(t.service.deps.downloads.inProgress).toBe(0);
  }, 90_000);
});

describe('a burst of downloads failing at the provider', () => {
  let rig: BreakerRig;
  beforeAll(async () => {
    rig = await startBreakerRig('Searching Partner');
  });
  afterAll(() => rig?.close());

  it("opens the downloads' breaker only: a partner's search is still answered", async () => {
    const { t, proxy, search } = rig;
    expect((await search()).status).toBe(200);
    // The provider fails every catalog page; searches still reach it.
    proxy.rule = (req) => (req.path.startsWith('/properties?') ? 'fail' : 'forward');
    const downloaders = await Promise.all(Array.from({ length: 5 }, (_, i) => t.channel({ name: `Burst ${i}` })));
    const burst = await Promise.all(downloaders.flatMap((who) => [t.request(FILE, { headers: apiKey(who) }), t.request(FILE, { headers: apiKey(who) })]));
    for (const res of burst) {
      expect([502, 503]).toContain(res.status);
      await res.arrayBuffer();
    }
    expect(t.service.deps.upstream.circuitOf('downloads')).toBe('open');
    expect(t.service.deps.upstream.circuit).toBe('closed');
    const answered = await search();
    expect(answered.status).toBe(200);
    expect(proxy.hits.at(-1)!.path).toMatch(/^\/availability/);
    expect(t.service.deps.downloads.inProgress).toBe(0);
  });
});
