/**
 * The W3C `traceparent` of the trace the caller runs in, for what outlives the request and must
 * carry its trace (an outbox event, and the webhook deliveries it causes). Tracing, when on
 * (src/telemetry/tracing.ts), adds its instance as a source; with tracing off there is none, and
 * this returns undefined at once. Several sources live together when a process runs several
 * service instances (tests): the one with a span active here answers.
 */

type Source = () => string | undefined;

const sources: Source[] = [];

export function currentTraceparent(): string | undefined {
  for (const source of sources) {
    const found = source();
    if (found) return found;
  }
  return undefined;
}

/** Adds a source; returns its removal. */
export function addTraceSource(source: Source): () => void {
  sources.push(source);
  return () => {
    const at = sources.indexOf(source);
    if (at >= 0) sources.splice(at, 1);
  };
}
