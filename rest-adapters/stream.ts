import type { Context } from 'hono';
import type { HttpEnv } from './env.js';
import { exchange } from './http.js';
import type { DownloadSlot } from '../src/services/catalog/index.js';

/** A download's place (given back when the stream ends, however) and its write timeout. */
export interface Download {
  readonly slot: DownloadSlot;
  readonly writeTimeoutMs: number;
}

/**
 * A streamed response body from an async source of text chunks, pulled as the client reads (so a
 * slow reader holds back the provider calls, and memory stays flat). The caller fetches the first
 * chunk before calling, so a failing provider still gets a proper 502; a failure later can only
 * cut the connection, which the client sees as a truncated transfer. A `download` holds its place
 * until the stream ends and is cut when its reader takes nothing for its write timeout.
 */
export function streamResponse(
  c: Context<HttpEnv>,
  chunks: AsyncIterator<string>,
  headers: Record<string, string>,
  download?: Download,
): Response {
  const encoder = new TextEncoder();
  // A download's watchdog: armed when a chunk is handed to the writer, cleared when the writer
  // asks for the next one (it asks once the socket took the last), so it fires only when the
  // reader has taken nothing for writeTimeoutMs; then the connection is closed, which cancels the
  // stream. The provider's own slowness is not counted (the timer is off while a page is fetched).
  let timer: NodeJS.Timeout | undefined;
  const finish = () => {
    clearTimeout(timer);
    download?.slot.release();
  };
  const arm = download
    ? () => {
        timer = setTimeout(() => {
          exchange(c).logger.info({ timeoutMs: download.writeTimeoutMs }, 'download cut: its reader took nothing');
          finish();
          exchange(c).res.destroy();
        }, download.writeTimeoutMs);
        timer.unref();
      }
    : undefined;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      clearTimeout(timer);
      try {
        const next = await chunks.next();
        if (next.done) {
          finish();
          controller.close();
        } else {
          controller.enqueue(encoder.encode(next.value));
          arm?.();
        }
      } catch (error) {
        finish();
        exchange(c).logger.error({ err: error }, 'stream failed after the response started');
        controller.error(error);
      }
    },
    async cancel() {
      finish();
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
