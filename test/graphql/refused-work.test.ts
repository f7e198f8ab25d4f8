import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { graphqlResponse } from '../helpers/graphql.js';
import { expectError } from '../helpers/http.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';
import { RawSocket } from '../helpers/wsRaw.js';

/**
 * Refused GraphQL work is charged and bounded (docs/decisions.md, "Hardening: subscriptions and
 * refused work"): over graphql-ws an operation refused before it runs (it does not parse, validate
 * or pass a limit) costs 1 point, as over HTTP; and a request or operation of a channel this
 * instance knows has no point left is refused with RATE_LIMIT_EXCEEDED before its document is
 * parsed. Parses are counted by the operation metrics (one graphqlParsed per document parsed).
 */

/** A document of its own for each `i` (no parser cache in between), refused in one of three ways. */
function refusedDocument(i: number): { query: string; code: string } {
  if (i % 3 === 0) return { query: `subscription { bookingEvents${i} {`, code: 'GRAPHQL_PARSE_FAILED' };
  if (i % 3 === 1) return { query: `subscription { bookingEvents { id unknown${i} } }`, code: 'GRAPHQL_VALIDATION_FAILED' };
  const nested = 'reservation { bookings { '.repeat(4);
  return { query: `subscription D${i} { bookingEvents { booking { ${nested} bookingId ${'} }'.repeat(4)} } } }`, code: 'DEPTH_LIMIT_EXCEEDED' };
}

describe('refused GraphQL work is charged, and a spent channel is refused before parsing', () => {
  let t: TestService;
  let port: number;

  beforeAll(async () => {
    // A channel's limit (and so what this instance knows of a spent channel) kept for the whole window.
    t = await startTestService({ RATE_LIMIT_CACHE_TTL_MS: '300000', RATE_LIMIT_WINDOW_SECONDS: '600' });
    port = await t.service.listen(0);
  });
  afterAll(() => t?.close());

  const countParses = () => vi.spyOn(t.service.deps.metrics, 'graphqlParsed');

  it('graphql-ws: 2,000 invalid documents on one socket cost a point each; from the 61st on they are RATE_LIMIT_EXCEEDED and never parsed', async () => {
    const who = await t.channel({ name: 'Invalid Documents', rateLimit: { sandbox: 60 } });
    const { raw, outcome } = await RawSocket.connect(port, who);
    expect(outcome).toEqual({ acked: true });
    const parses = countParses();
    const codes: string[] = [];
    try {
      for (let i = 0; i < 2_000; i++) {
        raw.send({ id: `op${i}`, type: 'subscribe', payload: { query: refusedDocument(i).query } });
        codes.push(...(await raw.codes(`op${i}`)));
      }
      expect(parses).toHaveBeenCalledTimes(60);
    } finally {
      parses.mockRestore();
    }
    expect(codes).toHaveLength(2_000);
    expect(codes.slice(0, 60)).toEqual(Array.from({ length: 60 }, (_, i) => refusedDocument(i).code));
    expect(new Set(codes.slice(60))).toEqual(new Set(['RATE_LIMIT_EXCEEDED']));
    const refusal = raw.messages.find((m) => m.id === 'op60')!;
    expect(refusal.type).toBe('error');
    expect(refusal.payload[0].extensions).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { retry_after: expect.any(Number), limit: 60 } });
    // The socket stays open, and the refusals have spent the channel's 60 points.
    expect(raw.closed).toBeNull();
    const me = await t.request('/channel/v1/channels/me', { headers: apiKey(who) });
    await expectError(me, 429, 'RATE_LIMIT_EXCEEDED');
    raw.close();
  });

  it('HTTP: once the channel has no point left, 1,000 POST /graphql are 429 RATE_LIMIT_EXCEEDED before their document is parsed', async () => {
    const who = await t.channel({ name: 'Spent Channel', rateLimit: { sandbox: 60 } });
    // 60 one-point operations spend the window.
    for (let i = 0; i < 60; i++) expect((await graphqlResponse(t, '{ __typename }', undefined, { headers: apiKey(who) })).status).toBe(200);
    // A large document (about 1,000 tokens), as an attacker would send.
    const document = `query Heavy { ${Array.from({ length: 240 }, (_, i) => `f${i}: __typename`).join(' ')} }`;
    const parses = countParses();
    const answers: Response[] = [];
    try {
      for (let i = 0; i < 1_000; i++) answers.push(await graphqlResponse(t, document, { i }, { headers: apiKey(who) }));
      expect(parses).not.toHaveBeenCalled();
    } finally {
      parses.mockRestore();
    }
    for (const res of answers) expect(res.status).toBe(429);
    const last = answers[answers.length - 1]!;
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last.headers.get('x-ratelimit-limit')).toBe('60');
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
    const body = (await last.json()) as { data?: unknown; errors: { extensions: { code: string; details: Record<string, unknown> } }[] };
    expect(body.data).toBeUndefined();
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]!.extensions).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { retry_after: Number(last.headers.get('retry-after')), limit: 60 } });
  });

  it('graphql-ws: an operation of a channel spent over HTTP is refused at subscribe without being parsed', async () => {
    const who = await t.channel({ name: 'Spent Over Both', rateLimit: { sandbox: 3 } });
    for (let i = 0; i < 3; i++) expect((await graphqlResponse(t, '{ __typename }', undefined, { headers: apiKey(who) })).status).toBe(200);
    const { raw } = await RawSocket.connect(port, who);
    const parses = countParses();
    try {
      raw.send({ id: 'valid', type: 'subscribe', payload: { query: '{ channel { name } }' } });
      expect(await raw.codes('valid')).toEqual(['RATE_LIMIT_EXCEEDED']);
      expect(parses).not.toHaveBeenCalled();
    } finally {
      parses.mockRestore();
    }
    raw.close();
  });
});
