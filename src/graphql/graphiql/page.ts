import { createHash } from 'node:crypto';
import type { GraphiQLOptions } from 'graphql-yoga';
import { DEFAULT_QUERY, HEADERS_PLACEHOLDER, exampleTabs } from './examples.js';

/**
 * The GraphiQL page, made once when the service starts: @graphql-yoga/render-graphiql's page (the
 * bundle of @graphql-yoga/graphiql inlined: React, GraphiQL, the Monaco editor, its fonts and icons
 * as data: URLs, and the editor's three web workers as strings started from blob: URLs), so the
 * page loads nothing from outside the service. Its inline script's digest is what the page's
 * Content-Security-Policy allows (rest-adapters/transport.ts).
 */
export interface GraphiQLPage {
  /** The options the page was rendered with (Yoga's `graphiql` option). */
  options: GraphiQLOptions;
  /** The HTML, encoded once. */
  body: Uint8Array<ArrayBuffer>;
  /** CSP source expressions ('sha256-...') of the page's inline <script> elements. */
  scriptHashes: string[];
}

/** What a newcomer gets: the default query first, the booking journey's tabs, the key's place. */
export function graphiqlOptions(today: Date = new Date()): GraphiQLOptions {
  return {
    title: 'Channel API',
    defaultQuery: DEFAULT_QUERY,
    defaultTabs: exampleTabs(today),
    // New tabs get the placeholder too; the headers pane is open on load.
    defaultHeaders: HEADERS_PLACEHOLDER,
    isHeadersEditorEnabled: true,
    defaultEditorToolsVisibility: 'headers',
    // A key is a credential: it is not kept in the browser's storage unless the user turns
    // "persist headers" on in GraphiQL's settings (Yoga's page turns it on by default).
    shouldPersistHeaders: false,
    // Subscriptions over SSE on /graphql: a fetch that sends the headers pane's headers (the key),
    // as every query does. Yoga's page sends no headers in graphql-ws's connection_init.
    subscriptionsProtocol: 'SSE',
    // Every operation POSTed as JSON, subscriptions too (GraphiQL's SSE client would otherwise GET
    // them with the document in the URL, which CSRF prevention refuses when no key is sent).
    method: 'POST',
  };
}

/**
 * Renders the page with the installed @graphql-yoga/render-graphiql (imported only when GraphiQL
 * is on: the bundle is 9 MB of strings) and checks it needs nothing from elsewhere: one inline
 * script, one inline style, no `src` or `href` other than a data: URL. A newer package that
 * changes this fails here, at start, rather than in a browser.
 */
export async function renderGraphiQLPage(options: GraphiQLOptions = graphiqlOptions()): Promise<GraphiQLPage> {
  const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
  const html = renderGraphiQL(options);
  const { scripts, styles, markup } = inlineElements(html);
  if (scripts.length !== 1 || styles.length !== 1) {
    throw new Error(`GraphiQL page: expected one inline script and one inline style, found ${scripts.length} and ${styles.length}`);
  }
  for (const [, attribute, url] of markup.matchAll(/\s(src|href)\s*=\s*["']?([^"'\s>]*)/gi)) {
    if (!url!.startsWith('data:')) throw new Error(`GraphiQL page: ${attribute}="${url!.slice(0, 80)}" would load from outside the page`);
  }
  return {
    options,
    body: new TextEncoder().encode(html),
    scriptHashes: scripts.map(sha256Source),
  };
}

/**
 * The text of each <script> and <style> element (what a CSP hash covers), and the markup around
 * them. Each element must be attribute-free, end where its text says, and hold no CR or NUL
 * character (the HTML parser changes those, and the hash would no longer match).
 */
function inlineElements(html: string): { scripts: string[]; styles: string[]; markup: string } {
  const found = { script: [] as string[], style: [] as string[] };
  let markup = '';
  let at = 0;
  const opening = /<(script|style)\b[^>]*>/gi;
  for (let match = opening.exec(html); match; match = opening.exec(html)) {
    const name = match[1]!.toLowerCase() as 'script' | 'style';
    if (match[0] !== `<${name}>`) throw new Error(`GraphiQL page: unexpected ${match[0]}`);
    const start = match.index + match[0].length;
    const end = html.indexOf(`</${name}>`, start);
    if (end < 0) throw new Error(`GraphiQL page: unterminated <${name}>`);
    const text = html.slice(start, end);
    if (/[\r\0]/.test(text) || text.toLowerCase().includes(`</${name}`)) throw new Error(`GraphiQL page: the text of <${name}> would not be parsed as written`);
    found[name].push(text);
    markup += html.slice(at, start);
    at = end;
    opening.lastIndex = end;
  }
  markup += html.slice(at);
  return { scripts: found.script, styles: found.style, markup };
}

function sha256Source(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}
