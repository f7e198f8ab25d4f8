import type { IncomingMessage } from 'node:http';
import { GraphQLError, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import type { WebSocket } from 'ws';
import { createRequestContext, OperationContext, type AppDeps, type RequestContext, type RequestContextParts, type SubscriptionSharing } from '../context.js';
import { authenticate, type CredentialHeaders, type Principal } from '../services/access/index.js';
import { toAppError, type AppError, type Language } from '../services/kernel/index.js';
import { errorExtensions } from './errors.js';
import { isGraphQLError } from './maskError.js';
import type { Multiplexer, StartGroup } from './multiplex.js';
import { nestedDeeperThan, variablesTooDeep } from './plugins/variableDepth.js';
import { chargeWsOperation, chargeWsRefusal, refuseSpentWs, shareCharge } from './rateLimit.js';
import type { GraphQLServer } from './yoga.js';

/** What a graphql-ws connection knows of its caller once connection_init was accepted (ws.ts). */
export interface WsConnection {
  credentials?: CredentialHeaders;
  clientIp?: string | undefined;
  language?: Language;
  request: IncomingMessage;
  socket: WebSocket;
}

/**
 * A graphql-ws subscribe payload made ready to run through Yoga's envelop: the credential checked
 * again, the document parsed and validated (the limits apply), the operation charged to the
 * channel's rate limit; or the errors refusing it. Before anything parses the document or walks
 * the variables, an operation of a channel this instance knows has no point left is refused
 * (RATE_LIMIT_EXCEEDED), and variables nested too deep are (VALIDATION_ERROR); an operation
 * refused before it runs costs 1 point, as over HTTP (docs/decisions.md, "Hardening: subscriptions
 * and refused work").
 */
export async function prepareOperation(
  deps: AppDeps,
  graphql: GraphQLServer,
  multiplexer: Multiplexer,
  connection: WsConnection,
  operationId: string,
  payload: SubscribePayload,
): Promise<readonly GraphQLError[] | ExecutionArgs> {
  const { principal, authError } = await caller(deps, connection);
  const partsOf = contextParts(deps, connection, principal);
  const id = crypto.randomUUID();
  // Charged for what is refused before the operation's own context is made.
  const early = createRequestContext(deps, partsOf(id, authError, undefined));
  const spent = refuseSpentWs(early);
  if (spent) return spent;
  if (nestedDeeperThan(payload.variables)) {
    const refusal = variablesTooDeep();
    return chargeWsRefusal(early, [new GraphQLError(refusal.message, { extensions: errorExtensions(refusal, false) })]);
  }
  const source = graphql.operationSource(payload);
  if (typeof source !== 'string') return chargeWsRefusal(early, withoutHttp([source]));
  // The envelop of one execution: the operation's context over `context`, with what Yoga's would carry.
  const envelopedFor = (context: RequestContext) =>
    graphql.yoga.getEnveloped(Object.assign(new OperationContext(context), { request: connection.request, params: { ...payload, query: source } }));
  // A subscription shares its execution with the others of the same channel, scopes, document,
  // operation name and variables (multiplex.ts); the group's execution, started by its first
  // subscriber, runs through an envelop of its own with the same parts.
  const start: StartGroup = async (sharing) => {
    const groupContext = createRequestContext(deps, partsOf(crypto.randomUUID(), null, sharing));
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
  const sharing = principal ? multiplexer.member(sharingKey(principal, source, payload, connection.language), connection.socket, operationId, start) : undefined;
  const requestContext = createRequestContext(deps, partsOf(id, authError, sharing));
  return parsedAndValidated(envelopedFor(requestContext), requestContext, source, payload);
}

/** The operation's document parsed and validated in its envelop, then charged; or the errors refusing it. */
async function parsedAndValidated(
  enveloped: ReturnType<GraphQLServer['yoga']['getEnveloped']>,
  requestContext: RequestContext,
  source: string,
  payload: SubscribePayload,
): Promise<readonly GraphQLError[] | ExecutionArgs> {
  const { schema, execute, subscribe, contextFactory, parse, validate } = enveloped;
  const refuse = (errors: readonly GraphQLError[]) => chargeWsRefusal(requestContext, withoutHttp(errors));
  let document: DocumentNode;
  try {
    // The token limit refuses a document while parsing; a syntax error is the client's too.
    document = parse(source);
  } catch (error) {
    if (isGraphQLError(error)) return refuse([error]);
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
    if (isGraphQLError(error)) return refuse([error]);
    throw error;
  }
  if (errors.length) return refuse(errors);
  const limited = await chargeWsOperation(requestContext, { ...args, variables: payload.variables });
  if (limited) return limited;
  return args;
}

/** The connection's credential, checked again for this operation. */
async function caller(deps: AppDeps, connection: WsConnection): Promise<{ principal: Principal | null; authError: AppError | null }> {
  try {
    const principal = await authenticate(deps.db.prisma, connection.credentials ?? {}, { cache: deps.credentials, clientIp: connection.clientIp });
    return { principal, authError: null };
  } catch (error) {
    return { principal: null, authError: toAppError(error) };
  }
}

/** The parts of an operation's request context (or of its shared group's, with `sharing` the group's). */
function contextParts(deps: AppDeps, connection: WsConnection, principal: Principal | null) {
  return (requestId: string, authError: AppError | null, sharing: SubscriptionSharing | undefined): RequestContextParts => ({
    requestId,
    // Made when something logs (most operations never do).
    logger: () => deps.logger.child({ reqId: requestId, transport: 'graphql-ws', ...(sharing?.role === 'group' && { shared: true }) }),
    principal,
    authError,
    credentials: connection.credentials,
    clientIp: connection.clientIp,
    languageHeader: connection.language,
    signal: undefined,
    sharing,
  });
}

/**
 * The group of a subscription (multiplex.ts): its channel, its scopes (what the fields may show),
 * the connection's language (its texts; @inContext is part of the document), the operation name,
 * the variables (keys sorted at every level; at most MAX_VARIABLE_DEPTH deep, checked before) and
 * the document's text.
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
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .filter((k) => record[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${sortedJson(record[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Yoga's HTTP status hints (extensions.http) mean nothing on a socket. */
export function withoutHttp(errors: readonly GraphQLError[]): GraphQLError[] {
  return errors.map((error) => {
    if (!error.extensions?.http) return error;
    const { http: _http, ...extensions } = error.extensions;
    return new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, originalError: error.originalError, extensions });
  });
}
