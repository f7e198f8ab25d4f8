import type { Context } from 'hono';
import type { HttpEnv } from './env.js';
import { exchange } from './http.js';

/**
 * A streamed response body from an async source of text chunks, pulled as the client reads (so a
 * slow reader holds back the provider calls, and memory stays flat). The caller fetches the first
 * chunk before calling, so a failing provider still gets a proper 502; a failure later can only
 * cut the connection, which the client sees as a truncated transfer.
 */
export function streamResponse(
  c: Context<HttpEnv>,
  chunks: AsyncIterator<string>,
  headers: Record<string, string>,
): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      } catch (error) {
        exchange(c).logger.error({ err: error }, 'stream failed after the response started');
        controller.error(error);
      }
    },
    async cancel() {
      await chunks.return?.();
    },
  });
  // Headers the route set on the context before (servedIn's Content-Language and Vary) go with it:
  // a Response made here would otherwise leave them behind.
  const out = new Headers(c.res.headers);
  for (const [name, value] of Object.entries(headers)) out.set(name, value);
  out.set('x-request-id', c.get('requestId'));
  out.set('cache-control', 'no-store');
  return new Response(body, { status: 200, headers: out });
}

/**
 * Fetches the first item of `source` now and returns a generator that replays it and goes on, so
 * a provider failing at once throws here, before any status is sent.
 */
export async function started<T>(source: AsyncGenerator<T>): Promise<AsyncGenerator<T>> {
  const first = await source.next();
  return (async function* () {
    if (first.done) return;
    yield first.value;
    yield* source;
  })();
}
