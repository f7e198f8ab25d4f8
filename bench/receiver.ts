/**
 * Child process of `npm run bench`: the webhook receiver of the webhook scenario. A bare
 * `node:http` server on 127.0.0.1 that reads each request and answers 200 at once; then, after the
 * answer has been written, it notes the arrival (wall clock, taken when the whole request had
 * arrived) with the event's `timestamp` (its occurred_at) and type, and verifies the Standard
 * Webhooks signature (`standardwebhooks`, with the secret of the webhook its path names) of every
 * request, so the
 * signing is in the measured path and proven right. Prints `{"port":…}` when listening.
 *
 * IPC requests (bench/children.ts):
 * - `secrets` { secrets }: the signing secret of each webhook, the i-th for path /hook/<i>;
 * - `reset`: forgets what arrived (keeps the secret);
 * - `count`: { received, unique } so far;
 * - `report`: { arrivals: [[arrivedAt, occurredAt]…] of the first arrival of each webhook-id,
 *   received, unique, duplicates, verified, badSignatures, badBodies, types }.
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { answerRequests, listenAndAnnounce, stopOnSignals, wallNow } from './children.js';

/** The signing secret of each webhook, by the last path segment of its URL (/hook/<i>). */
let webhooks: Webhook[] = [];
let seen = new Set<string>();
let arrivedAt: number[] = [];
let occurredAt: number[] = [];
let received = 0;
let verified = 0;
let badSignatures = 0;
let badBodies = 0;
let types = new Map<string, number>();

// The body starts {"type":"…","timestamp":"…", (webhookBody in src/services/webhooks/fanOut.ts).
const HEAD = /^\{"type":"([^"]+)","timestamp":"([^"]+)"/;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const at = wallNow();
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
    res.end('ok');
    received++;
    const body = Buffer.concat(chunks).toString('utf8');
    const id = String(req.headers['webhook-id'] ?? '');
    const head = HEAD.exec(body);
    if (!head) badBodies++;
    const webhook = webhooks[Number((req.url ?? '').split('/').pop())];
    if (!webhook) {
      badSignatures++;
    } else {
      try {
        webhook.verify(body, {
          'webhook-id': id,
          'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
          'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
        });
        verified++;
      } catch {
        badSignatures++;
      }
    }
    if (seen.has(id)) return;
    seen.add(id);
    arrivedAt.push(at);
    occurredAt.push(head ? Date.parse(head[2]!) : Number.NaN);
    const type = head?.[1] ?? '(unreadable)';
    types.set(type, (types.get(type) ?? 0) + 1);
  });
});
server.keepAliveTimeout = 60_000;

stopOnSignals(server);

answerRequests(async (message) => {
  switch (message.cmd) {
    case 'secrets':
      webhooks = (message.secrets as string[]).map((secret) => new Webhook(secret));
      return true;
    case 'reset':
      seen = new Set();
      arrivedAt = [];
      occurredAt = [];
      received = verified = badSignatures = badBodies = 0;
      types = new Map();
      return true;
    case 'count':
      return { received, unique: seen.size };
    case 'report':
      return {
        arrivals: arrivedAt.map((a, i) => [a, occurredAt[i]!]),
        received,
        unique: seen.size,
        duplicates: received - seen.size,
        verified,
        badSignatures,
        badBodies,
        types: Object.fromEntries(types),
      };
    default:
      throw new Error(`unknown request ${message.cmd}`);
  }
});

listenAndAnnounce(server);
