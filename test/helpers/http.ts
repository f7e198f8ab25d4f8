import { connect } from 'node:net';
import { expect } from 'vitest';

/** The `error` member of the service's error envelope. */
export interface ApiError {
  code: string;
  message: string;
  details: Record<string, any> | null;
}

export interface ExpectErrorOptions {
  /**
   * false for an answer that is not the service's envelope (the provider simulator's errors):
   * then only the status, the code and a message are checked. Default true: the envelope's
   * `details` member and `meta` (a request id equal to the X-Request-Id header, a timestamp).
   */
  envelope?: boolean;
}

/**
 * Checks an error answer: its status and `error.code`, a message, and (unless `envelope: false`)
 * the envelope's `details` and `meta`. Returns the `error` member.
 */
export async function expectError(res: Response, status: number, code: string, { envelope = true }: ExpectErrorOptions = {}): Promise<ApiError> {
  const text = await res.text();
  let body: { error?: ApiError; meta?: { request_id?: unknown; timestamp?: unknown } };
  try {
    body = JSON.parse(text);
  } catch {
    body = {};
  }
  expect({ status: res.status, code: body.error?.code }, text).toEqual({ status, code });
  expect(typeof body.error!.message).toBe('string');
  if (envelope) {
    expect(body.error).toHaveProperty('details');
    expect(body.meta).toMatchObject({ request_id: expect.any(String), timestamp: expect.any(String) });
    expect(body.meta!.request_id).toBe(res.headers.get('x-request-id'));
  }
  return body.error!;
}

/**
 * One request written byte for byte on a fresh socket to 127.0.0.1:`port` (a target a client
 * library would normalise, an upgrade, hostile headers), and all the server wrote until it closed.
 */
export function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}
