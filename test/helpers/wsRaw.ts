import WebSocket from 'ws';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { eventually } from './receiver.js';

/** A graphql-ws message as it travels. */
export interface WsMessage {
  type: string;
  id?: string;
  payload?: any;
}

/** How a connection_init ended: acknowledged, or the socket closed with a code and reason. */
export type InitOutcome = { acked: true } | { code: number; reason: string };

/**
 * A graphql-ws connection spoken by hand (no client library in between), so a test sends exactly
 * the messages it means (a burst, an oversized connection_init) and sees the close frame as the
 * server sent it.
 */
export class RawSocket {
  readonly messages: WsMessage[] = [];
  /** The close code and reason, once the socket closed. */
  closed: { code: number; reason: string } | null = null;

  private readonly waiting = new Map<string, (message: WsMessage) => void>();

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as WsMessage;
      this.messages.push(message);
      const wake = message.id === undefined ? undefined : this.waiting.get(message.id);
      if (wake) {
        this.waiting.delete(message.id!);
        wake(message);
      }
    });
    socket.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
    socket.on('error', () => {});
  }

  /**
   * Opens /graphql and sends connection_init with `payload` (the API key of `who`, or the payload
   * given); answers the socket and how the init ended.
   */
  static async connect(
    port: number,
    who: IssuedCredentials | { payload: unknown },
    headers: Record<string, string> = {},
  ): Promise<{ raw: RawSocket; outcome: InitOutcome }> {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws', { headers });
    const raw = new RawSocket(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with ${res.statusCode}`)));
      socket.once('error', reject);
    });
    const payload = 'payload' in who ? who.payload : { 'X-Api-Key': who.api_key };
    socket.send(JSON.stringify({ type: 'connection_init', payload }));
    const outcome = await eventually(
      () => (raw.messages.some((m) => m.type === 'connection_ack') ? ({ acked: true } as const) : raw.closed),
      10_000,
      'connection_ack or close',
    );
    return { raw, outcome };
  }

  send(message: WsMessage | string): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The first message for operation `id` (next, error or complete), waited for. */
  reply(id: string, timeoutMs = 10_000): Promise<WsMessage> {
    const found = this.messages.find((m) => m.id === id);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for a reply to ${id}`)), timeoutMs);
      this.waiting.set(id, (message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
  }

  /** The error codes of operation `id`'s reply (an `error` message's, or a `next` payload's errors). */
  async codes(id: string): Promise<string[]> {
    const m = await this.reply(id);
    const errors = m.type === 'error' ? m.payload : m.type === 'next' ? (m.payload?.errors ?? []) : [];
    return (errors as { extensions?: { code?: string } }[]).map((e) => e.extensions?.code ?? '');
  }

  close(): void {
    this.socket.close();
  }
}
