import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { serve, type ServerType } from '@hono/node-server';
import type { Config } from './config.js';

type FetchHandler = Parameters<typeof serve>[0]['fetch'];

/**
 * The Node HTTP server (HTTPS with TLS_CERT_FILE) for the service's fetch handler on `port`
 * (0 picks a free one); `listening` resolves with the bound port.
 */
export function serveHttp(fetch: FetchHandler, config: Config, port: number): { server: Server; listening: Promise<number> } {
  const { transport } = config;
  const tls = transport.tls && readTls(transport.tls);
  let server!: ServerType;
  const listening = new Promise<number>((resolve, reject) => {
    server = serve(
      {
        fetch,
        port,
        hostname: config.host,
        ...(tls && { createServer: createHttpsServer }),
        serverOptions: {
          ...tls,
          // A slow client (slowloris) gets 408 once these run out; checked every second.
          headersTimeout: transport.headersTimeoutMs,
          requestTimeout: transport.receiveTimeoutMs,
          keepAliveTimeout: transport.keepAliveTimeoutMs,
          connectionsCheckingInterval: 1_000,
        },
      },
      (info) => resolve(info.port),
    );
    server.once('error', reject);
  });
  return { server: server as Server, listening };
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
