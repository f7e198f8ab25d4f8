import { Client, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { day } from '../helpers/flow.js';
import { startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
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

describe('places and the write timeout', () => {
  let t: TestService;
  let origin: string;
  let a: IssuedCredentials;
  let b: IssuedCredentials;
  let c: IssuedCredentials;
  const clients: Client[] = [];

  beforeAll(async () => {
    // Large enough that a reader taking nothing stalls the file well before its end.
    t = await startTestService({ SIMULATOR_SIZE: '8000', DOWNLOADS_PER_CHANNEL: '2', DOWNLOADS_PER_INSTANCE: '3', DOWNLOAD_WRITE_TIMEOUT_MS: '1500' });
    origin = `http://127.0.0.1:${await t.service.listen(0)}`;
    [a, b, c] = await Promise.all([t.channel({ name: 'Downloads A' }), t.channel({ name: 'Downloads B' }), t.channel({ name: 'Downloads C' })]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.destroy()));
    await t?.close();
  });

  /** Opens the file over a connection of its own and reads its first chunk, then nothing more. */
  async function stalled(who: IssuedCredentials): Promise<{ res: Dispatcher.ResponseData; rest: AsyncIterator<Buffer> }> {
    const client = new Client(origin);
    clients.push(client);
    const res = await client.request({ method: 'GET', path: FILE, headers: apiKey(who) });
    expect(res.statusCode).toBe(200);
    const rest = (res.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    expect((await rest.next()).done).toBe(false);
    return { res, rest };
  }

  it('the third download of a channel is 429, the fourth of the instance 503; readers that take nothing are cut and their places freed', async () => {
    const held = [await stalled(a), await stalled(a)];
    const third = await t.request(FILE, { headers: apiKey(a) });
    const error = await expectError(third, 429, 'RATE_LIMIT_EXCEEDED');
    expect(third.headers.get('retry-after')).toBe('5');
    expect(error.details).toMatchObject({ limit: 2 });
    held.push(await stalled(b));
    const full = await t.request(FILE, { headers: apiKey(c) });
    await expectError(full, 503, 'SERVICE_UNAVAILABLE');
    expect(full.headers.get('retry-after')).toBe('5');
    expect(t.service.deps.downloads.inProgress).toBe(3);

    // Nobody reads: after the write timeout each connection is closed and its place given back.
    const started = Date.now();
    while (t.service.deps.downloads.inProgress > 0 && Date.now() - started < 15_000) await new Promise((r) => setTimeout(r, 100));
    expect(t.service.deps.downloads.inProgress).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    // Each reader finds its file cut short: reading on ends in an error, never the closing bracket.
    for (const { rest } of held) {
      let text = '';
      const outcome = await (async () => {
        for (let next = await rest.next(); !next.done; next = await rest.next()) text += next.value.toString('utf8');
        return 'ended';
      })().catch(() => 'cut');
      expect(outcome === 'cut' || !text.endsWith(']')).toBe(true);
    }
    // The places are free again: the channel downloads, and a reader that keeps reading gets all of it.
    const again = await t.request(FILE, { headers: apiKey(a) });
    expect(again.status).toBe(200);
    const items = (await again.json()) as unknown[];
    expect(items).toHaveLength(8000);
    expect(t.service.deps.downloads.inProgress).toBe(0);
  }, 90_000);
});

describe('a burst of downloads failing at the provider', () => {
  let simulator: RunningSimulator;
  let proxy: FaultProxy;
  let t: TestService;
  let partner: IssuedCredentials;

  beforeAll(async () => {
    simulator = await startSimulator({ port: 0, host: '127.0.0.1' });
    proxy = await startFaultProxy(simulator.url);
    t = await startTestService({ UPSTREAM_URL: proxy.url, UPSTREAM_BREAKER_THRESHOLD: '3', UPSTREAM_BREAKER_COOLDOWN_MS: '60000', SEARCH_CACHE_TTL_MS: '0' });
    partner = await t.channel({ name: 'Searching Partner' });
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await simulator?.close();
  });

  const search = () => t.request(`/channel/v1/search/availability/1?checkin=${day(30)}&checkout=${day(32)}&adults=2`, { headers: apiKey(partner) });

  it("opens the downloads' breaker only: a partner's search is still answered", async () => {
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
