import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_VARIABLE_DEPTH } from '../../src/graphql/plugins/variableDepth.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';
import { RawSocket } from '../helpers/wsRaw.js';

/**
 * Variables nested too deep are a request error, never a stack overflow (docs/decisions.md,
 * "Hardening: subscriptions and refused work"): `variables` nesting more than MAX_VARIABLE_DEPTH
 * levels (the variables object itself is the first) are 400 VALIDATION_ERROR naming `variables`
 * over HTTP, and an `error` message for the operation over graphql-ws, whose socket stays open.
 */

/** `{"a":{"a":...1...}}`, `levels` objects deep, written as text (JSON.stringify of it would overflow). */
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

interface Answer {
  data?: unknown;
  errors: { message: string; extensions: { code: string; details?: { fields?: { field: string; reason: string }[] } } }[];
  extensions?: { rateLimit?: { cost: number } };
}

function expectTooDeep(status: number, body: Answer): void {
  expect(status).toBe(400);
  expect(body.data).toBeUndefined();
  expect(body.errors).toHaveLength(1);
  expect(body.errors[0]!.extensions.code).toBe('VALIDATION_ERROR');
  expect(body.errors[0]!.extensions.details?.fields).toEqual([{ field: 'variables', reason: `nested more than ${MAX_VARIABLE_DEPTH} levels deep (objects and lists)` }]);
}

describe('variables nested too deep', () => {
  let t: TestService;
  let port: number;
  let who: IssuedCredentials;

  beforeAll(async () => {
    t = await startTestService();
    port = await t.service.listen(0);
    who = await t.channel({ name: 'Deep Variables' });
  });
  afterAll(() => t?.close());

  const post = async (body: string, accept = 'application/graphql-response+json') => {
    const res = await t.request('/graphql', { method: 'POST', headers: { ...apiKey(who), 'content-type': 'application/json', accept }, body });
    return { status: res.status, body: (await res.json()) as Answer };
  };

  it('HTTP POST /graphql with variables nested 100,000 levels: 400 VALIDATION_ERROR, charged 1 point, whatever the Accept', async () => {
    const body = `{"query":"query ($x: String) { channel { name } }","variables":{"x":${nested(100_000)}}}`;
    for (const accept of ['application/graphql-response+json', 'application/json']) {
      const res = await post(body, accept);
      expectTooDeep(res.status, res.body);
      expect(res.body.extensions?.rateLimit?.cost).toBe(1);
    }
  });

  it(`HTTP: ${MAX_VARIABLE_DEPTH} levels pass the check, one more is refused; GET query parameters are held to the same bound`, async () => {
    const within = await post(`{"query":"{ __typename }","variables":{"x":${nested(MAX_VARIABLE_DEPTH - 1)}}}`);
    expect(within.status).toBe(200);
    expect(within.body.data).toEqual({ __typename: 'Query' });
    const over = await post(`{"query":"{ __typename }","variables":{"x":[${nested(MAX_VARIABLE_DEPTH - 1)}]}}`);
    expectTooDeep(over.status, over.body);

    const variables = encodeURIComponent(`{"x":${nested(1_000)}}`);
    const res = await t.request(`/graphql?query=${encodeURIComponent('{ __typename }')}&variables=${variables}`, {
      headers: { ...apiKey(who), accept: 'application/graphql-response+json' },
    });
    expectTooDeep(res.status, (await res.json()) as Answer);
  });

  it('graphql-ws: variables nested 100,000 levels are a VALIDATION_ERROR for the operation; the socket stays open and nothing is written to stderr', async () => {
    const stderr = vi.spyOn(console, 'error');
    try {
      const { raw, outcome } = await RawSocket.connect(port, who);
      expect(outcome).toEqual({ acked: true });
      raw.send(`{"id":"deep","type":"subscribe","payload":{"query":"subscription { bookingEvents { id } }","variables":{"x":${nested(100_000)}}}}`);
      const refusal = await raw.reply('deep');
      expect(refusal.type).toBe('error');
      expect(refusal.payload).toEqual([
        {
          message: `The variables are nested more than ${MAX_VARIABLE_DEPTH} levels deep (objects and lists)`,
          extensions: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'variables', reason: `nested more than ${MAX_VARIABLE_DEPTH} levels deep (objects and lists)` }] } },
        },
      ]);
      // The same socket goes on serving.
      raw.send({ id: 'after', type: 'subscribe', payload: { query: '{ channel { name } }' } });
      const next = await raw.reply('after');
      expect(next.type).toBe('next');
      expect(next.payload.data).toEqual({ channel: { name: 'Deep Variables' } });
      expect(raw.closed).toBeNull();
      expect(stderr).not.toHaveBeenCalled();
      raw.close();
    } finally {
      stderr.mockRestore();
    }
  });
});
