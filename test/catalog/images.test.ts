import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heroImage, imagePath, type Image, type Property } from '../../src/services/catalog/index.js';
import { IMAGE_SIZES, IMAGE_WIDTHS } from '../../src/services/kernel/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The public image route (issue 19 item 3): GET /images/{propertyId}/{imageId}/{size}.png serves
 * every advertised size of every advertised image at its advertised width, without a credential,
 * cacheable by anyone (immutable, ETag, 304) and embeddable from other sites (CORP cross-origin);
 * anything else is 404 in the error envelope and never reaches the provider; the provider is asked
 * once per image however many ask at once, and not again while the image is kept.
 */

let t: TestService;
let property1: Property;
let hero: Image;

/** Requests the provider's image route received so far (the simulator's counters). */
async function providerImageCalls(): Promise<number> {
  const res = await fetch(`${t.service.simulatorUrl}/_control/stats`);
  const byRoute = ((await res.json()) as { by_route: Record<string, number> }).by_route;
  return Object.entries(byRoute)
    .filter(([route]) => route.startsWith('GET /images'))
    .reduce((n, [, count]) => n + count, 0);
}

beforeAll(async () => {
  t = await startTestService();
  property1 = ((await t.service.deps.catalog.getMany([1])) as Property[])[0]!;
  hero = heroImage(property1)!;
  expect(hero).toBeTruthy();
});
afterAll(() => t.close());

describe('an advertised image', () => {
  it.each(IMAGE_SIZES)('resolves at its advertised width: %s', async (size) => {
    const link = hero.links.find((l) => l.size === size)!;
    expect(link.width).toBe(IMAGE_WIDTHS[size]);
    const res = await t.request(imagePath(1, hero.id, size));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(res.headers.get('content-length')).toBe(String(bytes.length));
    const png = PNG.sync.read(bytes);
    expect(png.width).toBe(link.width);
    expect(png.height).toBe(link.height);
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400, immutable');
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{16,}"$/);
    // Other sites' pages may show it (the service's default is same-site).
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    // The front's headers are there too.
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('of a room type resolves too', async () => {
    const room = property1.roomTypes.find((r) => r.images.length)!;
    const image = room.images[0]!;
    const res = await t.request(imagePath(1, image.id, 'thumbnail'));
    expect(res.status).toBe(200);
    expect(PNG.sync.read(Buffer.from(await res.arrayBuffer())).width).toBe(IMAGE_WIDTHS.thumbnail);
  });

  it('answers 304 to If-None-Match with its ETag, with the caching headers and no body', async () => {
    const first = await t.request(imagePath(1, hero.id, 'medium'));
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await t.request(imagePath(1, hero.id, 'medium'), { headers: { 'if-none-match': ifNoneMatch } });
      expect(res.status, ifNoneMatch).toBe(304);
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.headers.get('cache-control')).toBe('public, max-age=86400, immutable');
      expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
      expect((await res.arrayBuffer()).byteLength).toBe(0);
    }
    const changed = await t.request(imagePath(1, hero.id, 'medium'), { headers: { 'if-none-match': '"something-else"' } });
    expect(changed.status).toBe(200);
    expect((await changed.arrayBuffer()).byteLength).toBeGreaterThan(0);
  });

  it('sizes differ in ETag', async () => {
    const tags = new Set<string>();
    for (const size of IMAGE_SIZES) {
      const res = await t.request(imagePath(1, hero.id, size));
      await res.arrayBuffer();
      tags.add(res.headers.get('etag')!);
    }
    expect(tags.size).toBe(IMAGE_SIZES.length);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const get = await t.request(imagePath(1, hero.id, 'large'));
    const length = (await get.arrayBuffer()).byteLength;
    const res = await t.request(imagePath(1, hero.id, 'large'), { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-length')).toBe(String(length));
    expect(res.headers.get('etag')).toBe(get.headers.get('etag'));
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it('needs no credential, and a credential changes nothing', async () => {
    const res = await t.request(imagePath(1, hero.id, 'thumbnail'), { headers: { 'x-api-key': 'not-a-key' } });
    expect(res.status).toBe(200);
  });
});

describe('anything not advertised', () => {
  const cases: [string, () => string][] = [
    ['an unknown image id', () => imagePath(1, 'no-such-image', 'medium')],
    ['an unknown size', () => `/images/1/${hero.id}/huge.png`],
    ['another extension', () => `/images/1/${hero.id}/medium.jpg`],
    ['no extension', () => `/images/1/${hero.id}/medium`],
    ['an upper-case size', () => `/images/1/${hero.id}/MEDIUM.png`],
    ['a property the provider does not have', () => imagePath(999_999, hero.id, 'medium')],
    ['property 0', () => imagePath(0, hero.id, 'medium')],
    ['a property id that is not a number', () => `/images/abc/${hero.id}/medium.png`],
    ['a property id with a leading zero', () => `/images/01/${hero.id}/medium.png`],
    ['a property id too long', () => `/images/1234567890/${hero.id}/medium.png`],
    ['an encoded path in the image id', () => `/images/1/..%2F..%2Fproperties%2F1/medium.png`],
    ['an encoded dot segment', () => `/images/1/%2e%2e/medium.png`],
    ['a dot segment in the size', () => `/images/1/${hero.id}/..%2Fmedium.png`],
    ['an extra segment', () => `/images/1/${hero.id}/medium/x.png`],
    ['the provider path itself under the property', () => `/images/1/${hero.id}/${encodeURIComponent(hero.links[0]!.providerPath)}`],
  ];

  it.each(cases)('%s is 404 NOT_FOUND in the envelope, and the provider is not asked for an image', async (_, path) => {
    const before = await providerImageCalls();
    const res = await t.request(path());
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body.error.code).toBe('NOT_FOUND');
    expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
    expect(res.headers.get('cache-control') ?? '').not.toContain('immutable');
    expect(await providerImageCalls()).toBe(before);
  });

  it("another property's image asked under property 1 is 404, and not fetched", async () => {
    const idsOf = (p: Property) => [p.images, ...p.roomTypes.map((r) => r.images)].flat();
    const own = new Set(idsOf(property1).map((i) => i.id));
    const others = (await t.service.deps.catalog.getMany(Array.from({ length: 30 }, (_, i) => i + 2))) as Property[];
    const owner = others.find((p) => idsOf(p).some((i) => !own.has(i.id)))!;
    expect(owner, 'some property has an image id property 1 lacks').toBeTruthy();
    const foreign = idsOf(owner).find((i) => !own.has(i.id))!;
    const before = await providerImageCalls();
    const res = await t.request(imagePath(1, foreign.id, 'medium'));
    expect(res.status).toBe(404);
    expect(await providerImageCalls()).toBe(before);
    // The same image under its own property is served.
    expect((await t.request(imagePath(owner.id, foreign.id, 'medium'))).status).toBe(200);
  });
});

describe('the provider is asked once per image', () => {
  it('a second request is served from the cache', async () => {
    t.service.deps.images.clear();
    const image = property1.images.at(-1)!;
    const before = await providerImageCalls();
    const first = await t.request(imagePath(1, image.id, 'large'));
    const a = Buffer.from(await first.arrayBuffer());
    expect(await providerImageCalls()).toBe(before + 1);
    const second = await t.request(imagePath(1, image.id, 'large'));
    const b = Buffer.from(await second.arrayBuffer());
    expect(second.status).toBe(200);
    expect(b.equals(a)).toBe(true);
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(await providerImageCalls()).toBe(before + 1);
  });

  it('concurrent requests for one image make one provider call', async () => {
    t.service.deps.images.clear();
    const before = await providerImageCalls();
    const answers = await Promise.all(Array.from({ length: 8 }, () => t.request(imagePath(1, hero.id, 'large'))));
    const bodies = await Promise.all(answers.map(async (r) => Buffer.from(await r.arrayBuffer())));
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
    for (const body of bodies) expect(body.equals(bodies[0]!)).toBe(true);
    expect(await providerImageCalls()).toBe(before + 1);
    expect(t.service.deps.images.stats()).toMatchObject({ misses: expect.any(Number), joined: expect.any(Number) });
  });

  it('keeps no more bytes than IMAGE_CACHE_BYTES, the most recently used', async () => {
    const limit = 50_000;
    const small = await startTestService({ IMAGE_CACHE_BYTES: String(limit) });
    try {
      const p = ((await small.service.deps.catalog.getMany([1])) as Property[])[0]!;
      const paths = p.images.slice(0, 3).flatMap((image) => IMAGE_SIZES.map((size) => imagePath(1, image.id, size)));
      let total = 0;
      for (const path of paths) {
        const res = await small.request(path);
        expect(res.status).toBe(200);
        total += (await res.arrayBuffer()).byteLength;
      }
      expect(total).toBeGreaterThan(limit);
      const stats = small.service.deps.images.stats();
      expect(stats.misses).toBe(paths.length);
      expect(stats.bytes).toBeGreaterThan(0);
      expect(stats.bytes).toBeLessThanOrEqual(limit);
      // The last one asked is kept; the first one is not, and is asked of the provider again.
      await (await small.request(paths.at(-1)!)).arrayBuffer();
      expect(small.service.deps.images.stats().misses).toBe(paths.length);
      await (await small.request(paths[0]!)).arrayBuffer();
      expect(small.service.deps.images.stats().misses).toBe(paths.length + 1);
    } finally {
      await small.close();
    }
  });
});

describe('when the provider fails', () => {
  let simulator: RunningSimulator;
  let proxy: FaultProxy;
  let faulty: TestService;

  beforeAll(async () => {
    simulator = await startSimulator({ port: 0, host: '127.0.0.1' });
    proxy = await startFaultProxy(simulator.url);
    faulty = await startTestService({ UPSTREAM_URL: proxy.url });
  });
  afterAll(async () => {
    await faulty?.close();
    await proxy?.close();
    await simulator?.close();
  });

  it('is 502 UPSTREAM_ERROR in the envelope, and nothing is kept', async () => {
    proxy.rule = (req) => (req.path.startsWith('/images/') ? 'fail' : 'forward');
    const res = await faulty.request(imagePath(1, hero.id, 'medium'));
    expect(res.status).toBe(502);
    expect((await res.json()).error.code).toBe('UPSTREAM_ERROR');
    expect(proxy.hits.filter((h) => h.path.startsWith('/images/') && h.action === 'fail').length).toBeGreaterThanOrEqual(1);
    proxy.heal();
    const healed = await faulty.request(imagePath(1, hero.id, 'medium'));
    expect(healed.status).toBe(200);
    expect(PNG.sync.read(Buffer.from(await healed.arrayBuffer())).width).toBe(IMAGE_WIDTHS.medium);
  });
});
