import { once } from 'node:events';
import { createServer, type ServerResponse, type Server } from 'node:http';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_IMAGE_BYTES, UpstreamClient } from '../../src/upstream/client.js';

/**
 * UpstreamClient.getImage against a provider whose answer each test sets: an image's bytes and
 * type come back as sent; 404 is "no such image"; anything else the protocol does not allow (not a
 * PNG, too large, a 5xx) is 502 UPSTREAM_ERROR; and no path but the provider's image route is ever
 * requested.
 */

let server: Server;
let client: UpstreamClient;
let answer: (res: ServerResponse) => void;
const paths: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    paths.push(`${req.method} ${req.url} ${req.headers.accept}`);
    answer(res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  client = new UpstreamClient({
    baseUrl: `http://127.0.0.1:${port}`,
    connections: 2,
    deadlines: { content: 1000, search: 1000, booking: 1000 },
    breaker: { threshold: 100, cooldownMs: 1000 },
    logger: pino({ level: 'silent' }),
  });
});
afterAll(async () => {
  await client.close();
  server.close();
});
beforeEach(() => {
  paths.length = 0;
});

const PATH = '/images/1/exterior-1/medium.png';
const BYTES = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

describe('getImage', () => {
  it('gives the bytes and the content type the provider sent', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(BYTES);
    };
    const image = await client.getImage(PATH);
    expect(image).toEqual({ bytes: BYTES, contentType: 'image/png' });
    expect(paths).toEqual([`GET ${PATH} image/png`]);
  });

  it('gives undefined when the provider has no such image', async () => {
    answer = (res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'not_found', message: 'no image' } }));
    };
    expect(await client.getImage(PATH)).toBeUndefined();
  });

  it.each([
    ['an answer that is not a PNG', (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>')],
    ['an image declared larger than the limit', (res: ServerResponse) => res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(MAX_IMAGE_BYTES + 1) }).end()],
    [
      'an image larger than the limit without a declared length',
      (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'image/png', 'transfer-encoding': 'chunked' });
        const chunk = Buffer.alloc(1024 * 1024);
        for (let i = 0; i <= MAX_IMAGE_BYTES / chunk.length; i++) res.write(chunk);
        res.end();
      },
    ],
  ])('refuses %s: 502 UPSTREAM_ERROR, not retried', async (_, send) => {
    answer = send;
    await expect(client.getImage(PATH)).rejects.toMatchObject({ status: 502, code: 'UPSTREAM_ERROR' });
    expect(paths).toHaveLength(1);
  });

  it('retries a provider failure, then answers 502 UPSTREAM_ERROR', async () => {
    answer = (res) => res.writeHead(503).end();
    await expect(client.getImage(PATH)).rejects.toMatchObject({ status: 502, code: 'UPSTREAM_ERROR' });
    expect(paths.length).toBeGreaterThanOrEqual(2);
    expect(new Set(paths)).toEqual(new Set([`GET ${PATH} image/png`]));
  });

  it.each(['/properties/1', '/images/1/../../properties/1.png', '/images/1/a/b/medium.png', 'http://elsewhere/images/1/a/medium.png', '/images/1/a/medium.png?x=1'])(
    'requests nothing but the image route: %s is refused',
    async (path) => {
      await expect(client.getImage(path)).rejects.toThrow(TypeError);
      expect(paths).toEqual([]);
    },
  );
});
