import type { ExecutionResult } from 'graphql';
import type { WebSocket } from 'ws';

/**
 * Sending one subscription event to many graphql-ws sockets (src/graphql/multiplex.ts): the
 * `next` message is serialised once per operation id (the same bytes, one Buffer, for every socket
 * whose operation has that id), and the sends are spread over turns of the event loop in slices of
 * SEND_SLICE_MS, so no turn runs much longer than about 10 ms however many subscribers there are:
 * requests and other events are served between the slices.
 *
 * A slow reader does not hold the others back: ws queues what its socket cannot take yet, and a
 * connection with more than MAX_UNSENT_BYTES queued (ws's bufferedAmount) when an event is to be
 * sent to it is closed with SLOW_READER_CLOSE (docs/decisions.md, "Subscriptions").
 */

/** How long sending may run in one turn of the event loop before it lets the loop go on. */
export const SEND_SLICE_MS = 8;
/** What a connection may hold unsent (bytes queued by ws and its socket) before it is closed as too slow. */
export const MAX_UNSENT_BYTES = 256 * 1024;
/** 1013 Try Again Later (RFC 6455 registry): graphql-ws's client counts it as retryable. */
export const SLOW_READER_CLOSE = 1013;
export const SLOW_READER_REASON = 'SLOW_READER: more than 256 KiB of events unsent; events since were not sent';

/** One subscriber to send to. */
export interface SendTarget {
  readonly socket: WebSocket;
  /** The graphql-ws operation id of its subscription. */
  readonly operationId: string;
  /** False once the subscriber has ended: nothing more is sent to it. */
  readonly live: boolean;
}

// ws's WebSocket.OPEN, without importing ws at run time here.
const OPEN = 1;
// A Buffer is sent as a binary frame unless told otherwise; graphql-ws speaks text frames.
const TEXT = { binary: false } as const;

/** The end of the current slice (performance.now()); past it, the next send waits for a new turn. */
let sliceEnds = 0;

function nextSlice(): Promise<void> {
  return new Promise((resolve) =>
    setImmediate(() => {
      sliceEnds = performance.now() + SEND_SLICE_MS;
      resolve();
    }),
  );
}

/** Lets the event loop go on when the current slice has run out (at once otherwise). */
export async function breathe(): Promise<void> {
  if (performance.now() >= sliceEnds) await nextSlice();
}

/**
 * The `payload` of graphql-ws's `next` message for `result`, serialised as graphql-ws serialises
 * it (server.ts emit.next: the result without `errors`, then `errors` as their toJSON when there
 * are any), so the bytes are those graphql-ws would have sent.
 */
export function serialisePayload(result: ExecutionResult): string {
  const { errors, ...rest } = result;
  return JSON.stringify(errors ? { ...rest, errors: errors.map((error) => error.toJSON()) } : rest);
}

/** Sends the `next` message of `payload` (serialisePayload) to each live target, in order, in slices. */
export async function sendShared(targets: readonly SendTarget[], payload: string): Promise<void> {
  const messages = new Map<string, Buffer>();
  for (const target of targets) {
    if (performance.now() >= sliceEnds) await nextSlice();
    if (!target.live) continue;
    const { socket, operationId } = target;
    if (socket.readyState !== OPEN) continue;
    if (socket.bufferedAmount > MAX_UNSENT_BYTES) {
      // Its operations end when the socket closes (graphql-ws returns them).
      socket.close(SLOW_READER_CLOSE, SLOW_READER_REASON);
      continue;
    }
    let message = messages.get(operationId);
    if (!message) {
      // {"id","type","payload"} as graphql-ws's stringifyMessage writes it.
      message = Buffer.from(`{"id":${JSON.stringify(operationId)},"type":"next","payload":${payload}}`);
      messages.set(operationId, message);
    }
    socket.send(message, TEXT);
  }
}
