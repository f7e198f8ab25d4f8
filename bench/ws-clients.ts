/**
 * Child process of `npm run bench`: the subscribers of the subscription scenario, in a process of
 * their own so their work does not count in the service's memory or event loop. Each subscriber is
 * one WebSocket speaking graphql-ws (the `graphql-transport-ws` subprotocol) directly over `ws`:
 * connection_init with {"X-Api-Key": …}, then one `subscribe` to bookingEvents. A message is
 * timestamped (wall clock) the moment it arrives and parsed later, so the client's own parsing is
 * not counted in the latency. Prints `{"pid":…}` when ready.
 *
 * IPC requests (bench/children.ts):
 * - `connect` { url, keys, count, parallel }: opens `count` subscribers (subscriber i uses
 *   keys[i % keys.length]), `parallel` handshakes at a time; answers once each is acknowledged and
 *   its subscribe sent: { connected, failed, ms, errors };
 * - `counts`: per event { id, bookingId, type, n }: how many subscribers received it so far;
 * - `reset`: forgets the events received;
 * - `report`: per event { id, type, occurredAt, receipts: [arrival wall-clock ms…] }, and the
 *   subscribers' error/complete messages and closes;
 * - `memory`: this process's memoryUsage().
 */
import WebSocket from 'ws';
import { answerRequests, wallNow } from './children.js';

// `bookingId` is the booking's REST id (a UUID), which the bookings made over REST are known by;
// `id` is its global id since the graph became Relay's (issue 17).
const QUERY = 'subscription { bookingEvents { id type occurredAt booking { bookingId status } } }';

interface EventSeen {
  id: string;
  bookingId: string;
  type: string;
  occurredAt: string;
  receipts: number[];
}

const sockets: WebSocket[] = [];
let raw: [number, string][] = [];
let events = new Map<string, EventSeen>();
let otherMessages = new Map<string, number>();
let closes = 0;

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Parses what arrived since the last call. */
function digest(): void {
  const batch = raw;
  raw = [];
  for (const [at, text] of batch) {
    let message: { type?: string; payload?: { data?: { bookingEvents?: { id: string; type: string; occurredAt: string; booking?: { bookingId: string } } }; errors?: unknown } };
    try {
      message = JSON.parse(text);
    } catch {
      bump(otherMessages, 'unparsable');
      continue;
    }
    const event = message.type === 'next' ? message.payload?.data?.bookingEvents : undefined;
    if (!event) {
      bump(otherMessages, message.type === 'next' ? 'next without data' : String(message.type));
      continue;
    }
    let seen = events.get(event.id);
    if (!seen) {
      seen = { id: event.id, bookingId: event.booking?.bookingId ?? '', type: event.type, occurredAt: event.occurredAt, receipts: [] };
      events.set(event.id, seen);
    }
    seen.receipts.push(at);
  }
}

function open(url: string, key: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'graphql-transport-ws', { perMessageDeflate: false });
    let acked = false;
    const fail = (error: Error) => {
      if (acked) return;
      acked = true;
      ws.terminate();
      reject(error);
    };
    const timer = setTimeout(() => fail(new Error('no connection_ack within 60 s')), 60_000);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { 'X-Api-Key': key } })));
    ws.on('message', (data: Buffer) => {
      const at = wallNow();
      const text = data.toString('utf8');
      if (!acked) {
        if (text.includes('"connection_ack"')) {
          acked = true;
          clearTimeout(timer);
          ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: QUERY } }));
          resolve(ws);
        } else {
          fail(new Error(`unexpected first message ${text.slice(0, 200)}`));
        }
        return;
      }
      if (text.length < 40 && text.includes('"ping"')) {
        ws.send('{"type":"pong"}');
        return;
      }
      raw.push([at, text]);
    });
    ws.on('error', (error) => fail(error));
    ws.on('close', (code) => {
      clearTimeout(timer);
      if (!acked) fail(new Error(`closed with ${code} before connection_ack`));
      else closes++;
    });
  });
}

async function connect(url: string, keys: string[], count: number, parallel: number) {
  const started = performance.now();
  let next = 0;
  let failed = 0;
  const errors = new Map<string, number>();
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) {
        const i = next++;
        try {
          sockets.push(await open(url, keys[i % keys.length]!));
        } catch (error) {
          failed++;
          bump(errors, error instanceof Error ? error.message : String(error));
        }
      }
    }),
  );
  return { connected: sockets.length, failed, ms: performance.now() - started, errors: Object.fromEntries(errors) };
}

function stop(): void {
  for (const ws of sockets) ws.terminate();
  process.exit(0);
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

answerRequests(async (message) => {
  switch (message.cmd) {
    case 'connect':
      return connect(String(message.url), message.keys as string[], Number(message.count), Number(message.parallel ?? 100));
    case 'counts':
      digest();
      return [...events.values()].map((e) => ({ id: e.id, bookingId: e.bookingId, type: e.type, n: e.receipts.length }));
    case 'reset':
      digest();
      events = new Map();
      otherMessages = new Map();
      return true;
    case 'report':
      digest();
      return { events: [...events.values()], otherMessages: Object.fromEntries(otherMessages), closes, open: sockets.length - closes };
    case 'memory':
      return process.memoryUsage();
    default:
      throw new Error(`unknown request ${message.cmd}`);
  }
});

process.stdout.write(`${JSON.stringify({ pid: process.pid })}\n`);
