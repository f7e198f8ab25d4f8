import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ExecutionResult, GraphQLError } from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { errorBody } from '../../rest-adapters/envelope.js';
import { routedPath } from '../../rest-adapters/requestPath.js';
import type { AppDeps, RequestContext } from '../context.js';
import { authenticate, type CredentialHeaders } from '../services/access/index.js';
import {
  AppError,
  HttpsRequiredError,
  InternalError,
  NotFoundError,
  SubscriptionLimitError,
  UnauthorizedError,
  clientAddress,
  isHttps,
  negotiateLanguage,
  type ConnectionFacts,
  type Language,
} from '../services/kernel/index.js';
import { maskError } from './maskError.js';
import { createMultiplexer, type Multiplexer } from './multiplex.js';
import { admitUpgrade, createConnectionPlaces, GuardedSocket, refuseConnection, type ConnectionPlaces } from './wsConnections.js';
import { prepareOperation } from './wsOperation.js';
import type { GraphQLServer } from './yoga.js';

/** The graphql-ws server of one listening HTTP server. */
export interface GraphQLWs {
  /** Closes every open socket with 1001 (server shutting down). */
  goingAway(): void;
  /** Stops the WebSocket server and gives back the connections' places. */
  close(): Promise<void>;
  /** Open WebSocket connections (metrics). */
  connections(): number;
}

/**
 * Serves graphql-ws on the HTTP server's upgrades to /graphql (any other path, or a server shutting
 * down, is a bare 404; too many attempts from one client address are 429 and plain HTTP under
 * REQUIRE_HTTPS is 403, both in the error envelope).
 */
export function attachGraphQLWs(server: Server, deps: AppDeps, graphql: GraphQLServer, shuttingDown: () => boolean): GraphQLWs {
  const { config } = deps;
  // A graphql-ws message is held to the HTTP body limit (ws's default is 100 MiB), and to
  // CONNECTION_INIT_MAX_BYTES until connection_init is accepted (GuardedSocket).
  const wss = new WebSocketServer({ noServer: true, maxPayload: config.bodyLimitBytes, WebSocket: GuardedSocket });
  const places = createConnectionPlaces(deps);
  useServer(graphqlWsOptions(deps, graphql, createMultiplexer(deps.events, deps.logger), places), wss);
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (routedPath(request.url ?? '/') !== '/graphql' || shuttingDown()) {
      refuseBare(socket, new NotFoundError());
      return;
    }
    // The socket may fail while its attempt is counted; ws takes its errors once it has it.
    const ignore = () => {};
    socket.on('error', ignore);
    void admitUpgrade(deps, clientAddress(upgradeFacts(request), config.trustedProxies)).then((refusal) => {
      socket.off('error', ignore);
      if (socket.destroyed) return;
      if (shuttingDown()) refuseBare(socket, new NotFoundError());
      else if (refusal) refuseUpgrade(socket, refusal);
      else if (config.transport.requireHttps && !isHttps(upgradeFacts(request), config.trustedProxies)) refuseUpgrade(socket, new HttpsRequiredError());
      else wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
    });
  });
  return {
    goingAway() {
      for (const client of wss.clients) client.close(1001, 'server shutting down');
    },
    async close() {
      wss.close();
      await places.close();
    },
    connections: () => wss.clients.size,
  };
}

function upgradeFacts(request: IncomingMessage): ConnectionFacts {
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(',') : value;
  };
  return {
    peer: request.socket.remoteAddress,
    encrypted: (request.socket as { encrypted?: boolean }).encrypted === true,
    forwardedFor: header('x-forwarded-for'),
    forwardedProto: header('x-forwarded-proto'),
  };
}

/** An upgrade refused with its status line only (no body). */
function refuseBare(socket: Duplex, error: AppError): void {
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nConnection: close\r\n\r\n`);
}

/** An upgrade refused before it is a WebSocket: a plain HTTP answer in the error envelope, with the error's headers. */
function refuseUpgrade(socket: Duplex, error: AppError): void {
  const id = crypto.randomUUID();
  const body = JSON.stringify(errorBody(error, id));
  const headers = Object.entries(error.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\n${headers}Connection: close\r\n\r\n${body}`,
  );
}

/**
 * graphql-ws on /graphql: the credential comes in the connection_init payload, flat
 * ({"X-Api-Key": "..."} or {"Authorization": "Bearer ..."}) or under `headers` ({"headers":
 * {"X-Api-Key": "..."}}, as GraphiQL-style clients send it); see connectionCredentials. A
 * connection without a valid one, or from outside its app's IP allow list, is closed with the
 * refusal's code and reason (refuseConnection): 4401 for no or an invalid credential (unknown,
 * revoked, expired, a suspended app), 4403 for IP_NOT_ALLOWED, 4429 SUBSCRIPTION_LIMIT_EXCEEDED when
 * the channel holds SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CHANNEL connections (wsConnections.ts), and
 * 4413 PAYLOAD_TOO_LARGE for a message over CONNECTION_INIT_MAX_BYTES before that (never parsed). The
 * credential is checked again for
 * every operation (a key revoked or a token expired after the connection opened is refused like on
 * HTTP), and a connection runs at most SUBSCRIPTIONS_MAX_PER_CONNECTION operations at once.
 * Operations run through Yoga's envelop, so plugins and masking apply: the GraphQL limits (tokens
 * while parsing; depth, aliases, directives, cost and the introspection switch while validating)
 * refuse an operation here as on HTTP, and persisted operations follow the same rules
 * (graphql.operationSource). A query or mutation with @defer or @stream returns its payloads one by
 * one (plugins/incrementalDelivery.ts): graphql-ws sends each as a `next` message, then `complete`.
 * The connection's language is connection_init's `Accept-Language` (flat or under `headers`, as
 * the credential), negotiated once; an operation's @inContext(language:) overrides it.
 */
type WsExtra = Extra & { credentials?: CredentialHeaders; clientIp?: string | undefined; language?: Language; operations?: Set<string> };

/**
 * What stands for the upgrade request once the connection is accepted: Yoga's envelop is given a
 * request, and over graphql-ws none of its plugins reads more than that it has no fetch Headers
 * (incrementalDelivery.ts: always incremental over graphql-ws).
 */
const UPGRADED = Object.freeze({ method: 'GET', url: '/graphql', headers: Object.freeze({}) }) as unknown as IncomingMessage;

/** What connection_init says when it carries no credential. */
export const NO_CREDENTIAL_MESSAGE = 'No credential in connection_init: send X-Api-Key or Authorization, flat or under "headers"';

function graphqlWsOptions(
  deps: AppDeps,
  graphql: GraphQLServer,
  multiplexer: Multiplexer,
  places: ConnectionPlaces,
): ServerOptions<Record<string, unknown>, WsExtra> {
  const { maxPerConnection } = deps.config.subscriptions;
  return {
    onConnect: async (ctx) => {
      const socket = ctx.extra.socket as GuardedSocket;
      // Closed already (GuardedSocket refused a connection_init too large): nothing more is read.
      if (socket.readyState !== socket.OPEN) return false;
      const credentials = connectionCredentials(ctx.connectionParams);
      // The app's IP allow list applies to the address that opened the socket.
      const clientIp = clientAddress(upgradeFacts(ctx.extra.request), deps.config.trustedProxies);
      let refusal: AppError | null;
      try {
        const principal = await authenticate(deps.db.prisma, credentials, { cache: deps.credentials, clientIp });
        // The connection takes one of its channel's places (SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CHANNEL).
        refusal = principal ? await places.admit(socket, principal.channelId) : new UnauthorizedError(NO_CREDENTIAL_MESSAGE);
        if (principal && !refusal) {
          socket.accepted = true;
          ctx.extra.credentials = credentials;
          ctx.extra.clientIp = clientIp;
          ctx.extra.language = connectionLanguage(ctx.connectionParams);
          ctx.extra.operations = new Set();
          // graphql-ws keeps the upgrade request for the connection's life; what is needed of it
          // is read now (the address), so it goes (its headers: about 1 KB per subscriber).
          (ctx.extra as { request: IncomingMessage }).request = UPGRADED;
          return true;
        }
      } catch (error) {
        if (error instanceof AppError) refusal = error;
        else {
          // Not the client's fault (the database, say): logged under an id the reason quotes.
          const id = crypto.randomUUID();
          deps.logger.error({ err: error, reqId: id, transport: 'graphql-ws', clientIp }, 'graphql-ws connection_init failed');
          refusal = new InternalError(`An internal error occurred; quote ${id} to support`);
        }
      }
      if (refusal) refuseConnection(socket, refusal);
      // graphql-ws would close with 4403 "Forbidden"; the socket is closing already, so its close is a no-op.
      return false;
    },
    execute: (args) => (args.rootValue as EnvelopedRoot).execute(args),
    subscribe: async (args) => {
      const result = await (args.rootValue as EnvelopedRoot).subscribe(args);
      // A subscriber admitted into a shared execution (multiplex.ts): its own stream is empty and
      // what it receives comes from the group. graphql-ws keeps the operation's arguments for its
      // life; they let go of the subscriber's context, which nothing needs any more.
      const member = multiplexer.joined((args.contextValue as RequestContext | undefined)?.sharing);
      if (!member) return result;
      if (Symbol.asyncIterator in result) await result.return?.();
      args.contextValue = undefined;
      args.rootValue = undefined;
      return member;
    },
    onSubscribe: async (ctx, operationId, payload) => {
      const operations = (ctx.extra.operations ??= new Set());
      if (operations.size >= maxPerConnection) {
        const refusal = new SubscriptionLimitError(`A connection runs at most ${maxPerConnection} operations at once; complete one first`, maxPerConnection);
        return [maskError(refusal, refusal.message) as GraphQLError];
      }
      // The place is taken with the check, before the first await: a burst of subscribe messages
      // cannot all pass the check. It is given back on every path that does not start the
      // operation (a refusal, an error), and by onComplete when a started one ends.
      operations.add(operationId);
      let started = false;
      try {
        const prepared = await prepareOperation(deps, graphql, multiplexer, ctx.extra, operationId, payload);
        started = !Array.isArray(prepared);
        return prepared;
      } finally {
        if (!started) operations.delete(operationId);
      }
    },
    onComplete: (ctx, operationId) => {
      ctx.extra.operations?.delete(operationId);
    },
  };
}

interface EnvelopedRoot {
  execute: (args: unknown) => never;
  subscribe: (args: unknown) => Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult>;
}

/**
 * The credential of a connection_init payload: X-Api-Key and Authorization, in any case, flat or
 * under `headers`; a flat entry wins over the same entry under `headers`. As on HTTP, when both an
 * API key and an Authorization are there, the API key is used (services/access authenticate).
 */
export function connectionCredentials(params: Readonly<Record<string, unknown>> | undefined): CredentialHeaders {
  const flat = lowerKeys(params ?? {});
  const nested = isRecord(flat['headers']) ? lowerKeys(flat['headers']) : {};
  const entry = (name: string) => stringOrUndefined(flat[name]) ?? stringOrUndefined(nested[name]);
  return { apiKey: entry('x-api-key'), authorization: entry('authorization') };
}

/**
 * The language of a connection: its connection_init payload's Accept-Language (any case, flat or
 * under `headers`; a flat entry wins), negotiated as the HTTP header is (none or unsupported: ko-KR).
 */
export function connectionLanguage(params: Readonly<Record<string, unknown>> | undefined): Language {
  const flat = lowerKeys(params ?? {});
  const nested = isRecord(flat['headers']) ? lowerKeys(flat['headers']) : {};
  return negotiateLanguage(stringOrUndefined(flat['accept-language']) ?? stringOrUndefined(nested['accept-language']));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function lowerKeys(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k.toLowerCase(), v]));
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
