import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { v1 } from '../helpers/flow.js';
import { eventually } from '../helpers/receiver.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * The docs a newcomer reads (issue 20, item 6): the README's quickstart runs as written against a
 * started service and ends in a cancelled booking; every variable src/config.ts reads is in the
 * configuration reference of docs/operations.md, and nothing else is; every relative link and
 * #anchor of README.md and docs/*.md resolves; the webhook receiver of docs/webhooks.md
 * (docs/examples/webhook-receiver.mjs) accepts a real delivery and refuses tampered ones.
 */

const ROOT = resolve(new URL('../../', import.meta.url).pathname);
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const DOCUMENTS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The lines of a markdown text outside fenced code blocks (``` or ~~~), with their line numbers. */
function prose(text: string): { line: string; n: number }[] {
  const out: { line: string; n: number }[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, i) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (open) {
      if (fence === null) fence = open[1]![0]!;
      else if (open[1]![0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line, n: i + 1 });
  });
  return out;
}

/**
 * GitHub's anchor of a heading: the rendered text in lower case, without punctuation other than
 * hyphens and underscores, spaces as hyphens; a repeated one gets -1, -2, ... (as github-slugger).
 */
function slugs(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { line } of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
      .replace(/<[^>]+>/g, '') // inline HTML
      .replace(/[`*]/g, ''); // code spans and emphasis
    const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count ? `${base}-${count}` : base);
  }
  return out;
}

/** Relative links of a markdown document (inline links and reference definitions), outside code. */
function links(markdown: string): { target: string; n: number }[] {
  const out: { target: string; n: number }[] = [];
  for (const { line, n } of prose(markdown)) {
    const text = line.replace(/`[^`]*`/g, ''); // a link inside a code span is text
    for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1]!, n });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(text);
    if (definition) out.push({ target: definition[1]!, n });
  }
  return out.filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target)); // http:, https:, mailto: ...
}

describe('links', () => {
  it('every relative link and #anchor of README.md and docs/*.md resolves', () => {
    const broken: string[] = [];
    for (const doc of DOCUMENTS) {
      for (const { target, n } of links(read(doc))) {
        const [path = '', anchor] = target.split('#');
        const file = path ? relative(ROOT, resolve(dirname(join(ROOT, doc)), decodeURIComponent(path))) : doc;
        if (!existsSync(join(ROOT, file))) {
          broken.push(`${doc}:${n} ${target}: no file ${file}`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!file.endsWith('.md')) {
          broken.push(`${doc}:${n} ${target}: an anchor into a file that is not markdown`);
          continue;
        }
        if (!slugs(read(file)).has(decodeURIComponent(anchor))) broken.push(`${doc}:${n} ${target}: no heading #${anchor} in ${file}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the anchors are GitHub slugs (the checker itself)', () => {
    const s = slugs('# Running in production: security settings\n## Incremental delivery (`@defer` and `@stream`)\n## Limits\n## Limits\n```\n# not a heading\n```\n');
    expect([...s]).toEqual(['running-in-production-security-settings', 'incremental-delivery-defer-and-stream', 'limits', 'limits-1']);
  });
});

describe('the configuration reference', () => {
  /** Variable names in the first column of the tables of docs/operations.md's "Configuration reference". */
  function documented(): Set<string> {
    const text = read('docs/operations.md');
    const start = text.indexOf('\n## Configuration reference');
    expect(start, 'docs/operations.md has a "## Configuration reference" section').toBeGreaterThan(-1);
    const end = text.indexOf('\n## ', start + 1);
    const section = text.slice(start, end === -1 ? undefined : end);
    const names = new Set<string>();
    for (const row of section.split('\n').filter((l) => l.startsWith('|'))) {
      const first = row.split('|')[1] ?? '';
      for (const m of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(m[1]!);
    }
    return names;
  }

  it('names every variable src/config.ts reads', () => {
    expect(CONFIG_VARIABLES.length).toBeGreaterThan(50);
    const names = documented();
    expect(CONFIG_VARIABLES.filter((v) => !names.has(v))).toEqual([]);
  });

  it('names no variable src/config.ts does not read', () => {
    const read = new Set(CONFIG_VARIABLES);
    expect([...documented()].filter((v) => !read.has(v))).toEqual([]);
  });
});

/** The README's block marked `<!-- quickstart:NAME ... -->`: the fenced code right after the comment. */
function quickstartBlock(name: string): string {
  const readme = read('README.md');
  const marker = new RegExp(`<!--\\s*quickstart:${name}\\b[^>]*-->\\s*\\n\`\`\`(?:sh|bash)\\n([\\s\\S]*?)\\n\`\`\``);
  const match = marker.exec(readme);
  expect(match, `README.md has a sh block marked <!-- quickstart:${name} -->`).not.toBeNull();
  return match![1]!;
}

/** Runs a script in bash (-e, -u, pipefail) with curl and node on the PATH; stdout, or the failure with stderr. */
function bash(script: string): Promise<string> {
  const path = `${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`;
  return new Promise((done, fail) => {
    execFile('bash', ['-c', `set -euo pipefail\n${script}`], { env: { PATH: path, HOME: process.env.HOME ?? '/tmp' }, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) fail(new Error(`${error.message}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
      else done(stdout);
    });
  });
}

let t: TestService;
let origin: string;
let demo: IssuedCredentials;

beforeAll(async () => {
  // The dispatcher runs when the webhook test drains it.
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '0' });
  const port = await t.service.listen(0);
  origin = `http://127.0.0.1:${port}`;
  expect(t.service.demoCredentials, 'an empty sandbox makes the demo channel').not.toBeNull();
  demo = t.service.demoCredentials!;
});

afterAll(async () => {
  await t?.close();
});

describe("the README's quickstart", () => {
  /**
   * The setup block as a reader runs it: the service's address instead of the default one, and
   * each `NAME=...  # the <label> line` given the value the start printed under that label.
   */
  function setup(): string {
    const main = read('src/main.ts');
    const given: string[] = [];
    const script = quickstartBlock('setup')
      .replaceAll('http://127.0.0.1:4000', origin)
      .split('\n')
      .map((line) => {
        const m = /^([A-Z_]+)=\S+(\s+#.*\b(user_id|api_key|client_id|client_secret)\b.*)$/.exec(line);
        if (!m) return line;
        const label = m[3] as 'user_id' | 'api_key' | 'client_id' | 'client_secret';
        // The label the README names is one the start prints (src/main.ts), with that value.
        expect(main).toMatch(new RegExp(`\`\\s+${label}\\s+\\$\\{d\\.${label}\\}\``));
        given.push(m[1]!);
        return `${m[1]}='${demo[label]}'${m[2]}`;
      })
      .join('\n');
    expect(given).toContain('API_KEY');
    return script;
  }

  async function bookings(status: string): Promise<{ id: string; status: string }[]> {
    const res = await t.request(`/channel/v1/bookings?status=${status}`, { headers: apiKey(demo) });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: { id: string; status: string }[] }).data;
  }

  it('REST v1 with curl: search, price check, book, read, cancel', async () => {
    const out = await bash(`${setup()}\n${quickstartBlock('rest')}`);
    expect(out).toContain('"name":"Demo Channel"');
    expect(out).toMatch(/"status":"confirmed"/);
    expect(out).toMatch(/"status":"cancelled","cancellation_fee":\d+,"refund_amount":\d+/);
    const cancelled = await bookings('cancelled');
    expect(cancelled).toHaveLength(1);
    expect(await bookings('confirmed')).toEqual([]);
  }, 90_000);

  it('GraphQL with curl: the same journey ends in a cancelled booking too', async () => {
    const before = (await bookings('cancelled')).map((b) => b.id);
    const out = await bash(`${setup()}\n${quickstartBlock('graphql')}`);
    expect(out).toMatch(/"status":"CONFIRMED"/);
    expect(out).toMatch(/"cancelBooking":\{"booking":\{"bookingId":"[^"]+","status":"CANCELLED"/);
    const now = (await bookings('cancelled')).map((b) => b.id);
    expect(now.filter((id) => !before.includes(id))).toHaveLength(1);
    expect(await bookings('confirmed')).toEqual([]);
  }, 90_000);
});

describe('the webhook receiver of docs/webhooks.md', () => {
  let receiver: ChildProcess;
  let receiverUrl: string;
  const lines: string[] = [];
  let who: IssuedCredentials;
  let secret: string;
  let webhookId: string;

  beforeAll(async () => {
    who = await t.channel();
    // The webhook first (its secret is what the receiver verifies with), at a placeholder URL.
    const created = await t.request('/channel/v1/webhooks', {
      method: 'POST',
      headers: { ...apiKey(who), 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/placeholder', events: ['reservation.created', 'reservation.cancelled'] }),
    });
    expect(created.status).toBe(201);
    ({ id: webhookId, secret } = ((await created.json()) as { data: { id: string; secret: string } }).data);

    receiver = spawn(process.execPath, [join(ROOT, 'docs/examples/webhook-receiver.mjs')], {
      env: { WEBHOOK_SECRET: secret, PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const listening = new Promise<string>((done, fail) => {
      receiver.once('exit', (code) => fail(new Error(`the receiver exited with ${code}`)));
      createInterface({ input: receiver.stdout! }).on('line', (line) => {
        lines.push(line);
        const m = /^listening on (http:\/\/\S+)$/.exec(line);
        if (m) done(m[1]!);
      });
    });
    receiverUrl = await listening;
    const moved = await t.request(`/channel/v1/webhooks/${webhookId}`, {
      method: 'PATCH',
      headers: { ...apiKey(who), 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiverUrl}/hooks/channel` }),
    });
    expect(moved.status).toBe(200);
  });

  afterAll(() => {
    receiver?.kill('SIGTERM');
  });

  it('is shown whole in docs/webhooks.md, as the file runs', () => {
    const file = read('docs/examples/webhook-receiver.mjs').trimEnd();
    expect(read('docs/webhooks.md')).toContain('```js\n' + file + '\n```');
  });

  /** Waits for the receiver's standard output (a pipe: it may trail the HTTP answer) to hold a line. */
  const logged = (what: string, test: (line: string) => boolean) => eventually(() => lines.some(test), 5_000, what);

  const post = (body: string, headers: Record<string, string>) =>
    fetch(`${receiverUrl}/hooks/channel`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  async function deliveries(): Promise<{ id: string; type: string; status: string; attempt_log: { status_code: number | null }[] }[]> {
    const res = await t.request(`/channel/v1/webhooks/${webhookId}/deliveries`, { headers: apiKey(who) });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: Awaited<ReturnType<typeof deliveries>> }).data;
  }

  it('verifies and accepts the ping and a booking event the service sends', async () => {
    const ping = await t.request(`/channel/v1/webhooks/${webhookId}/ping`, { method: 'POST', headers: apiKey(who) });
    expect(ping.status).toBe(200);
    expect(await ping.json()).toMatchObject({ data: { type: 'webhook.ping', status: 'delivered' } });

    const flow = v1(t, who);
    const offer = await flow.offer();
    const booked = await flow.book({ book_token: offer.bookToken, booker_name: 'Kim Minji' });
    expect(booked.status).toBe(201);
    const bookingId = ((await booked.json()) as { data: { id: string } }).data.id;
    await t.service.dispatcher.drain();

    const created = (await deliveries()).find((d) => d.type === 'reservation.created');
    expect(created).toMatchObject({ status: 'delivered', attempt_log: [{ status_code: 204 }] });
    await logged('the booking accepted', (l) => l === `accepted ${created!.id} reservation.created ${bookingId}`);
    await logged('the ping accepted', (l) => /^accepted \S+ webhook\.ping/.test(l));
  });

  it('answers a repeated delivery without handling it twice, and refuses tampered, stale and unsigned ones', async () => {
    const id = `msg_${Date.now()}`;
    const body = JSON.stringify({ type: 'reservation.cancelled', timestamp: new Date().toISOString(), data: { id: 'b-1', status: 'cancelled' } });
    const signed = (at: Date, content = body) => ({
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, content),
    });

    // Signed by the Standard Webhooks library, as the service signs: accepted once, then a duplicate.
    const headers = signed(new Date());
    expect((await post(body, headers)).status).toBe(204);
    expect((await post(body, headers)).status).toBe(204);
    await logged('the duplicate', (l) => l === `duplicate ${id} reservation.cancelled`);
    expect(lines.filter((l) => l.startsWith(`accepted ${id} `))).toHaveLength(1);

    // A changed body, another secret, an old timestamp, no signature: 401.
    expect((await post(body.replace('"status":"cancelled"', '"status":"confirmed"'), headers)).status).toBe(401);
    const other = new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).sign(id, new Date(), body);
    expect((await post(body, { ...headers, 'webhook-signature': other })).status).toBe(401);
    expect((await post(body, signed(new Date(Date.now() - 10 * 60_000)))).status).toBe(401);
    const { 'webhook-signature': _dropped, ...unsigned } = headers;
    expect((await post(body, unsigned)).status).toBe(401);
    // A second signature that matches is enough (secret rotation sends two).
    expect((await post(body, { ...headers, 'webhook-id': id, 'webhook-signature': `${other} ${headers['webhook-signature']}` })).status).toBe(204);
    await eventually(() => lines.filter((l) => l.startsWith('rejected ')).length === 4, 5_000, 'four rejections logged');
  });
});
