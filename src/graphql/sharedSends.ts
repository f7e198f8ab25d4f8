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
 *
 * Events that arrive together (a booking's created and confirmed, committed in one transaction)
 * are executed one after the other and sent together: one write per subscriber, not one per event.
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
  /** It receives the messages numbered above this (those that reached its group after it joined). */
  readonly since: number;
}

/** The `payload` of a `next` message (serialisePayload), and the number of the event it is about. */
export interface SharedMessage {
  readonly seq: number;
  readonly payload: string;
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

/** ws keeps its net.Socket private; corking it makes a subscriber's messages of one round one write. */
interface Corkable {
  cork(): void;
  uncork(): void;
}

function rawSocket(socket: WebSocket): Corkable | undefined {
  const raw = (socket as unknown as { _socket?: Partial<Corkable> })._socket;
  return typeof raw?.cork === 'function' && typeof raw.uncork === 'function' ? (raw as Corkable) : undefined;
}

/**
 * Sends the `next` messages of `messages` (in order) to each live target, those numbered above its
 * `since`, in slices of the event loop. A target's messages of one call go out in one write.
 */
export async function sendShared(targets: readonly SendTarget[], messages: readonly SharedMessage[]): Promise<void> {
  // Per message, its bytes by operation id (most subscribers of a group use the same id).
  const bytes = messages.map(() => new Map<string, Buffer>());
  for (const target of targets) {
    if (performance.now() >= sliceEnds) await nextSlice();
    if (!target.live) continue;
    const { socket, operationId, since } = target;
    if (socket.readyState !== OPEN) continue;
    if (socket.bufferedAmount > MAX_UNSENT_BYTES) {
      // Its operations end when the socket closes (graphql-ws returns them).
      socket.close(SLOW_READER_CLOSE, SLOW_READER_REASON);
      continue;
    }
    const raw = rawSocket(socket);
    raw?.cork();
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]!;
      if (message.seq <= since) continue;
      const byId = bytes[i]!;
      let data = byId.get(operationId);
      if (!data) {
        // {"id","type","payload"} as graphql-ws's stringifyMessage writes it.
        data = Buffer.from(`{"id":${JSON.stringify(operationId)},"type":"next","payload":${message.payload}}`);
        byId.set(operationId, data);
      }
      socket.send(data, TEXT);
    }
    raw?.uncork();
  }
}
