#!/usr/bin/env node
// A complete webhook receiver for the channel service: it verifies each delivery's signature
// (Standard Webhooks, https://www.standardwebhooks.com), refuses stale or tampered ones, answers
// a delivery it has already handled without handling it twice, and acknowledges quickly.
// Only node:http and node:crypto; Node.js 20 or newer.
//
//   WEBHOOK_SECRET=whsec_... PORT=3000 node docs/examples/webhook-receiver.mjs
//
// WEBHOOK_SECRET is the `secret` the service returned once, when the webhook was created.
// test/contract/docs.test.ts runs this file against the service.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

/** How far webhook-timestamp may be from this machine's clock (Standard Webhooks: 5 minutes). */
const TOLERANCE_SECONDS = 5 * 60;
/** Bodies larger than this are refused before they are read whole (deliveries are a few kilobytes). */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Checks one delivery. `headers` as node gives them (lower-case names), `rawBody` the bytes exactly
 * as they arrived (never a re-serialised object: one changed space breaks the signature).
 * Returns the parsed event, or throws an Error saying why the delivery is refused.
 */
export function verifyWebhook(secret, headers, rawBody, now = Date.now()) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) throw new Error('missing webhook-id, webhook-timestamp or webhook-signature');

  // A replayed old request, or a clock far off: refuse it (the service signs with the time of each attempt).
  const sent = Number(timestamp);
  if (!Number.isInteger(sent) || Math.abs(now / 1000 - sent) > TOLERANCE_SECONDS) throw new Error('timestamp outside the tolerance');

  // The key is the base64 after "whsec_"; the signed content is "<id>.<timestamp>.<body>".
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest();

  // The header may carry several signatures ("v1,<base64> v1,<base64>"): one match is enough.
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new Error('no valid signature');

  return { id, event: JSON.parse(rawBody.toString('utf8')) };
}

/**
 * The receiver: POST any path. 204 for a verified delivery (also one seen before: the service sends
 * the same webhook-id on every retry and replay), 401 for a refused one, 413 for a huge body.
 * `handle(event, id)` does the work; keep it short (the service gives up after WEBHOOK_TIMEOUT_MS,
 * 10 s by default, and retries): queue slow work instead.
 */
export function createWebhookReceiver({ secret, handle = () => {}, log = console.log }) {
  if (!secret?.startsWith('whsec_')) throw new Error('WEBHOOK_SECRET must be the whsec_... secret of the webhook');
  // webhook-ids already handled. Keep them in your database in production; here the last 10,000 in memory.
  const seen = new Set();

  return createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413, { connection: 'close' }).end();
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', async () => {
      let delivery;
      try {
        delivery = verifyWebhook(secret, req.headers, Buffer.concat(chunks));
      } catch (error) {
        log(`rejected ${req.headers['webhook-id'] ?? '-'}: ${error.message}`);
        res.writeHead(401, { 'content-type': 'text/plain' }).end('invalid signature\n');
        return;
      }
      const { id, event } = delivery;
      if (seen.has(id)) {
        log(`duplicate ${id} ${event.type}`);
        res.writeHead(204).end();
        return;
      }
      try {
        await handle(event, id);
      } catch (error) {
        // Not acknowledged: the service retries it later.
        log(`failed ${id} ${event.type}: ${error.message}`);
        res.writeHead(500).end();
        return;
      }
      seen.add(id);
      if (seen.size > 10_000) seen.delete(seen.values().next().value);
      log(`accepted ${id} ${event.type} ${event.data?.id ?? event.data?.webhook_id ?? ''}`.trimEnd());
      res.writeHead(204).end();
    });
  });
}

// Run as a program: listen on PORT (default 3000) of HOST (default 127.0.0.1).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = createWebhookReceiver({
    secret: process.env.WEBHOOK_SECRET,
    // Your work goes here: record the booking's new status, notify your customer, ...
    handle: (event) => {
      if (event.type === 'webhook.ping') return;
      // event.data is the booking record, as GET /channel/v1/bookings/{id} answers it.
    },
  });
  const host = process.env.HOST ?? '127.0.0.1';
  server.listen(Number(process.env.PORT ?? 3000), host, () => {
    console.log(`listening on http://${host}:${server.address().port}`);
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close(() => process.exit(0)));
}
