import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';
import { launchChromium, type Browser } from '../helpers/browser.js';

/**
 * The hero image of property 1 in a real browser (issue 19, "Done when"): its link is read from
 * the v1 property as a partner's server would (with the API key), then a partner's page on another
 * site shows it in an <img>, which sends no credential. It must load at its advertised width: the
 * route is public, and its Cross-Origin-Resource-Policy lets another site embed it (an image the
 * service serves with its default, same-site, is refused on the same page: the check can fail).
 *
 * The partner's page is a bare page served on loopback and opened as http://localhost:<port>,
 * another site than the service's http://127.0.0.1:<port> (a page of no address, about:blank or
 * one Playwright fulfils, counts as public, and Chromium's local network access rules refuse it
 * loopback whatever the service answers). Debian's Chromium, driven by playwright-core; the
 * network is the service and that page, nothing else resolves.
 */


let t: TestService;
let origin: string;
let creds: IssuedCredentials;
let context: BrowserContext;
let page: Page;
let browser: Browser;
let partner: Server;
let partnerOrigin: string;
const foreign: string[] = [];
const served: string[] = [];

beforeAll(async () => {
  t = await startTestService();
  origin = `http://127.0.0.1:${await t.service.listen(0)}`;
  // The links the service hands out start with its public origin: here, the address it listens on.
  creds = await t.channel({ name: 'Image Browser' });
  partner = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><head><title>A partner</title></head><body></body></html>');
  });
  await new Promise<void>((resolve) => partner.listen(0, '127.0.0.1', resolve));
  partnerOrigin = `http://localhost:${(partner.address() as AddressInfo).port}`;
  // localhost is the partner's page (on loopback); no other name resolves.
  browser = await launchChromium({ name: 'images', hostResolverRules: 'MAP localhost 127.0.0.1, MAP * ~NOTFOUND , EXCLUDE 127.0.0.1' });
  context = browser.context;
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (new URL(url).origin === partnerOrigin) return route.continue();
    if (new URL(url).origin !== origin) {
      foreign.push(url);
      return route.abort('blockedbyclient');
    }
    served.push(`${route.request().method()} ${new URL(url).pathname} ${route.request().headers()['x-api-key'] ? 'with key' : 'no key'}`);
    return route.continue();
  });
  page = context.pages()[0] ?? (await context.newPage());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (partner) await new Promise((resolve) => partner.close(resolve));
  await t?.close();
});

it('renders the hero image of property 1 from its link', async () => {
  // The partner's server: the v1 property, over the network, with the key.
  const res = await fetch(`${origin}/channel/v1/properties/1`, { headers: apiKey(creds) });
  expect(res.status).toBe(200);
  const property = (await res.json()).data as { images: { hero: boolean; links: Record<string, { href: string; width: number; height: number }> }[] };
  const hero = property.images.find((i) => i.hero)!;
  expect(hero).toBeTruthy();
  const medium = hero.links.medium!;
  expect(medium.width).toBe(640);
  expect(medium.href.startsWith(`${origin}/images/1/`)).toBe(true);

  // The partner's page: another site, an <img> and nothing else.
  await page.goto(`${partnerOrigin}/`);
  const show = (href: string) =>
    page.evaluate(
      (src) =>
        new Promise<{ ok: boolean; naturalWidth: number; naturalHeight: number }>((resolve) => {
          const img = document.createElement('img');
          img.onload = () => resolve({ ok: true, naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight });
          img.onerror = () => resolve({ ok: false, naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight });
          img.src = src;
          document.body.append(img);
        }),
      href,
    );
  expect(await show(medium.href)).toEqual({ ok: true, naturalWidth: 640, naturalHeight: medium.height });
  expect(served).toEqual([`GET ${new URL(medium.href).pathname} no key`]);
  // The control: a PNG the service serves with its same-site default does not show on that page.
  expect((await show(`${origin}/channel/v1/docs/assets/favicon-32x32.png`)).ok).toBe(false);
  expect(foreign).toEqual([]);
}, 120_000);
