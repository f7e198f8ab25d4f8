import type { Server } from 'node:http';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from 'pino';
import { adminRoutes } from '../rest-adapters/admin/index.js';
import { errorResponse } from '../rest-adapters/envelope.js';
import type { HttpEnv } from '../rest-adapters/env.js';
import { healthRoutes } from '../rest-adapters/health.js';
import { authContext, requestId } from '../rest-adapters/http.js';
import { corsRules, httpsRequired, requestDeadline, securityHeaders } from '../rest-adapters/transport.js';
import { v1Routes } from '../rest-adapters/v1/index.js';
import { v2Routes } from '../rest-adapters/v2/index.js';
import type { Config } from './config.js';
import type { AppDeps } from './context.js';
import { createDeps } from './deps.js';
import type { Dispatcher } from './events/dispatcher.js';
import { attachGraphQLWs, createGraphQL, renderGraphiQLPage, type GraphQLWs, type Yoga } from './graphql/index.js';
import { startJobs } from './jobs.js';
import { closeHttp, reloadTls, serveHttp } from './server.js';
import { ensureOperatorCredential, seedDemoChannel, type IssuedCredentials } from './services/channels/index.js';
import { MethodNotAllowedError, NotFoundError, PayloadTooLargeError, ServiceUnavailableError } from './services/kernel/index.js';

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

/** Composes the service: deps (deps.ts) -> surfaces (REST, GraphQL, health, operator) -> jobs (jobs.ts) -> listen/close. */
export async function createService(config: Config, options: { logger?: Logger; clock?: () => Date } = {}): Promise<ChannelService> {
  const { deps, dispatcher, simulator } = await createDeps(config, options);
  const { db, redis, logger, upstream } = deps;
  const adminToken = await ensureOperatorCredential(db.prisma, config);
  const demoCredentials = config.env === 'sandbox' ? await seedDemoChannel(db.prisma) : null;
  // GraphiQL (GRAPHQL_GRAPHIQL) is rendered once, with its CSP digests, from the installed package.
  const graphiql = config.graphql.graphiql ? await renderGraphiQLPage() : null;
  const graphql = createGraphQL(deps, graphiql);
  const { yoga } = graphql;
  const jobs = await startJobs(deps, dispatcher);

  let shuttingDown = false;
  const app = new Hono<HttpEnv>();
  app.onError((error, c) => errorResponse(c, error));
  app.notFound((c) => errorResponse(c, new NotFoundError(`No route ${c.req.method} ${c.req.path}`)));
  app.use('*', requestId(deps));
  // On every answer, refusals included (rest-adapters/transport.ts).
  app.use('*', securityHeaders(deps, { graphiql }));
  app.use('*', corsRules(deps));
  // Health answers before the shutdown gate, so a load balancer sees readiness drop to 503.
  healthRoutes(app, deps, () => shuttingDown);
  app.use('*', httpsRequired(deps));
  app.use('*', async (_c, next) => {
    if (shuttingDown) throw new ServiceUnavailableError();
    await next();
  });
  app.use('*', requestDeadline(deps));
  const tooLarge = () => {
    throw new PayloadTooLargeError(config.bodyLimitBytes);
  };
  app.use('*', bodyLimit({ maxSize: config.bodyLimitBytes, onError: tooLarge }));

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

  let server: Server | undefined;
  let ws: GraphQLWs | undefined;
  return {
    deps,
    yoga,
    demoCredentials,
    adminToken,
    simulatorUrl: simulator?.url ?? null,
    dispatcher,
    fetch: async (request, env) => app.fetch(request, env),
    listen(port = config.port) {
      const http = serveHttp(app.fetch, config, port);
      server = http.server;
      ws = attachGraphQLWs(server, deps, graphql, () => shuttingDown);
      return http.listening;
    },
    reloadTls() {
      if (!config.transport.tls || !server) return;
      reloadTls(server, config.transport.tls);
      logger.info({ cert: config.transport.tls.certFile }, 'TLS certificate reloaded');
    },
    async close() {
      if (shuttingDown) return;
      shuttingDown = true;
      ws?.goingAway();
      // Ends live subscriptions, so SSE responses finish instead of holding the server open.
      await deps.events.close();
      await deps.credentialChanges.close();
      if (server) await closeHttp(server, config.shutdownTimeoutMs);
      ws?.close();
      await jobs.stop();
      await deps.webhookSender.close();
      await yoga.dispose();
      await upstream.close();
      await simulator?.close();
      if (redis) await redis.quit().catch(() => redis.disconnect());
      await db.close();
    },
  };
}
