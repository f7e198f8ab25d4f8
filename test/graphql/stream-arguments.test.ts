import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';
import { RawSocket } from '../helpers/wsRaw.js';

/**
 * `@stream(initialCount:)` below 0 is the partner's mistake, not the service's: 400
 * VALIDATION_ERROR naming initialCount before anything runs (over graphql-ws an `error` for the
 * operation, the socket open), and no error-level line in the log.
 */

const STREAMED = '{ properties(first: 3) { edges @stream(initialCount: -5) { node { id } } } }';
const STREAMED_BY_VARIABLE = 'query Streamed($n: Int!) { properties(first: 3) { edges @stream(initialCount: $n) { node { id } } } }';
const REFUSAL = { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'initialCount', reason: 'must be 0 or more (found -5)' }] } };

describe('@stream(initialCount: -5)', () => {
  let t: TestService;
  let port: number;
  let who: IssuedCredentials;
  const lines: { level: number; msg?: string }[] = [];

  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    t = await startTestService({}, { logger });
    port = await t.service.listen(0);
    who = await t.channel({ name: 'Streaming Partner' });
  });
  afterAll(() => t?.close());

  const post = async (query: string, variables: Record<string, unknown>, accept = 'multipart/mixed, application/graphql-response+json') => {
    const res = await t.request('/graphql', {
      method: 'POST',
      headers: { ...apiKey(who), 'content-type': 'application/json', accept },
      body: JSON.stringify({ query, variables }),
    });
    return { status: res.status, body: await res.json() };
  };

  it('HTTP, as a literal and as a variable: 400 VALIDATION_ERROR naming initialCount, nothing logged at error level', async () => {
    for (const [query, variables] of [[STREAMED, {}], [STREAMED_BY_VARIABLE, { n: -5 }]] as const) {
      const { status, body } = await post(query, variables);
      expect(status).toBe(400);
      expect(body.data).toBeUndefined();
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0].extensions).toEqual(REFUSAL);
    }
    // null, as a literal or a variable, and a variable's default when it is not sent: the same refusal.
    const nullable = 'query Streamed($n: Int) { properties(first: 3) { edges @stream(initialCount: $n) { node { id } } } }';
    const defaulted = 'query Streamed($n: Int = -5) { properties(first: 3) { edges @stream(initialCount: $n) { node { id } } } }';
    for (const [query, variables, found] of [
      ['{ properties(first: 3) { edges @stream(initialCount: null) { node { id } } } }', {}, 'null'],
      [nullable, { n: null }, 'null'],
      [defaulted, {}, '-5'],
    ] as const) {
      const { status, body } = await post(query, variables);
      expect(status, query).toBe(400);
      expect(body.errors[0].extensions, query).toEqual({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'initialCount', reason: `must be 0 or more (found ${found})` }] } });
    }
    // A nullable variable not sent at all is the directive's default (0): it runs.
    const unsent = await post(nullable, {}, 'application/graphql-response+json');
    expect(unsent.status).toBe(200);
    expect(unsent.body.data.properties.edges).toHaveLength(3);
    // The same document with a count of 0 or more runs (whole, to a client that accepts JSON only).
    const { status, body } = await post(STREAMED_BY_VARIABLE, { n: 0 }, 'application/graphql-response+json');
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data.properties.edges).toHaveLength(3);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });

  it('graphql-ws: an error for the operation, the socket stays open, nothing logged at error level', async () => {
    const { raw, outcome } = await RawSocket.connect(port, who);
    expect(outcome).toEqual({ acked: true });
    raw.send({ id: 'negative', type: 'subscribe', payload: { query: STREAMED_BY_VARIABLE, variables: { n: -5 } } });
    const refusal = await raw.reply('negative');
    expect(refusal.type).toBe('error');
    expect(refusal.payload).toEqual([{ message: 'The request is not valid', extensions: REFUSAL }]);
    raw.send({ id: 'after', type: 'subscribe', payload: { query: '{ channel { name } }' } });
    const next = await raw.reply('after');
    expect(next.type).toBe('next');
    expect(next.payload.data).toEqual({ channel: { name: 'Streaming Partner' } });
    expect(raw.closed).toBeNull();
    raw.close();
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});
