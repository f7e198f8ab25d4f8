import { readFileSync } from 'node:fs';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { GraphQLError, type DocumentNode, type ExecutionArgs } from 'graphql';
import type { ServerOptions, SubscribePayload } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { pino, type Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { adminRoutes } from '../rest-adapters/admin/index.js';
import { errorBody, errorResponse } from '../rest-adapters/envelope.js';
import { authContext, requestId, type HttpEnv } from '../rest-adapters/http.js';
import { corsRules, httpsRequired, requestDeadline, securityHeaders } from '../rest-adapters/transport.js';
import { chargeWsOperation } from './graphql/rateLimit.js';
import { v1Routes } from '../rest-adapters/v1/index.js';
import { v2Routes } from '../rest-adapters/v2/index.js';
import type { Config } from './config.js';
import { createRequestContext, type AppDeps } from './context.js';
import { openDatabase } from './db/client.js';
import { migrate } from './db/migrate.js';
import { openRedis } from './db/redis.js';
import { createEventBus } from './events/bus.js';
import { createCredentialChanges } from './events/credentialChanges.js';
import { Dispatcher } from './events/dispatcher.js';
import { createGraphQL, maskError, type GraphQLServer, type Yoga } from './graphql/yoga.js';
import {
  authenticate,
  createCredentialCache,
  type CredentialHeaders,
  type Principal,
  ChannelRateLimits,
  createRateLimiter,
  TokenSigner,
} from './services/access/index.js';
import {
  AppError,
  HttpsRequiredError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  SubscriptionLimitError,
  toAppError,
  checkEnvironment,
  claimEnvironment,
  clientAddress,
  isHttps,
  type ConnectionFacts,
} from './services/kernel/index.js';
import { ensureOperatorCredential, seedDemoChannel, type IssuedCredentials } from './services/channels/operator.js';
import { runBookingSync } from './services/bookings/sync.js';
import { purgeExpired } from './services/bookings/idempotency.js';
import { purgeDeliveries, WebhookSender } from './services/webhooks/delivery.js';
import { startSimulator } from './simulator/server.js';
import { PropertyCatalog } from './services/catalog/catalog.js';
import { UpstreamClient } from './upstream/client.js';

export interface ChannelService {
  readonly deps: AppDeps;
  readonly yoga: Yoga;
  /** The whole HTTP surface as a fetch handler (in-process tests call it directly). */
  fetch(request: Request, env?: HttpEnv['Bindings']): Promise<Response>;
  /** Credentials of the demo channel made on this start, if it made one. */
  readonly demoCredentials: IssuedCredentials | null;
  readonly adminToken: { token: string; source: 'env' | 'file'; created: boolean };
  /** The bundled simulator's address when it runs in this process (no UPSTREAM_URL), else null. */
  readonly simulatorUrl: string | null;
  /** This instance's outbox dispatcher (tests and benchmarks drain it). */
  readonly dispatcher: Dispatcher;
  /** Listens on config.port (0 picks a free port); resolves with the bound port. HTTPS with TLS_CERT_FILE. */
  listen(port?: number): Promise<number>;
  /** Reads TLS_CERT_FILE and TLS_KEY_FILE again (a renewed certificate) for new connections; main.ts on SIGHUP. */
  reloadTls(): void;
  /** Stops accepting, lets in-flight requests finish (up to the shutdown timeout), closes everything. */
  close(): Promise<void>;
}

export async function createService(
  config: Config,
  options: { logger?: Logger; clock?: () => Date } = {},
): Promise<ChannelService> {
  const logger = options.logger ?? pino({ level: config.logLevel, base: { service: 'channel' } });
  const db = await openDatabase(config);
  // A database belongs to one environment: another environment's instance refuses to start here,
  // before it migrates or writes anything (src/services/environment.ts).
  try {
    await checkEnvironment(db, config);
    const applied = await migrate(db);
    if (applied.length) logger.info({ applied }, 'migrations applied');
    await claimEnvironment(db, config);
  } catch (error) {
    await db.close();
    throw error;
  }
  const redis = config.redisUrl ? openRedis(config.redisUrl) : undefined;
  // Without UPSTREAM_URL the bundled simulator serves on a loopback port of this process, so the
  // service always speaks to its provider through the same HTTP client.
  const simulator = config.upstreamUrl
    ? undefined
    : await startSimulator({ ...config.simulator, port: 0, host: '127.0.0.1', control: config.env === 'sandbox' });
  const upstream = new UpstreamClient({
    baseUrl: config.upstreamUrl ?? simulator!.url,
    connections: config.upstream.connections,
    deadlines: {
      content: config.upstream.contentTimeoutMs,
      search: config.upstream.searchTimeoutMs,
      booking: config.upstream.bookingTimeoutMs,
    },
    breaker: { threshold: config.upstream.breakerThreshold, cooldownMs: config.upstream.breakerCooldownMs },
    logger,
  });
  let dispatcher: Dispatcher | undefined;
  const credentials = createCredentialCache(config.authCacheTtlMs);
  const deps: AppDeps = {
    config,
    db,
    redis,
    logger,
    upstream,
    catalog: new PropertyCatalog(upstream, config.contentCache),
    tokens: await TokenSigner.load(db.prisma, config),
    credentials,
    credentialChanges: createCredentialChanges(credentials, redis, logger),
    clock: options.clock ?? (() => new Date()),
    events: createEventBus(redis, logger),
    webhookSender: new WebhookSender({
      timeoutMs: config.webhooks.timeoutMs,
      allowHttp: config.webhooks.allowHttp,
      allowPrivateUrls: config.webhooks.allowPrivateUrls,
      connections: config.webhooks.concurrency,
    }),
    dispatcher: { wake: () => dispatcher?.wake() },
    limiters: {
      oauthToken: createRateLimiter({ name: 'oauth-token', points: 20, durationSeconds: 60, redis }),
      api: new ChannelRateLimits(db.prisma, { env: config.env, ...config.rateLimits, redis }),
    },
  };
  const adminToken = await ensureOperatorCredential(db.prisma, config);
  const demoCredentials = config.env === 'sandbox' ? await seedDemoChannel(db.prisma) : null;
  const graphql = createGraphQL(deps);
  const { yoga } = graphql;
  dispatcher = new Dispatcher(deps, deps.events);
  if (config.events.pollIntervalMs > 0) await dispatcher.start();

  let shuttingDown = false;
  const app = new Hono<HttpEnv>();
  app.onError((error, c) => errorResponse(c, error));
  app.notFound((c) => errorResponse(c, new NotFoundError(`No route ${c.req.method} ${c.req.path}`)));
  app.use('*', requestId(deps));
  // On every answer, refusals included (rest-adapters/transport.ts).
  app.use('*', securityHeaders(deps));
  app.use('*', corsRules(deps));

  // Health answers before the shutdown gate, so a load balancer sees readiness drop to 503.
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const checks: Record<string, 'ok' | 'failing'> = { database: 'ok' };
    await db.ping().catch(() => (checks.database = 'failing'));
    if (redis) checks.redis = await redis.ping().then(() => 'ok' as const, () => 'failing' as const);
    checks.upstream = (await upstream.ping()) ? 'ok' : 'failing';
    const ready = !shuttingDown && Object.values(checks).every((v) => v === 'ok');
    return c.json({ status: ready ? 'ready' : 'not_ready', checks, shutting_down: shuttingDown }, ready ? 200 : 503);
  });

  app.use('*', httpsRequired(deps));
  app.use('*', async (_c, next) => {
    if (shuttingDown) throw new ServiceUnavailableError();
    await next();
  });
  app.use('*', requestDeadline(deps));
  app.use(
    '*',
    bodyLimit({
      maxSize: config.bodyLimitBytes,
      onError: () => {
        throw new PayloadTooLargeError(config.bodyLimitBytes);
      },
    }),
  );

  // The credential check also applies the app's IP allow list (403 IP_NOT_ALLOWED).
  app.use('/graphql', authContext(deps, { lenient: true }));
  app.on(['GET', 'POST', 'OPTIONS'], '/graphql', (c) => yoga.fetch(c.req.raw, { ctx: c.get('ctx') }));
  // Any other method (PUT, PATCH, DELETE, ...): 405 in the error envelope, outside GraphQL.
  app.all('/graphql', (c) => {
    throw new MethodNotAllowedError(c.req.method, '/graphql', ['GET', 'POST', 'OPTIONS']);
  });
  // Each channel's request rate is charged in the routers after their credential check (the token
  // endpoint has its own limit); GraphQL by operation cost in its Yoga plugin, graphql-ws
  // operations when they are subscribed.
  app.route('/channel/v1', v1Routes(deps));
  app.route('/api/channel/v2', v2Routes(deps));
  app.route('/admin/v1', adminRoutes(deps));

  let server: ServerType | undefined;
  let wss: WebSocketServer | undefined;

  // Bookings follow the provider (confirmations, stays, no-shows), overdue pending ones are
  // cancelled, expired Idempotency-Keys dropped, and webhook deliveries past their retention
  // purged. One pass at a time per instance; passes of several instances may overlap safely
  // (every change is a conditional update).
  let syncing: Promise<unknown> | undefined;
  const syncTimer =
    config.bookings.syncIntervalMs > 0
      ? setInterval(() => {
          syncing ??= Promise.all([runBookingSync(deps), purgeExpired(deps), purgeDeliveries(deps, deps.clock())])
            .catch((error: unknown) => logger.error({ err: error }, 'booking sync failed'))
            .finally(() => (syncing = undefined));
        }, config.bookings.syncIntervalMs).unref()
      : undefined;

  const service: ChannelService = {
    deps,
    yoga,
    demoCredentials,
    adminToken,
    simulatorUrl: simulator?.url ?? null,
    dispatcher,
    fetch: async (request, env) => app.fetch(request, env),
    listen(port = config.port) {
      const { transport } = config;
      const tls = transport.tls && readTls(transport.tls);
      return new Promise((resolve, reject) => {
        server = serve(
          {
            fetch: app.fetch,
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
        // A graphql-ws message is held to the HTTP body limit (ws's default is 100 MiB).
        wss = new WebSocketServer({ noServer: true, maxPayload: config.bodyLimitBytes });
        useServer(graphqlWsOptions(deps, graphql), wss);
        server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
          const path = new URL(request.url ?? '/', 'http://localhost').pathname;
          if (path !== '/graphql' || shuttingDown) {
            socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
            return;
          }
          if (transport.requireHttps && !isHttps(upgradeFacts(request), config.trustedProxies)) {
            refuseUpgrade(socket, new HttpsRequiredError());
            return;
          }
          wss!.handleUpgrade(request, socket, head, (ws) => wss!.emit('connection', ws, request));
        });
      });
    },
    reloadTls() {
      if (!config.transport.tls || !server) return;
      (server as HttpsServer).setSecureContext(readTls(config.transport.tls));
      logger.info({ cert: config.transport.tls.certFile }, 'TLS certificate reloaded');
    },
    async close() {
      if (shuttingDown) return;
      shuttingDown = true;
      for (const client of wss?.clients ?? []) client.close(1001, 'server shutting down');
      // Ends live subscriptions, so SSE responses finish instead of holding the server open.
      await deps.events.close();
      await deps.credentialChanges.close();
      if (server) {
        const http = server as import('node:http').Server;
        const closed = new Promise<void>((resolve) => http.close(() => resolve()));
        http.closeIdleConnections();
        const timer = setTimeout(() => http.closeAllConnections(), config.shutdownTimeoutMs);
        await closed;
        clearTimeout(timer);
      }
      wss?.close();
      clearInterval(syncTimer);
      await syncing;
      await dispatcher.stop();
      await deps.webhookSender.close();
      await yoga.dispose();
      await upstream.close();
      await simulator?.close();
      if (redis) await redis.quit().catch(() => redis.disconnect());
      await db.close();
    },
  };
  return service;
}

function readTls(files: { certFile: string; keyFile: string }): { cert: Buffer; key: Buffer } {
  return { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
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

/** An upgrade refused before it is a WebSocket: a plain HTTP answer in the error envelope. */
function refuseUpgrade(socket: Duplex, error: AppError): void {
  const body = JSON.stringify(errorBody(error, crypto.randomUUID()));
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * graphql-ws on /graphql: the credential comes in the connection_init payload
 * ({"X-Api-Key": "..."} or {"Authorization": "Bearer ..."}); a connection without a valid one, or
 * from outside its app's IP allow list, is closed with 4403. The credential is checked again for every operation (a key revoked or a token
 * expired after the connection opened is refused like on HTTP), and a connection runs at most
 * SUBSCRIPTIONS_MAX_PER_CONNECTION operations at once. Operations run through Yoga's envelop, so
 * plugins and masking apply: the GraphQL limits (tokens while parsing; depth, aliases, directives,
 * cost and the introspection switch while validating) refuse an operation here as on HTTP, and
 * persisted operations follow the same rules (graphql.operationSource).
 */
type WsExtra = Extra & { credentials?: CredentialHeaders; clientIp?: string | undefined; operations?: Set<string> };

function graphqlWsOptions(deps: AppDeps, graphql: GraphQLServer): ServerOptions<Record<string, unknown>, WsExtra> {
  const { maxPerConnection } = deps.config.subscriptions;
  return {
    onConnect: async (ctx) => {
      const params = lowerKeys(ctx.connectionParams ?? {});
      const credentials = {
        apiKey: stringOrUndefined(params['x-api-key']),
        authorization: stringOrUndefined(params['authorization']),
      };
      // The app's IP allow list applies to the address that opened the socket.
      const clientIp = clientAddress(upgradeFacts(ctx.extra.request), deps.config.trustedProxies);
      try {
        const principal = await authenticate(deps.db.prisma, credentials, { cache: deps.credentials, clientIp });
        if (!principal) return false;
        ctx.extra.credentials = credentials;
        ctx.extra.clientIp = clientIp;
        ctx.extra.operations = new Set();
        return true;
      } catch (error) {
        if (error instanceof AppError) return false;
        throw error;
      }
    },
    execute: (args) => (args.rootValue as EnvelopedRoot).execute(args),
    subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args),
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
        const prepared = await prepareOperation(deps, graphql, ctx, payload);
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
  ctx: { extra: WsExtra },
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
  const requestContext = createRequestContext(deps, {
    requestId: id,
    logger: deps.logger.child({ reqId: id, transport: 'graphql-ws' }),
    principal,
    authError,
    credentials: ctx.extra.credentials,
    clientIp: ctx.extra.clientIp,
    signal: undefined,
  });
  const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
    ctx: requestContext,
    request: ctx.extra.request,
    params: { ...payload, query: source },
  });
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

interface EnvelopedRoot {
  execute: (args: unknown) => never;
  subscribe: (args: unknown) => never;
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

/** By tag: graphql's CommonJS and ESM builds each have their own GraphQLError class. */
function isGraphQLError(value: unknown): value is GraphQLError {
  return Object.prototype.toString.call(value) === '[object GraphQLError]';
}
