import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { ServerOptions, SubscribePayload } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { errorBody } from '../../rest-adapters/envelope.js';
import { createRequestContext, OperationContext, type AppDeps, type RequestContext } from '../context.js';
import { authenticate, type CredentialHeaders, type Principal } from '../services/access/index.js';
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
  toAppError,
  type ConnectionFacts,
  type Language,
} from '../services/kernel/index.js';
import { isGraphQLError, maskError } from './maskError.js';
import { createMultiplexer, type Multiplexer, type StartGroup } from './multiplex.js';
import { chargeWsOperation, shareCharge } from './rateLimit.js';
import type { GraphQLServer } from './yoga.js';

/** The graphql-ws server of one listening HTTP server. */
export interface GraphQLWs {
  /** Closes every open socket with 1001 (server shutting down). */
  goingAway(): void;
  /** Stops the WebSocket server. */
  close(): void;
  /** Open WebSocket connections (metrics). */
  connections(): number;
}

/**
 * Serves graphql-ws on the HTTP server's upgrades to /graphql (any other path, or a server shutting
 * down, is a bare 404; plain HTTP under REQUIRE_HTTPS is refused in the error envelope).
 */
export function attachGraphQLWs(server: Server, deps: AppDeps, graphql: GraphQLServer, shuttingDown: () => boolean): GraphQLWs {
  const { config } = deps;
  // A graphql-ws message is held to the HTTP body limit (ws's default is 100 MiB).
  const wss = new WebSocketServer({ noServer: true, maxPayload: config.bodyLimitBytes });
  useServer(graphqlWsOptions(deps, graphql, createMultiplexer(deps.events, deps.logger)), wss);
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== '/graphql' || shuttingDown()) {
      refuseBare(socket, new NotFoundError());
      return;
    }
    if (config.transport.requireHttps && !isHttps(upgradeFacts(request), config.trustedProxies)) {
      refuseUpgrade(socket, new HttpsRequiredError());
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  });
  return {
    goingAway() {
      for (const client of wss.clients) client.close(1001, 'server shutting down');
    },
    close() {
      wss.close();
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

/** An upgrade refused before it is a WebSocket: a plain HTTP answer in the error envelope. */
function refuseUpgrade(socket: Duplex, error: AppError): void {
  const body = JSON.stringify(errorBody(error, crypto.randomUUID()));
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * graphql-ws on /graphql: the credential comes in the connection_init payload, flat
 * ({"X-Api-Key": "..."} or {"Authorization": "Bearer ..."}) or under `headers` ({"headers":
 * {"X-Api-Key": "..."}}, as GraphiQL-style clients send it); see connectionCredentials. A
 * connection without a valid one, or from outside its app's IP allow list, is closed with the
 * refusal's code and reason (refuseConnection): 4401 for no or an invalid credential (unknown,
 * revoked, expired, a suspended app), 4403 for IP_NOT_ALLOWED. The credential is checked again for
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

function graphqlWsOptions(deps: AppDeps, graphql: GraphQLServer, multiplexer: Multiplexer): ServerOptions<Record<string, unknown>, WsExtra> {
  const { maxPerConnection } = deps.config.subscriptions;
  return {
    onConnect: async (ctx) => {
      const credentials = connectionCredentials(ctx.connectionParams);
      // The app's IP allow list applies to the address that opened the socket.
      const clientIp = clientAddress(upgradeFacts(ctx.extra.request), deps.config.trustedProxies);
      let refusal: AppError;
      try {
        const principal = await authenticate(deps.db.prisma, credentials, { cache: deps.credentials, clientIp });
        if (principal) {
          ctx.extra.credentials = credentials;
          ctx.extra.clientIp = clientIp;
          ctx.extra.language = connectionLanguage(ctx.connectionParams);
          ctx.extra.operations = new Set();
          // graphql-ws keeps the upgrade request for the connection's life; what is needed of it
          // is read now (the address), so it goes (its headers: about 1 KB per subscriber).
          (ctx.extra as { request: IncomingMessage }).request = UPGRADED;
          return true;
        }
        refusal = new UnauthorizedError(NO_CREDENTIAL_MESSAGE);
      } catch (error) {
        if (error instanceof AppError) refusal = error;
        else {
          // Not the client's fault (the database, say): logged under an id the reason quotes.
          const id = crypto.randomUUID();
          deps.logger.error({ err: error, reqId: id, transport: 'graphql-ws', clientIp }, 'graphql-ws connection_init failed');
          refusal = new InternalError(`An internal error occurred; quote ${id} to support`);
        }
      }
      refuseConnection(ctx.extra.socket, refusal);
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
        const prepared = await prepareOperation(deps, graphql, multiplexer, ctx, operationId, payload);
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

/**
 * A graphql-ws subscribe payload made ready to run through Yoga's envelop: the credential checked
 * again, the document parsed and validated (the limits apply), the operation charged to the
 * channel's rate limit; or the errors refusing it.
 */
async function prepareOperation(
  deps: AppDeps,
  graphql: GraphQLServer,
  multiplexer: Multiplexer,
  ctx: { extra: WsExtra },
  operationId: string,
  payload: SubscribePayload,
): Promise<readonly GraphQLError[] | ExecutionArgs> {
  const { yoga } = graphql;
  const source = graphql.operationSource(payload);
  if (typeof source !== 'string') return withoutHttp([source]);
  let principal: Principal | null = null;
  let authError: AppError | null = null;
  try {
    principal = await authenticate(deps.db.prisma, ctx.extra.credentials ?? {}, {
      cache: deps.credentials,
      clientIp: ctx.extra.clientIp,
    });
  } catch (error) {
    authError = toAppError(error);
  }
  const id = crypto.randomUUID();
  // The envelop of one execution: the operation's context over `context`, with what Yoga's would carry.
  const envelopedFor = (context: RequestContext) =>
    yoga.getEnveloped(Object.assign(new OperationContext(context), { request: ctx.extra.request, params: { ...payload, query: source } }));
  // A subscription shares its execution with the others of the same channel, scopes, document,
  // operation name and variables (multiplex.ts); the group's execution, started by its first
  // subscriber, runs through an envelop of its own with the same parts.
  const start: StartGroup = async (sharing) => {
    const groupId = crypto.randomUUID();
    const groupContext = createRequestContext(deps, {
      requestId: groupId,
      logger: () => deps.logger.child({ reqId: groupId, transport: 'graphql-ws', shared: true }),
      principal,
      authError: null,
      credentials: ctx.extra.credentials,
      clientIp: ctx.extra.clientIp,
      languageHeader: ctx.extra.language,
      signal: undefined,
      sharing,
    });
    shareCharge(groupContext, requestContext);
    const shared = envelopedFor(groupContext);
    return (await shared.subscribe({
      schema: shared.schema,
      operationName: payload.operationName,
      document: shared.parse(source),
      variableValues: payload.variables,
      contextValue: await shared.contextFactory(),
      rootValue: { execute: shared.execute, subscribe: shared.subscribe },
    })) as AsyncIterable<ExecutionResult> | ExecutionResult;
  };
  const requestContext = createRequestContext(deps, {
    requestId: id,
    // Made when something logs (most operations never do).
    logger: () => deps.logger.child({ reqId: id, transport: 'graphql-ws' }),
    principal,
    authError,
    credentials: ctx.extra.credentials,
    clientIp: ctx.extra.clientIp,
    languageHeader: ctx.extra.language,
    signal: undefined,
    sharing: principal
      ? multiplexer.member(sharingKey(principal, source, payload, ctx.extra.language), ctx.extra.socket, operationId, start)
      : undefined,
  });
  const { schema, execute, subscribe, contextFactory, parse, validate } = envelopedFor(requestContext);
  let document: DocumentNode;
  try {
    // The token limit refuses a document while parsing; a syntax error is the client's too.
    document = parse(source);
  } catch (error) {
    if (isGraphQLError(error)) return withoutHttp([error]);
    throw error;
  }
  const args = {
    schema,
    operationName: payload.operationName,
    document,
    variableValues: payload.variables,
    contextValue: await contextFactory(),
    rootValue: { execute, subscribe },
  };
  let errors: readonly GraphQLError[];
  try {
    errors = validate(args.schema, args.document);
  } catch (error) {
    // The cost limit refuses by throwing (it must not be cached with the document).
    if (isGraphQLError(error)) return withoutHttp([error]);
    throw error;
  }
  if (errors.length) return withoutHttp(errors);
  const limited = await chargeWsOperation(requestContext, { ...args, variables: payload.variables });
  if (limited) return limited;
  return args;
}

/**
 * The group of a subscription (multiplex.ts): its channel, its scopes (what the fields may show),
 * the connection's language (its texts; @inContext is part of the document), the operation name,
 * the variables (keys sorted at every level) and the document's text.
 */
function sharingKey(principal: Principal, source: string, payload: SubscribePayload, language: Language | undefined): string {
  return [
    principal.channelId,
    [...principal.scopes].sort().join(' '),
    language ?? '',
    payload.operationName ?? '',
    sortedJson(payload.variables ?? null),
    source,
  ].join('\n');
}

function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (isRecord(value)) {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${sortedJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
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

/**
 * graphql-ws's close codes are 4000 plus the HTTP status of the same refusal (its own 4400, 4401,
 * 4403, 4500 follow it): 4401 UNAUTHORIZED, 4403 IP_NOT_ALLOWED, 4500 INTERNAL_ERROR.
 */
const CLOSE_CODE_BASE = 4000;
/** A close frame's reason is at most 123 bytes of UTF-8 (RFC 6455 §5.5). */
const CLOSE_REASON_BYTES = 123;

/** Closes a socket refused at connection_init with the refusal's code, and `CODE: message` as the reason. */
function refuseConnection(socket: { close(code: number, reason: string): void }, refusal: AppError): void {
  socket.close(CLOSE_CODE_BASE + refusal.status, closeReason(`${refusal.code}: ${refusal.message}`));
}

function closeReason(text: string): string {
  if (Buffer.byteLength(text) <= CLOSE_REASON_BYTES) return text;
  let cut = text.slice(0, CLOSE_REASON_BYTES - 3);
  while (Buffer.byteLength(cut) > CLOSE_REASON_BYTES - 3) cut = cut.slice(0, -1);
  return `${cut}...`;
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

/** Yoga's HTTP status hints (extensions.http) mean nothing on a socket. */
function withoutHttp(errors: readonly GraphQLError[]): GraphQLError[] {
  return errors.map((error) => {
    if (!error.extensions?.http) return error;
    const { http: _http, ...extensions } = error.extensions;
    return new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, originalError: error.originalError, extensions });
  });
}
