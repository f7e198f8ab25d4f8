import { expect } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { apiKey, type TestService } from './service.js';

/** One `next` payload of a GraphQL subscription over SSE, as a test reads it. */
export interface SsePayload {
  data?: Record<string, any> | null;
  errors?: { message: string; path?: string[]; extensions?: { code?: string; details?: Record<string, unknown> } }[];
}

/** A GraphQL subscription over SSE, read as it arrives: its `next` payloads, and whether the stream ended. */
export interface SseSubscription {
  payloads: SsePayload[];
  ended: boolean;
  cancel(): Promise<void>;
}

/** Subscribes over SSE (POST /graphql, Accept: text/event-stream) with the API key of `who`. */
export async function sseSubscribe(t: TestService, who: IssuedCredentials, query: string, variables?: Record<string, unknown>): Promise<SseSubscription> {
  const res = await t.request('/graphql', {
    method: 'POST',
    headers: { ...apiKey(who), 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query, variables }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const stream: SseSubscription = { payloads: [], ended: false, cancel: () => reader.cancel().catch(() => undefined) };
  void (async () => {
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split('\n').find((line) => line.startsWith('data:'));
        if (frame.startsWith('event: next') && data) stream.payloads.push(JSON.parse(data.slice(5)) as SsePayload);
      }
    }
    stream.ended = true;
  })();
  return stream;
}
