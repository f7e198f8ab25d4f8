import { connect as netConnect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRAIN_MS } from '../../rest-adapters/front.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * A refusal made while a body is still arriving (413 over BODY_LIMIT_BYTES) reads and discards the
 * rest of it, as nginx's lingering close does, so a client that sends its whole body before
 * reading gets the answer: for DRAIN_MS and at most 64 times the limit, then a gentle close.
 * Spoken over raw sockets: the client writes before it reads.
 */

describe('early refusals drained (BODY_LIMIT_BYTES)', () => {
  let t: TestService;
  let port: number;
  beforeAll(async () => {
    t = await startTestService();
    port = await t.service.listen(0);
  });
  afterAll(() => t.close());

  /**
   * A raw client: writes the head and `length` bytes of body (one 64 KiB piece over and over),
   * all of it before reading anything, then reads until the answer is whole; with `keepWriting`,
   * reads all along and goes on until the server closes; with `pieceEveryMs`, one piece at a time.
   */
  function sendFirst(head: string, length: number, options: { keepWriting?: boolean; pieceEveryMs?: number; tail?: Buffer } = {}) {
    return new Promise<{ answer: string; written: number; error: string | null; closed: boolean }>((resolve) => {
      let answer = '';
      let written = 0;
      let error: string | null = null;
      const piece = Buffer.alloc(64 * 1024, 'x');
      const socket = netConnect(port, '127.0.0.1');
      const done = (closed: boolean) => resolve({ answer, written, error, closed });
      socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
      socket.on('close', () => done(true));
      socket.on('connect', () => {
        socket.write(head);
        const writeNext = (): void => {
          while (written < length && !socket.destroyed) {
            const part = piece.subarray(0, Math.min(piece.length, length - written));
            written += part.length;
            const more = socket.write(part);
            if (options.pieceEveryMs) return void setTimeout(writeNext, options.pieceEveryMs);
            if (!more) return void socket.once('drain', writeNext);
          }
          if (options.tail && !socket.destroyed) socket.write(options.tail);
          // Only now, with the whole body handed over, does this client read.
          if (!options.keepWriting) socket.on('data', onData);
        };
        if (options.keepWriting) socket.on('data', onData);
        writeNext();
      });
      const onData = (chunk: Buffer) => {
        answer += chunk.toString();
        const end = answer.indexOf('\r\n\r\n');
        const size = /content-length: (\d+)/i.exec(answer)?.[1];
        if (!options.keepWriting && end >= 0 && size && answer.length >= end + 4 + Number(size)) {
          socket.destroy();
          done(false);
        }
      };
      socket.setTimeout(30_000, () => socket.destroy());
    });
  }

  const post = (path: string, length: number) => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  function expect413(answer: string, limit: number): void {
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    const envelope = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string; details: { limit_bytes: number } } };
    expect(envelope.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit_bytes: limit } });
  }

  it('a client that sends a whole 50 MB body before reading gets the 413 envelope, not a reset', async () => {
    const limit = t.config.bodyLimitBytes;
    const length = 50 * 1000 * 1000;
    const { answer, error, written } = await sendFirst(post('/channel/v1/bookings', length), length);
    expect(error).toBeNull();
    expect(written).toBe(length);
    expect413(answer, limit);
    // A chunked body that passes the limit on its way: the same answer.
    const chunked = await sendFirst('POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' + `${(8 * limit).toString(16)}\r\n`, 8 * limit, {
      tail: Buffer.from('\r\n0\r\n\r\n'),
    });
    expect(chunked.error).toBeNull();
    expect413(chunked.answer, limit);
  });

  it('reads at most 64 times the limit of a refused body, then closes gently: the answer read, no reset', async () => {
    const limit = t.config.bodyLimitBytes;
    const length = 200 * limit;
    const result = await sendFirst(post('/channel/v1/bookings', length), length, { keepWriting: true });
    expect(result.closed).toBe(true);
    expect413(result.answer, limit);
    expect(result.error).toBeNull();
    // What the client managed to hand over: about 64 times the limit, plus what the sockets buffer.
    expect(result.written).toBeGreaterThan(32 * limit);
    expect(result.written).toBeLessThan(length);
  });

  it('reads a refused body that keeps coming for about DRAIN_MS, then closes', async () => {
    const limit = t.config.bodyLimitBytes;
    const length = 100 * limit;
    const started = performance.now();
    // 64 KiB every 50 ms: 1.3 MB/s, below the bytes bound within the time bound.
    const result = await sendFirst(post('/channel/v1/bookings', length), length, { keepWriting: true, pieceEveryMs: 50 });
    const took = performance.now() - started;
    expect(result.closed).toBe(true);
    expect413(result.answer, limit);
    expect(result.written).toBeLessThan(length);
    expect(took).toBeGreaterThan(DRAIN_MS - 500);
    expect(took).toBeLessThan(DRAIN_MS + 5_000);
  });
});
