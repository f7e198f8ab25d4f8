/**
 * Child process of `npm run bench`: a bare `node:http` server that answers every request with the
 * bytes of PLAIN_BODY_FILE, status PLAIN_STATUS and content-type PLAIN_CONTENT_TYPE (a request body,
 * if any, is read to its end first). Prints `{"port":…}` as one JSON line on stdout.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const file = process.env.PLAIN_BODY_FILE;
if (!file) {
  console.error('serve-plain: PLAIN_BODY_FILE is required');
  process.exit(2);
}
const body = readFileSync(file);
const status = Number(process.env.PLAIN_STATUS ?? 200);
const headers: Record<string, string | number> = { 'content-length': body.length };
if (process.env.PLAIN_CONTENT_TYPE) headers['content-type'] = process.env.PLAIN_CONTENT_TYPE;

const server = createServer((req, res) => {
  req.resume();
  req.once('end', () => {
    res.writeHead(status, headers);
    res.end(body);
  });
});

function stop(): void {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
