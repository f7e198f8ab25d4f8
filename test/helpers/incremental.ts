import type { Client } from 'graphql-ws';
import { expect } from 'vitest';

/**
 * Incremental results (@defer, @stream) as a client receives them: a multipart/mixed body read
 * strictly, an event stream's payloads, a graphql-ws operation's `next` messages, and the data a
 * client assembles from the payloads.
 */

/** What Apollo Client sends for an operation with @defer. */
export const APOLLO_ACCEPT = 'multipart/mixed;deferSpec=20220824, application/graphql-response+json, application/json;q=0.9';

export interface Payload {
  data?: any;
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string; details?: Record<string, unknown> } }[];
  incremental?: { data?: any; items?: unknown[]; path: (string | number)[]; label?: string; errors?: Payload['errors'] }[];
  hasNext?: boolean;
  extensions?: { rateLimit?: { cost: number; limit: number; remaining: number; reset: number } };
}

/**
 * A multipart/mixed body (GraphQL over HTTP's incremental delivery RFC) read strictly: the boundary
 * from the Content-Type, a delimiter before each part, each part's own Content-Type (JSON) and
 * Content-Length (its bytes), the close delimiter at the end; the parts' JSON, in order.
 */
export function multipartPayloads(contentType: string | null, body: string): Payload[] {
  const boundary = /^multipart\/mixed;\s*boundary="?([^";]+)"?$/.exec(contentType ?? '')?.[1];
  expect(boundary, `content type ${contentType}`).toBeDefined();
  const delimiter = `\r\n--${boundary}`;
  const close = `${delimiter}--\r\n`;
  expect(body.startsWith(delimiter), JSON.stringify(body.slice(0, 40))).toBe(true);
  expect(body.endsWith(close), JSON.stringify(body.slice(-40))).toBe(true);
  return body
    .slice(delimiter.length, body.length - close.length)
    .split(delimiter)
    .map((part) => {
      expect(part.startsWith('\r\n')).toBe(true);
      const end = part.indexOf('\r\n\r\n');
      const headers = new Map(
        part
          .slice(2, end)
          .split('\r\n')
          .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()] as const),
      );
      const content = part.slice(end + 4);
      expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Number(headers.get('content-length'))).toBe(Buffer.byteLength(content));
      return JSON.parse(content) as Payload;
    });
}

/** An event stream's `next` payloads, and whether it ended with `complete` (pings skipped). */
export function ssePayloads(body: string): { payloads: Payload[]; completed: boolean } {
  const frames = body.split('\n\n').map((f) => f.trim()).filter((f) => f && f !== ':');
  const payloads: Payload[] = [];
  let completed = false;
  for (const frame of frames) {
    const [event, data = ''] = frame.split('\n');
    if (event === 'event: next') payloads.push(JSON.parse(data.slice('data:'.length)) as Payload);
    else if (event === 'event: complete') completed = true;
    else throw new Error(`unexpected frame ${frame}`);
  }
  return { payloads, completed };
}

/** Every `next` payload of one graphql-ws operation until `complete`, or the errors refusing it. */
export function overWs(client: Client, query: string, variables?: Record<string, unknown>): Promise<{ payloads: Payload[]; refused?: Payload['errors'] }> {
  return new Promise((resolve, reject) => {
    const payloads: Payload[] = [];
    client.subscribe(
      { query, variables },
      {
        next: (payload) => payloads.push(payload as Payload),
        error: (error) => (Array.isArray(error) ? resolve({ payloads, refused: error as Payload['errors'] }) : reject(error as Error)),
        complete: () => resolve({ payloads }),
      },
    );
  });
}

/** The data a client assembles from an incremental result (deferred data merged at its path, streamed items appended). */
export function assemble(payloads: Payload[]): any {
  const data = structuredClone(payloads[0]!.data);
  for (const { incremental = [] } of payloads.slice(1)) {
    for (const part of incremental) {
      if (part.items) {
        const index = part.path.at(-1) as number;
        const list = part.path.slice(0, -1).reduce((at: any, key) => at[key], data) as unknown[];
        list.splice(index, part.items.length, ...part.items);
      } else {
        Object.assign(part.path.reduce((at: any, key) => at[key], data), part.data);
      }
    }
  }
  return data;
}

/** What a response body reader gives until `enough` holds for all of it read so far, or the body ends. */
export async function readUntil(reader: ReadableStreamDefaultReader<string>, enough: (text: string) => boolean): Promise<string> {
  let text = '';
  while (!enough(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  return text;
}

/** A promise to be settled from outside. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
