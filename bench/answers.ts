/**
 * The answers the twins of `npm run bench` send: the service's own answers, captured over
 * `node:http` (status, every header as it was sent, body bytes), turned into templates whose
 * per-request values are filled afresh on every request.
 *
 * A value is per-request when two answers of the service to the same request differ in it. Both
 * answers are cut into literal text and tokens (UUIDs, ISO-8601 timestamps, runs of digits):
 * - a UUID that differs (the request id, in `x-request-id` and the envelope's `meta.request_id`)
 *   becomes a slot filled with a fresh `randomUUID()` per request (one per answer, wherever the
 *   service used the same one);
 * - an ISO timestamp that differs (`meta.timestamp`) becomes a slot filled with
 *   `new Date().toISOString()`;
 * - digits that differ (the rate limiter's `remaining`, a counter) keep the first answer's value:
 *   the same shape, with no counting;
 * - anything else that differs is reported (the twins would not send what the service sends).
 * `Date`, `Connection` and `Keep-Alive` are left to node:http, as the service leaves them; the
 * twins' servers keep connections alive as long as the service's `Keep-Alive: timeout=` says.
 *
 * Used by bench/run.ts (capture, templates, checks) and the twins (bench/serve-plain.ts,
 * bench/serve-hono.ts).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';

export interface BenchRequest {
  method: 'GET' | 'POST';
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** One answer as it came off the wire. */
export interface RawAnswer {
  status: number;
  /** Names as sent (case kept), in order, with their values (node's rawHeaders, paired). */
  headers: [string, string][];
  body: Buffer;
}

/**
 * A literal piece of text; a value made afresh for each request (`slot`); or a counter (`count`):
 * sent as it was first, matched as any run of digits.
 */
export type Part = string | { slot: 'id' | 'now'; n: number } | { count: string };

export interface AnswerTemplate {
  /** `METHOD path?query`: what the twins answer it to. */
  key: string;
  status: number;
  /** Names as the service sent them; Date, Connection and Keep-Alive excepted. */
  headers: [string, Part[]][];
  body: Part[];
}

export interface AnswersFile {
  /** From the service's `Keep-Alive: timeout=N` (ms), for the twins' servers; null when it sent none. */
  keepAliveTimeoutMs: number | null;
  answers: AnswerTemplate[];
}

/** Headers node:http writes itself (and the service did not choose). */
const NODE_HEADERS = new Set(['date', 'connection', 'keep-alive']);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;
const DIGITS = /^\d+$/;
const UUID_SOURCE = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const ISO_SOURCE = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z';
const TOKENS = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z|\d+)/i;

export function keyOf(method: string, path: string): string {
  return `${method} ${path}`;
}

/** Sends `req` to 127.0.0.1:port and returns the answer as it came (raw header names and order). */
export function capture(port: number, req: BenchRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
    const r = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(req.body);
  });
}

/** The value of a header (first of that name, any case). */
export function headerOf(answer: RawAnswer, name: string): string | undefined {
  return answer.headers.find(([n]) => n.toLowerCase() === name)?.[1];
}

export function keepAliveMs(answer: RawAnswer): number | null {
  const m = /timeout=(\d+)/i.exec(headerOf(answer, 'keep-alive') ?? '');
  return m ? Number(m[1]) * 1000 : null;
}

interface Slots {
  ids: Map<string, number>;
  nows: Map<string, number>;
}

/**
 * The template of text `a` given a second answer's `b` to the same request; `where` names it in
 * the differences reported.
 */
function templateOf(a: string, b: string, slots: Slots, where: string, problems: string[]): Part[] {
  const ta = a.split(TOKENS);
  const tb = b.split(TOKENS);
  const parts: Part[] = [];
  let literal = '';
  const push = (part: Part) => {
    if (typeof part === 'string') {
      literal += part;
      return;
    }
    if (literal) parts.push(literal);
    literal = '';
    parts.push(part);
  };
  if (ta.length !== tb.length) {
    problems.push(`${where}: the two answers differ in shape (${snippet(a, b)})`);
    return [a];
  }
  for (let i = 0; i < ta.length; i++) {
    const x = ta[i]!;
    const y = tb[i]!;
    if (x === y) {
      push(x);
    } else if (i % 2 === 0) {
      problems.push(`${where}: the two answers differ: "${x.slice(0, 60)}" / "${y.slice(0, 60)}"`);
      push(x);
    } else if (UUID.test(x) && UUID.test(y)) {
      let n = slots.ids.get(x.toLowerCase());
      if (n === undefined) slots.ids.set(x.toLowerCase(), (n = slots.ids.size));
      push({ slot: 'id', n });
    } else if (ISO.test(x) && ISO.test(y) && x.length === 24) {
      let n = slots.nows.get(x);
      if (n === undefined) slots.nows.set(x, (n = slots.nows.size));
      push({ slot: 'now', n });
    } else if (DIGITS.test(x) && DIGITS.test(y)) {
      push({ count: x }); // a counter: sent with its first value
    } else {
      problems.push(`${where}: the two answers differ: "${x}" / "${y}"`);
      push(x);
    }
  }
  if (literal) parts.push(literal);
  return parts;
}

function snippet(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `from byte ${i}: "${a.slice(i, i + 40)}" / "${b.slice(i, i + 40)}"`;
}

/**
 * The template of the service's answer `a` to `req`, given its answer `b` to the same request
 * (per-request values are where they differ). Differences that are not per-request values of a
 * known shape are added to `problems`.
 */
export function makeTemplate(req: BenchRequest, a: RawAnswer, b: RawAnswer, problems: string[]): AnswerTemplate {
  const where = keyOf(req.method, req.path.split('?')[0]!);
  if (a.status !== b.status) problems.push(`${where}: status ${a.status} then ${b.status}`);
  const slots: Slots = { ids: new Map(), nows: new Map() };
  const headers: [string, Part[]][] = [];
  const bHeaders = new Map(b.headers.map(([n, v]) => [n.toLowerCase(), v]));
  for (const [name, value] of a.headers) {
    const lower = name.toLowerCase();
    if (NODE_HEADERS.has(lower)) continue;
    const other = bHeaders.get(lower);
    if (other === undefined) problems.push(`${where}: header ${name} only in the first answer`);
    headers.push([name, templateOf(value, other ?? value, slots, `${where} header ${name}`, problems)]);
  }
  for (const [name] of b.headers) {
    if (!NODE_HEADERS.has(name.toLowerCase()) && !a.headers.some(([n]) => n.toLowerCase() === name.toLowerCase())) {
      problems.push(`${where}: header ${name} only in the second answer`);
    }
  }
  const aText = a.body.toString('utf8');
  if (!Buffer.from(aText, 'utf8').equals(a.body)) problems.push(`${where}: the body is not UTF-8 text`);
  const body = templateOf(aText, b.body.toString('utf8'), slots, `${where} body`, problems);
  return { key: keyOf(req.method, req.path), status: a.status, headers, body };
}

/**
 * How `answer` differs from what `template` describes (slots match any value of their shape):
 * status, header names (any case) and values, body; `compareHeaders: false` checks the body only.
 */
export function differences(template: AnswerTemplate, answer: RawAnswer, compareHeaders = true): string[] {
  const out: string[] = [];
  if (answer.status !== template.status) out.push(`status ${answer.status}, the service's ${template.status}`);
  if (compareHeaders) {
    const got = new Map<string, string>();
    for (const [n, v] of answer.headers) if (!NODE_HEADERS.has(n.toLowerCase())) got.set(n.toLowerCase(), v);
    for (const [name, parts] of template.headers) {
      const value = got.get(name.toLowerCase());
      if (value === undefined) out.push(`no ${name} header`);
      else if (!fits(parts, value)) out.push(`${name}: "${value}", the service's "${render(parts, fresh(parts))}"`);
      got.delete(name.toLowerCase());
    }
    for (const name of got.keys()) out.push(`an extra ${name} header`);
  }
  if (!fits(template.body, answer.body.toString('utf8'))) out.push('another body');
  return out;
}

/** Whether `text` is what `parts` describe (a slot matches any value of its shape). */
function fits(parts: Part[], text: string): boolean {
  const source = parts
    .map((p) => (typeof p === 'string' ? p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : 'count' in p ? '\\d+' : p.slot === 'id' ? UUID_SOURCE : ISO_SOURCE))
    .join('');
  return new RegExp(`^${source}$`, 'i').test(text);
}

/** Fresh values for the slots of `parts` (and of other parts of the same answer sharing them). */
export function fresh(...partLists: Part[][]): { ids: string[]; nows: string[] } {
  let ids = 0;
  let nows = 0;
  for (const parts of partLists) {
    for (const p of parts) {
      if (typeof p === 'string' || 'count' in p) continue;
      if (p.slot === 'id') ids = Math.max(ids, p.n + 1);
      else nows = Math.max(nows, p.n + 1);
    }
  }
  const now = nows ? new Date().toISOString() : '';
  return { ids: Array.from({ length: ids }, () => randomUUID()), nows: Array.from({ length: nows }, () => now) };
}

export function render(parts: Part[], values: { ids: string[]; nows: string[] }): string {
  if (parts.length === 1 && typeof parts[0] === 'string') return parts[0];
  let out = '';
  for (const p of parts) out += typeof p === 'string' ? p : 'count' in p ? p.count : p.slot === 'id' ? values.ids[p.n]! : values.nows[p.n]!;
  return out;
}

/** What a twin sends for one key, ready to write: fixed bytes, or made per request. */
export interface Prepared {
  status: number;
  /** Flat [name, value, name, value…] for res.writeHead (fixed headers), or made per request. */
  headers: () => string[];
  body: () => Buffer;
}

/** Reads an answers file (written by bench/run.ts) into what the twins send, by key. */
export function loadAnswers(path: string): { keepAliveTimeoutMs: number | null; answers: Map<string, Prepared> } {
  const file = JSON.parse(readFileSync(path, 'utf8')) as AnswersFile;
  const answers = new Map<string, Prepared>();
  for (const t of file.answers) answers.set(t.key, prepare(t));
  return { keepAliveTimeoutMs: file.keepAliveTimeoutMs, answers };
}

function prepare(t: AnswerTemplate): Prepared {
  const lists = [t.body, ...t.headers.map(([, parts]) => parts)];
  const dynamic = lists.some((parts) => parts.some((p) => typeof p !== 'string' && !('count' in p)));
  if (!dynamic) {
    const flat = t.headers.flatMap(([name, parts]) => [name, render(parts, { ids: [], nows: [] })]);
    const body = Buffer.from(render(t.body, { ids: [], nows: [] }), 'utf8');
    return { status: t.status, headers: () => flat, body: () => body };
  }
  // One set of fresh values per answer, shared by its headers and body (made by headers(), which
  // the twins call first).
  let values = fresh(...lists);
  return {
    status: t.status,
    headers: () => {
      values = fresh(...lists);
      return t.headers.flatMap(([name, parts]) => [name, render(parts, values)]);
    },
    body: () => Buffer.from(render(t.body, values), 'utf8'),
  };
}
