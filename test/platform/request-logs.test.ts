import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { day } from '../helpers/flow.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 20, item 3: every line written while serving a request carries its request id, and with
 * tracing on its trace id; a missing or wrong credential is an info line without a stack.
 */

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  trace_id?: string;
  span_id?: string;
  err?: { stack?: string };
  [key: string]: unknown;
}

const INFO = 30;

async function capturing(tracing: boolean) {
  const lines: Line[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
  const exporter = tracing ? new InMemorySpanExporter() : undefined;
  // Loopback callers (the test's) are trusted with their trace context, so lines carry the caller's trace id.
  const t = await startTestService({ TRACE_CONTEXT_TRUSTED: '127.0.0.0/8' }, { logger, ...(exporter ? { traceExporter: exporter } : {}) });
  const who = await t.channel();
  return { t, who, lines, exporter };
}

/** The lines of one request: those with its id (the request line among them). */
function linesOf(lines: Line[], reqId: string | null): Line[] {
  expect(reqId).toMatch(/^[0-9a-f-]{36}$/);
  return lines.filter((l) => l.reqId === reqId);
}

for (const tracing of [false, true]) {
  describe(`request logs, tracing ${tracing ? 'on' : 'off'}`, () => {
    let t: TestService;
    let who: IssuedCredentials;
    let lines: Line[];
    let exporter: InMemorySpanExporter | undefined;
    beforeAll(async () => {
      ({ t, who, lines, exporter } = await capturing(tracing));
    });
    afterAll(() => t.close());

    /** The request's lines other than the request line, after checking their ids. */
    function checked(reqId: string | null, traceparent?: string): Line[] {
      const mine = linesOf(lines, reqId);
      const request = mine.find((l) => l.msg === 'request');
      expect(request).toBeDefined();
      const others = mine.filter((l) => l !== request);
      for (const line of mine) {
        if (tracing) {
          expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
          expect(line.trace_id).toBe(request!.trace_id);
          if (traceparent) expect(line.trace_id).toBe(traceparent.split('-')[1]);
          // The trace id is that of the request's server span.
          const server = exporter!.getFinishedSpans().find((s) => s.spanContext().spanId === line.span_id);
          expect(server?.spanContext().traceId).toBe(line.trace_id);
        } else {
          expect(line.trace_id).toBeUndefined();
        }
      }
      return others;
    }

    it('a provider failure during a request is logged with the request id', async () => {
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const res = await t.request(`/channel/v1/search/availability/3?checkin=${day(30)}&checkout=${day(32)}&adults=2`, {
        headers: { ...apiKey(who), 'x-test-scenario': 'upstream_error', traceparent },
      });
      expect(res.status).toBe(502);
      const others = checked(res.headers.get('x-request-id'), tracing ? traceparent : undefined);
      expect(others.map((l) => l.msg)).toContain('upstream call failed');
      expect(lines.filter((l) => l.msg === 'upstream call failed' && l.reqId === undefined)).toEqual([]);
    });

    it('a provider failure during a GraphQL operation is logged with the request id, once', async () => {
      const res = await t.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...apiKey(who), 'x-test-scenario': 'upstream_error' },
        body: JSON.stringify({ query: '{ properties(first: 1) { edges { node { id } } } }' }),
      });
      const body = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
      expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
      const others = checked(res.headers.get('x-request-id'));
      expect(others.map((l) => l.msg)).toEqual(expect.arrayContaining(['upstream call failed', 'GraphQL operation failed']));
      expect(others.find((l) => l.msg === 'GraphQL operation failed')?.err?.stack).toBeDefined();
      // Yoga does not log it again without the request id.
      expect(lines.filter((l) => l.reqId === undefined && l.level > INFO)).toEqual([]);
    });

    it('a REST request with a wrong key: an info line with its request id, no stack', async () => {
      const res = await t.request('/channel/v1/bookings', { headers: { 'x-api-key': 'wrong-key-0000000000000000000000' } });
      expect(res.status).toBe(401);
      const others = checked(res.headers.get('x-request-id'));
      const refused = others.find((l) => l.msg === 'credential refused');
      expect(refused).toMatchObject({ level: INFO, code: 'UNAUTHORIZED' });
      expect(refused!.err).toBeUndefined();
      expect(others.filter((l) => l.level > INFO)).toEqual([]);
    });

    it('a REST request without a key: an info line, no stack', async () => {
      const res = await t.request('/channel/v1/bookings');
      expect(res.status).toBe(401);
      const others = checked(res.headers.get('x-request-id'));
      expect(others.find((l) => l.msg === 'credential refused')).toMatchObject({ level: INFO, code: 'UNAUTHORIZED' });
      expect(others.filter((l) => l.level > INFO || l.err)).toEqual([]);
    });

    it('a GraphQL request with a wrong key: an info line with its request id, no stack', async () => {
      const res = await t.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'wrong-key-0000000000000000000000' },
        body: JSON.stringify({ query: '{ bookings(first: 1) { totalCount } }' }),
      });
      const body = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
      expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
      const others = checked(res.headers.get('x-request-id'));
      const refused = others.find((l) => l.msg === 'credential refused');
      expect(refused).toMatchObject({ level: INFO, code: 'UNAUTHORIZED' });
      expect(refused!.err).toBeUndefined();
      expect(others.filter((l) => l.level > INFO || l.err)).toEqual([]);
      // No line about it outside the request.
      expect(lines.filter((l) => l.reqId === undefined && l.level > INFO)).toEqual([]);
    });
  });
}
