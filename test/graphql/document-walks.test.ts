import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentCost } from '../../src/graphql/cost.js';
import { MAX_DOCUMENT_DEPTH } from '../../src/graphql/plugins/documentNesting.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Every walk of a document (the cost, the depth, alias and directive limits, validation) takes time
 * linear in the document whatever its fragment spreads multiply, and nothing recursive meets a
 * document nested deeper than MAX_DOCUMENT_DEPTH (docs/decisions.md, "Hardening: GraphQL
 * documents"). The documents are sent without a credential: a stranger's request.
 */

/**
 * `levels` fragments on Query each spreading the next twice, then `channel { ...G0 }` and `levels`
 * fragments on Channel each spreading the next twice: 4^levels `__typename` selections when spread out.
 */
function doubling(levels: number): string {
  const lines = ['query Doubling { ...F0 }'];
  for (let i = 0; i < levels; i++) lines.push(`fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`);
  lines.push(`fragment F${levels} on Query { channel { ...G0 } }`);
  for (let i = 0; i < levels; i++) lines.push(`fragment G${i} on Channel { ...G${i + 1} ...G${i + 1} }`);
  lines.push(`fragment G${levels} on Channel { __typename }`);
  return lines.join('\n');
}

/** One chain of `levels` fragments on Query, each spreading the next twice, ending in `channel { name }`. */
function chain(levels: number): string {
  const lines = ['query Chain { ...F0 }'];
  for (let i = 0; i < levels; i++) lines.push(`fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`);
  lines.push(`fragment F${levels} on Query { channel { name } }`);
  return lines.join('\n');
}

interface Answer {
  status: number;
  ms: number;
  body: { data?: unknown; errors?: { message: string; extensions?: { code?: string; details?: Record<string, unknown> } }[] };
}

describe('walks of a document are linear and bounded', () => {
  let t: TestService;
  let base: string;

  beforeAll(async () => {
    t = await startTestService({ GRAPHQL_MAX_TOKENS: '100000' });
    base = `http://127.0.0.1:${await t.service.listen(0)}`;
    // Warm: the first request loads what every later one shares, and the first refusal the code
    // of refusals (11 levels: a text of its own, so no cache holds the documents measured below).
    await post('{ __typename }');
    await post(doubling(11));
  });
  afterAll(() => t?.close());

  async function post(query: string): Promise<Answer> {
    const started = performance.now();
    const res = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query }),
    });
    const body = (await res.json()) as Answer['body'];
    return { status: res.status, ms: performance.now() - started, body };
  }

  async function healthz(): Promise<{ status: number; ms: number }> {
    const started = performance.now();
    const res = await fetch(`${base}/healthz`);
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - started };
  }

  // The bound is wall-clock on a machine that runs the rest of the suite beside this file: answered
  // in a few milliseconds here, it is set at 500 ms, far below what a walk that spreads the fragments
  // out takes (15-27 s at 12 levels, four times as long for each level more).
  for (const levels of [12, 16, 24]) {
    it(`the doubling fragments at ${levels} levels, no credential: 400 COST_LIMIT_EXCEEDED within 500 ms, /healthz answered meanwhile`, async () => {
      const [answer, health] = await Promise.all([post(doubling(levels)), healthz()]);
      expect(answer.status).toBe(400);
      expect(answer.body.data).toBeUndefined();
      expect(answer.body.errors?.map((e) => e.extensions?.code)).toEqual(['COST_LIMIT_EXCEEDED']);
      expect(answer.body.errors![0]!.extensions?.details?.limit).toBe(600);
      expect(answer.ms).toBeLessThan(500);
      expect(health.status).toBe(200);
      expect(health.ms).toBeLessThan(500);
    });
  }

  it('the doubling fragments are priced as before, spread by spread, without spreading them out', () => {
    for (const levels of [1, 2, 3]) expect(documentCost(parse(doubling(levels)))).toBe(2 ** levels);
    const started = performance.now();
    expect(documentCost(parse(doubling(40)))).toBe(2 ** 40);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('one chain of 17 and of 30 doubling fragments: 400 COST_LIMIT_EXCEEDED, not INTERNAL_ERROR', async () => {
    for (const levels of [17, 30]) {
      const answer = await post(chain(levels));
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.map((e) => e.extensions?.code)).toEqual(['COST_LIMIT_EXCEEDED']);
    }
  });

  it(`selection sets nested more than ${MAX_DOCUMENT_DEPTH} levels, in the text or through fragments: 400 VALIDATION_ERROR naming query`, async () => {
    const expectTooDeep = (answer: Answer) => {
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.map((e) => e.extensions?.code)).toEqual(['VALIDATION_ERROR']);
      expect((answer.body.errors![0]!.extensions?.details?.fields as { field: string }[])[0]!.field).toBe('query');
    };
    // In the text: 20,000 levels of braces (the parser recurses per level), and of a list value.
    expectTooDeep(await post(`{ ${'a { '.repeat(20_000)}b${' }'.repeat(20_000)} }`));
    expectTooDeep(await post(`{ properties(ids: ${'['.repeat(20_000)}1${']'.repeat(20_000)}) { totalCount } }`));
    // Through fragments: a chain of 5,000 fragments each spreading the next once.
    const lines = ['query Long { ...F0 }'];
    for (let i = 0; i < 5_000; i++) lines.push(`fragment F${i} on Query { ...F${i + 1} }`);
    lines.push('fragment F5000 on Query { __typename }');
    expectTooDeep(await post(lines.join('\n')));
    // Braces inside strings and comments are not nesting.
    const quoted = await post(`# ${'{'.repeat(100)}\n{ __typename @include(if: true) }`);
    expect(quoted.status).toBe(200);
    expect(quoted.body.data).toEqual({ __typename: 'Query' });
  });

  it(`${MAX_DOCUMENT_DEPTH} levels through fragments pass the nesting check`, async () => {
    // The operation's set, 62 spreads, and the last fragment's set: 64 levels.
    const lines = ['query Fits { ...F0 }'];
    for (let i = 0; i < 62; i++) lines.push(`fragment F${i} on Query { ...F${i + 1} }`);
    lines.push('fragment F62 on Query { __typename }');
    const fits = await post(lines.join('\n'));
    expect(fits.status).toBe(200);
    expect(fits.body.data).toEqual({ __typename: 'Query' });
  });
});
