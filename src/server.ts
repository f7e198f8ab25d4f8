import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { inject } from 'light-my-request';
import type { Config } from './config.js';

/**
 * The Node HTTP server (HTTPS with TLS_CERT_FILE) for the service's request listener (the front,
 * rest-adapters/front.ts) on `port` (0 picks a free one); `listening` resolves with the bound port.
 * `responses` is the class of its responses (the front's, which sets the final headers).
 */
export function serveHttp(
  listener: RequestListener,
  responses: new (req: IncomingMessage) => ServerResponse,
  config: Config,
  port: number,
): { server: Server; listening: Promise<number> } {
  const { transport } = config;
  const tls = transport.tls && readTls(transport.tls);
  const options = {
    ServerResponse: responses as typeof ServerResponse,
    // A slow client (slowloris) gets 408 once these run out; checked every second.
    headersTimeout: transport.headersTimeoutMs,
    requestTimeout: transport.receiveTimeoutMs,
    keepAliveTimeout: transport.keepAliveTimeoutMs,
    connectionsCheckingInterval: 1_000,
  };
  const server: Server = tls ? (createHttpsServer({ ...options, ...tls }, listener) as unknown as Server) : createServer(options, listener);
  const listening = new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.host, () => resolve((server.address() as AddressInfo).port));
  });
  return { server, listening };
}

/** Reads TLS_CERT_FILE and TLS_KEY_FILE again (a renewed certificate) for new connections. */
export function reloadTls(server: Server, files: { certFile: string; keyFile: string }): void {
  (server as unknown as HttpsServer).setSecureContext(readTls(files));
}

function readTls(files: { certFile: string; keyFile: string }): { cert: Buffer; key: Buffer } {
  return { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
}

/** Stops accepting and waits for open requests, cutting the connections after the shutdown timeout. */
export async function closeHttp(http: Server, shutdownTimeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  http.closeIdleConnections();
  const timer = setTimeout(() => http.closeAllConnections(), shutdownTimeoutMs);
  await closed;
  clearTimeout(timer);
}

/** The socket an in-process request pretends to come on (none: no address, as a call without a socket). */
export interface InjectedSocket {
  remoteAddress?: string | undefined;
  encrypted?: boolean | undefined;
}

/**
 * A web Request through `listener` without a socket (light-my-request's simulated request and
 * response), as the HTTP server would serve it: in-process tests go through the same front and
 * surfaces as the network. `prepare` sees each simulated response first (the front's final-header
 * hook). The answer's body streams (SSE, multipart); cancelling it closes the simulated
 * connection, as a client hanging up.
 */
export async function injectRequest(
  listener: RequestListener,
  request: Request,
  socket: InjectedSocket | undefined,
  prepare: (res: ServerResponse) => void,
): Promise<Response> {
  const url = new URL(request.url);
  const payload = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const headers: Record<string, string> = { host: url.host };
  for (const [name, value] of request.headers) headers[name] = value;
  let served: ServerResponse | undefined;
  const answer = await inject(
    (req, res) => {
      Object.assign(req.socket, { remoteAddress: socket?.remoteAddress, encrypted: socket?.encrypted === true });
      served = res;
      prepare(res);
      listener(req, res);
    },
    {
      method: request.method as 'GET',
      url: url.pathname + url.search,
      headers,
      ...(payload && { payload }),
      payloadAsStream: true,
      ...(request.signal && { signal: request.signal }),
    },
  );
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, String(one));
  }
  const stream = answer.stream();
  const noBody = request.method === 'HEAD' || answer.statusCode === 204 || answer.statusCode === 304;
  if (noBody) stream.resume();
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel() {
      served?.destroy();
      await chunks.return?.();
    },
  });
  return new Response(noBody ? null : body, { status: answer.statusCode, statusText: answer.statusMessage, headers: responseHeaders });
}
