import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUERY } from '../../src/graphql/graphiql/examples.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { v1 } from '../helpers/flow.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { launchChromium, type Browser } from '../helpers/browser.js';

/**
 * GraphiQL in a real browser (issue 17 item 8): Debian's Chromium, driven by playwright-core,
 * against the service listening on a port, with the network limited to the service. Every request
 * to any other origin is aborted and recorded (Playwright's routing of the browser context), and
 * Chromium resolves no host name at all (--host-resolver-rules): the page must work offline. CSP
 * violations (a listener in the page), console errors of the page and of its workers, and page
 * errors are collected; the test ends by asserting there were none. Steps: the page loads with the
 * configured default query and the example tabs; `{ chan` + Ctrl-Space suggests `channel` (the
 * suggestion comes from the editor's GraphQL worker, started from a blob: URL); the default query
 * runs with a real key in the headers pane and shows the channel; the subscription example
 * receives the event of a booking made through REST while it is open.
 */

const STEP_MS = 60_000;
/** Per test: a loaded machine with two cores takes its time; every step inside has its own limit. */
const TEST_MS = 240_000;

let t: TestService;
let origin: string;
let creds: IssuedCredentials;
let context: BrowserContext;
let page: Page;
let browser: Browser;
const foreign: string[] = [];
const served: string[] = [];
const sockets: string[] = [];
const problems: string[] = [];

beforeAll(async () => {
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '50' });
  origin = `http://127.0.0.1:${await t.service.listen(0)}`;
  creds = await t.channel({ name: 'GraphiQL Browser' });
  // No host name resolves: only the service's address is reachable.
  browser = await launchChromium({ name: 'graphiql', viewport: { width: 1400, height: 900 }, hostResolverRules: 'MAP * ~NOTFOUND , EXCLUDE 127.0.0.1' });
  context = browser.context;
  // The network is the service: anything else is recorded and refused.
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (new URL(url).origin !== origin) {
      foreign.push(url);
      return route.abort('blockedbyclient');
    }
    served.push(`${route.request().method()} ${new URL(url).pathname}`);
    return route.continue();
  });
  page = context.pages()[0] ?? (await context.newPage());
  // Routing does not see WebSockets: they are recorded here (GraphiQL should open none: it uses SSE).
  page.on('websocket', (ws) => sockets.push(ws.url()));
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content.Security.Policy|worker/i.test(message.text())) problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${String(error)}`));
  page.on('worker', (worker) =>
    worker.on('console', (message) => {
      if (message.type() === 'error') problems.push(`worker console error: ${message.text()}`);
    }),
  );
  // Init scripts run outside the page's CSP: this reports every violation the page meets.
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI || 'inline'} (${event.sample})`);
    });
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** The text an editor shows, its lines in order (Monaco renders spaces as no-break spaces). */
async function editorText(selector: string): Promise<string> {
  const lines = await page
    .locator(`${selector} .view-lines .view-line`)
    .evaluateAll((elements) => elements.map((element) => [parseFloat((element as HTMLElement).style.top), element.textContent ?? ''] as const));
  return lines
    .sort((a, b) => a[0] - b[0])
    .map(([, text]) => text.replace(/\u00a0/g, ' '))
    .join('\n');
}

const QUERY_EDITOR = 'section.graphiql-query-editor .monaco-editor';
const HEADERS_EDITOR = 'section.graphiql-editor-tool[aria-label="Headers"] .graphiql-editor:not(.hidden) .monaco-editor';
const RESULT = 'section.result-window .monaco-editor';

/** Replaces an editor's whole text as a paste would (typing would meet the editor's auto-closing). */
async function replaceText(selector: string, text: string): Promise<void> {
  await page.locator(`${selector} .view-lines`).click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
  await expect.poll(() => editorText(selector), { timeout: STEP_MS }).toBe(text);
}

/**
 * Selects a tab by its title. The click is dispatched rather than made with the mouse: tabs are
 * draggable (framer-motion's Reorder), and a pointer click on one right after another tab was
 * closed started a drag instead of selecting it.
 */
async function openTab(name: string): Promise<void> {
  await page.locator('.graphiql-tab-button', { hasText: new RegExp(`^${name}$`) }).dispatchEvent('click');
  await expect.poll(async () => (await editorText(QUERY_EDITOR)).includes(` ${name}`), { timeout: STEP_MS }).toBe(true);
}

describe('GraphiQL in Chromium, offline', () => {
  it('loads from the service alone, under its policy, with the default query and the example tabs', async () => {
    const introspection = page.waitForResponse((res) => res.request().method() === 'POST' && res.url() === `${origin}/graphql`, { timeout: STEP_MS });
    introspection.catch(() => {}); // awaited below; a failed load must not leave it unhandled
    const response = await page.goto(`${origin}/graphql`, { timeout: STEP_MS });
    expect(response?.status()).toBe(200);
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toMatch(/^default-src 'none'; script-src 'sha256-/);
    expect(csp).not.toMatch(/unsafe-eval|unpkg/);
    await page.locator(QUERY_EDITOR).waitFor({ timeout: STEP_MS });
    // The schema came (introspection needs no credential).
    expect((await introspection).status()).toBe(200);

    expect(await page.title()).toBe('Channel API');
    expect(await page.locator('.graphiql-tab-button').allTextContents()).toEqual([
      'Channel',
      'Search',
      'PropertyPage',
      'PropertyRates',
      'PriceCheck',
      'Book',
      'Cancel',
      'BookingEvents',
    ]);
    // The configured default query, not GraphiQL's welcome text; the headers pane open with the placeholder.
    await expect.poll(() => editorText(QUERY_EDITOR), { timeout: STEP_MS }).toBe(DEFAULT_QUERY);
    expect(JSON.parse(await editorText(HEADERS_EDITOR))).toEqual({ 'X-Api-Key': '<your API key>' });
  }, TEST_MS);

  it('suggests `channel` for `{ chan` and Ctrl-Space', async () => {
    await page.locator('.graphiql-tab-add').click();
    await expect.poll(() => page.locator('.graphiql-tab-button').count(), { timeout: STEP_MS }).toBe(9);
    await page.locator(`${QUERY_EDITOR} .view-lines`).click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type('{ chan');
    await page.keyboard.press('Control+Space');
    const suggestions = page.locator(`${QUERY_EDITOR} .suggest-widget .monaco-list-row`);
    await expect.poll(() => suggestions.locator('.label-name').allTextContents(), { timeout: STEP_MS }).toContain('channel');
    await page.keyboard.press('Escape');
    await page.locator('.graphiql-tab-active .graphiql-tab-close').click();
    await expect.poll(() => page.locator('.graphiql-tab-button').count(), { timeout: STEP_MS }).toBe(8);
  }, TEST_MS);

  it("runs the default query with the key from the headers pane and shows the channel's data", async () => {
    await openTab('Channel');
    await replaceText(HEADERS_EDITOR, JSON.stringify({ 'X-Api-Key': creds.api_key }));
    const sent = page.waitForRequest((req) => req.method() === 'POST' && (req.postData() ?? '').includes('query Channel'), { timeout: STEP_MS });
    await page.locator('.graphiql-execute-button').click();
    expect((await sent).headers()['x-api-key']).toBe(creds.api_key);
    await expect.poll(() => editorText(RESULT), { timeout: STEP_MS }).toContain(`"userId": "${creds.user_id}"`);
    const result = await editorText(RESULT);
    expect(result).toContain('"name": "GraphiQL Browser"');
    expect(result).not.toContain('"errors"');
  }, TEST_MS);

  it('runs the subscription example over SSE and shows the event of a booking made through REST', async () => {
    await openTab('BookingEvents');
    await replaceText(HEADERS_EDITOR, JSON.stringify({ 'X-Api-Key': creds.api_key }));
    const stream = page.waitForResponse((res) => (res.request().headers()['accept'] ?? '').includes('text/event-stream'), { timeout: STEP_MS });
    await page.locator('.graphiql-execute-button').click();
    const opened = await stream;
    expect(opened.status()).toBe(200);
    expect(opened.request().method()).toBe('POST');
    expect(opened.request().postData()).toContain('subscription BookingEvents');
    expect(opened.request().headers()['x-api-key']).toBe(creds.api_key);
    expect(opened.headers()['content-type']).toContain('text/event-stream');
    // The subscription holds its place in the channel's count once it runs; then it hears events.
    await expect.poll(() => t.service.deps.events.subscribers(creds.user_id), { timeout: STEP_MS }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const flow = v1(t, creds);
    const offer = await flow.offer({ from: 5 });
    const booked = await flow.book({ book_token: offer.bookToken, booker_name: 'Browser Booker', guests_adult: 2 });
    expect(booked.status).toBe(201);
    const { id } = ((await booked.json()) as { data: { id: string } }).data;

    await expect.poll(() => editorText(RESULT), { timeout: STEP_MS }).toContain(`"bookingId": "${id}"`);
    expect(await editorText(RESULT)).toMatch(/"type": "RESERVATION_(CREATED|CONFIRMED)"/);
  }, TEST_MS);

  it('met no CSP violation, console error or page error, and asked nothing of any other origin', () => {
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
    expect(sockets).toEqual([]);
    // What it did ask: the page, then GraphQL requests (introspection, the query, the subscription).
    expect(new Set(served)).toEqual(new Set(['GET /graphql', 'POST /graphql']));
  });
});
