import WebSocket from 'ws';
import type { AppDeps } from '../context.js';
import { createSubscriptionSlots, type SubscriptionSlots } from '../events/subscriptionSlots.js';
import { addressRefusal } from '../services/access/index.js';
import { PayloadTooLargeError, ServiceUnavailableError, SubscriptionLimitError, type AppError } from '../services/kernel/index.js';

/**
 * What a graphql-ws connection may cost before and while it is open, whoever opens it
 * (docs/decisions.md, "Hardening: subscriptions and refused work"): connection attempts per client
 * address (SUBSCRIPTIONS_CONNECTS_PER_ADDRESS_MINUTE), the bytes of a message before the
 * connection is accepted (connection_init: CONNECTION_INIT_MAX_BYTES), and the connections a
 * channel holds open (SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CHANNEL, across instances with Redis).
 */

/** The largest message a connection may send before its connection_init is accepted. */
export const CONNECTION_INIT_MAX_BYTES = 8 * 1024;

/**
 * graphql-ws's close codes are 4000 plus the HTTP status of the same refusal (its own 4400, 4401,
 * 4403, 4500 follow it): 4401 UNAUTHORIZED, 4403 IP_NOT_ALLOWED, 4413 PAYLOAD_TOO_LARGE, 4429
 * SUBSCRIPTION_LIMIT_EXCEEDED, 4500 INTERNAL_ERROR, 4503 SERVICE_UNAVAILABLE.
 */
const CLOSE_CODE_BASE = 4000;
/** A close frame's reason is at most 123 bytes of UTF-8 (RFC 6455 §5.5). */
const CLOSE_REASON_BYTES = 123;

/** Closes a socket refused at connection_init with the refusal's code, and `CODE: message` as the reason. */
export function refuseConnection(socket: { close(code: number, reason: string): void }, refusal: AppError): void {
  socket.close(CLOSE_CODE_BASE + refusal.status, closeReason(`${refusal.code}: ${refusal.message}`));
}

function closeReason(text: string): string {
  if (Buffer.byteLength(text) <= CLOSE_REASON_BYTES) return text;
  let cut = text.slice(0, CLOSE_REASON_BYTES - 3);
  while (Buffer.byteLength(cut) > CLOSE_REASON_BYTES - 3) cut = cut.slice(0, -1);
  return `${cut}...`;
}

/**
 * The server's WebSocket (ws's `WebSocket` option): until `accepted` (connection_init accepted), a
 * message over CONNECTION_INIT_MAX_BYTES closes the socket with 4413 and never reaches graphql-ws,
 * so nothing of it is parsed. After that, messages are held to BODY_LIMIT_BYTES (maxPayload). A
 * client's breach of the protocol that ws refuses itself (a message over maxPayload: 1009, bad
 * framing: 1002, invalid UTF-8: 1007) closes the socket with ws's code and goes no further:
 * graphql-ws would write it to stderr with its stack and try to close with 4500.
 */
export class GuardedSocket extends WebSocket {
  accepted = false;

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'error' && isClientProtocolError(args[0])) return false;
    if (event === 'message' && !this.accepted && byteLength(args[0]) > CONNECTION_INIT_MAX_BYTES) {
      if (this.readyState === WebSocket.OPEN) {
        refuseConnection(this, new PayloadTooLargeError(CONNECTION_INIT_MAX_BYTES, `A message before connection_init is accepted is at most ${CONNECTION_INIT_MAX_BYTES} bytes`));
      }
      return false;
    }
    return super.emit(event, ...args);
  }
}

/** ws's errors for what a client sent (RangeError or Error with a WS_ERR_* code); ws closes the socket on them. */
function isClientProtocolError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('WS_ERR_');
}

function byteLength(data: unknown): number {
  if (Buffer.isBuffer(data)) return data.length;
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (Array.isArray(data)) return data.reduce((n: number, part: Buffer) => n + part.length, 0);
  return 0;
}

/**
 * Counts an upgrade of /graphql against its client address's attempts; the refusal (429
 * RATE_LIMIT_EXCEEDED with Retry-After, answered before the handshake) when there were too many.
 */
export async function admitUpgrade(deps: AppDeps, clientIp: string | undefined): Promise<AppError | null> {
  const limit = deps.config.subscriptions.connectsPerAddressMinute;
  const refused = await addressRefusal(deps.limiters.graphqlWsConnect, clientIp, limit, { what: 'graphql-ws connection attempts' }, (error) =>
    deps.logger.warn({ err: error, clientIp }, 'graphql-ws connection attempts not counted'),
  );
  if (refused) deps.metrics.rateLimited('graphql_ws');
  return refused;
}

/** The places of the channels' open graphql-ws connections. */
export interface ConnectionPlaces {
  /**
   * Takes a place of the channel for `socket`, given back when the socket closes (and the socket
   * closed with 4429 if its place is lost); the refusal to close it with when there is none.
   */
  admit(socket: WebSocket, channelId: string): Promise<AppError | null>;
  /** Gives back every place this instance holds. */
  close(): Promise<void>;
}

/** The Redis set of a channel's graphql-ws connections (ids scored by lease expiry), beside its subscriptions'. */
export const connectionSlotKey = (channelId: string) => `channel-ws-connections:${channelId}`;

export function createConnectionPlaces(deps: Pick<AppDeps, 'config' | 'redis' | 'logger'>): ConnectionPlaces {
  const limit = deps.config.subscriptions.maxConnectionsPerChannel;
  const slots: SubscriptionSlots = createSubscriptionSlots(deps.redis, deps.logger, connectionSlotKey);
  const scope = deps.redis ? 'at once' : 'on one instance';
  return {
    async admit(socket, channelId) {
      let slot;
      try {
        slot = await slots.admit(channelId, limit);
      } catch (error) {
        deps.logger.error({ err: error, channelId }, 'graphql-ws connection places unavailable');
        return new ServiceUnavailableError('graphql-ws connections are unavailable for now; connect again later');
      }
      if (!slot) return new SubscriptionLimitError(`A channel holds at most ${limit} graphql-ws connections ${scope}; close one first`, limit);
      const place = slot;
      if (socket.readyState !== WebSocket.OPEN) {
        // The client left while the place was being taken.
        place.release();
        return null;
      }
      socket.once('close', () => place.release());
      void place.lost.then(() => {
        refuseConnection(socket, new SubscriptionLimitError(`This connection lost its place among the channel's ${limit}; connect again`, limit));
      });
      return null;
    },
    close: () => slots.close(),
  };
}
