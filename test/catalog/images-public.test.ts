import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { startBreakerRig, type BreakerRig } from '../helpers/faultProxy.js';
import { expectError } from '../helpers/http.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * What a stranger can make the public image route ask of the provider (no credential): a property
 * the provider does not have is looked up once, then answered 404 from memory for
 * IMAGE_NOT_FOUND_TTL_MS, however many ask and however often; and the route's provider calls
 * count on a breaker of their own, so failures forced through it leave partners' searches answered.
 */

/** Requests the provider received for property content and images (the simulator's counters). */
async function contentCalls(simulatorUrl: string): Promise<number> {
  const res = await fetch(`${simulatorUrl}/_control/stats`);
  const byRoute = ((await res.json()) as { by_route: Record<string, number> }).by_route;
  return Object.entries(byRoute)
    .filter(([route]) => route.startsWith('GET /images') || route.startsWith('POST /properties/batch') || route.startsWith('GET /properties/'))
    .reduce((n, [, count]) => n + count, 0);
}

describe('unknown property ids', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.close());

  it('60 requests on 3 unknown ids, at once and again, make at most 3 provider calls; each is 404 NOT_FOUND', async () => {
    const ids = [900_001, 900_002, 900_003];
    const before = await contentCalls(t.service.simulatorUrl!);
    const paths = Array.from({ length: 60 }, (_, i) => `/images/${ids[i % 3]}/abc/large.png`);
    // Half at once (one lookup per id however many ask), half after (remembered as unknown).
    const first = await Promise.all(paths.slice(0, 30).map((path) => t.request(path)));
    const later: Response[] = [];
    for (const path of paths.slice(30)) later.push(await t.request(path));
    for (const res of [...first, ...later]) await expectError(res, 404, 'NOT_FOUND');
    expect((await contentCalls(t.service.simulatorUrl!)) - before).toBeLessThanOrEqual(3);
    expect(t.service.deps.images.stats().known404).toBeGreaterThanOrEqual(30);
  });

  it('another image id of a remembered unknown property asks nothing either', async () => {
    await t.request('/images/900004/abc/large.png');
    const before = await contentCalls(t.service.simulatorUrl!);
    for (const image of ['x', 'y', 'z']) await expectError(await t.request(`/images/900004/${image}/thumbnail.png`), 404, 'NOT_FOUND');
    expect(await contentCalls(t.service.simulatorUrl!)).toBe(before);
  });

  it('with IMAGE_NOT_FOUND_TTL_MS=0 nothing is remembered (the setting is what bounds it)', async () => {
    const off = await startTestService({ IMAGE_NOT_FOUND_TTL_MS: '0' });
    try {
      const before = await contentCalls(off.service.simulatorUrl!);
      for (let i = 0; i < 3; i++) await expectError(await off.request('/images/900001/abc/large.png'), 404, 'NOT_FOUND');
      expect((await contentCalls(off.service.simulatorUrl!)) - before).toBe(3);
    } finally {
      await off.close();
    }
  });
});

describe('the public image route has a breaker of its own', () => {
  let rig: BreakerRig;
  beforeAll(async () => {
    rig = await startBreakerRig('Image Breaker Partner');
  });
  afterAll(() => rig?.close());

  it("failures forced through the image route open its breaker only: a partner's search is still answered", async () => {
    const { t, proxy, search } = rig;
    // The partner's property content is read once while the provider is well.
    expect((await search()).status).toBe(200);
    // The provider fails every content and image call; searches still reach it.
    proxy.rule = (req) => (req.path.startsWith('/properties/batch') || req.path.startsWith('/images/') ? 'fail' : 'forward');
    for (let i = 0; i < 6; i++) await expectError(await t.request(`/images/${800_000 + i}/abc/large.png`), 502, 'UPSTREAM_ERROR');
    expect(t.service.deps.upstream.circuitOf('public')).toBe('open');
    // The open breaker answers at once, without a call.
    const failed = proxy.hits.length;
    await expectError(await t.request('/images/800100/abc/large.png'), 502, 'UPSTREAM_ERROR');
    expect(proxy.hits.length).toBe(failed);
    expect(t.service.deps.upstream.circuit).toBe('closed');
    const res = await search();
    expect(res.status).toBe(200);
    expect(proxy.hits.at(-1)!.path).toMatch(/^\/availability/);
  });
});
