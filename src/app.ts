import type { IncomingMessage, Server } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { adminRoutes } from '../rest-adapters/admin/index.js';
import { errorResponse } from '../rest-adapters/envelope.js';
import type { HttpEnv } from '../rest-adapters/env.js';
import { createFront, FrontResponse, refusalResponse, withFinalHeaders } from '../rest-adapters/front.js';
import { healthRoutes } from '../rest-adapters/health.js';
import { adoptExchange, exchangeOf, templateOf } from '../rest-adapters/http.js';
import { imageRoutes } from '../rest-adapters/images.js';
import { metricsRoutes } from '../rest-adapters/metrics.js';
import { transportRules, withDeadline } from '../rest-adapters/transport.js';
import { v1Routes } from '../rest-adapters/v1/index.js';
import { v2Routes } from '../rest-adapters/v2/index.js';
import type { Config } from './config.js';
import type { AppDeps } from './context.js';
import { createDeps, type DepsOptions } from './deps.js';
import type { Dispatcher } from './events/dispatcher.js';
import { graphqlSurface } from './graphql/http.js';
import { attachGraphQLWs, createGraphQL, renderGraphiQLPage, type GraphQLWs, type Yoga } from './graphql/index.js';
import { startJobs } from './jobs.js';
import { closeHttp, injectRequest, reloadTls, serveHttp, type InjectedSocket } from './server.js';
import { ensureOperatorCredential, seedDemoChannel, type IssuedCredentials } from './services/channels/index.js';
import { NotFoundError } from './services/kernel/index.js';

export interface ChannelService {
  readonly deps: AppDeps;
  readonly yoga: Yoga;
  /**
   * The whole HTTP surface as a fetch handler (in-process tests call it directly): the request goes
   * through the same front as one from the network, on a simulated socket from `env.incoming.socket`.
   */
  fetch(request: Request, env?: { incoming?: { socket?: InjectedSocket } }): Promise<Response>;
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
export async function createService(config: Config, options: DepsOptions = {}): Promise<ChannelService> {
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
  // Security headers, CORS, HTTPS, the deadline: computed once (rest-adapters/transport.ts).
  const rules = await transportRules(deps, { graphiql });
  const app = new Hono<HttpEnv>();
  app.onError((error, c) => errorResponse(c, error));
  app.notFound((c) => errorResponse(c, new NotFoundError(`No route ${c.req.method} ${c.req.path}`)));
  // Request id, client address, HTTPS, the shutdown gate and the body limit are the front's
  // (rest-adapters/front.ts), for every surface at once.
  app.use('*', adoptExchange());
  healthRoutes(app, deps, () => shuttingDown);
  // Prometheus metrics: loopback, or the operator token with METRICS_ALLOW_REMOTE.
  metricsRoutes(app, deps);
  // The public image route (no credential: an <img> sends none); the front's rules still apply.
  imageRoutes(app, deps);

  // Each channel's request rate is charged in the routers after their credential check (the token
  // endpoint has its own limit); GraphQL by operation cost in its Yoga plugin, graphql-ws
  // operations when they are subscribed.
  app.route('/channel/v1', v1Routes(deps));
  app.route('/api/channel/v2', v2Routes(deps));
  app.route('/admin/v1', adminRoutes(deps));

  // Hono on node:http through @hono/node-server's lightweight request (no web Request is built
  // unless a handler reads the body or the signal); the front has read the body already.
  const rest = getRequestListener(
    (request, env) => {
      const ex = exchangeOf(env.incoming as IncomingMessage)!;
      const deadline = rules.deadlineOf(ex.req.method ?? 'GET', ex.header('idempotency-key'));
      const answer = app.fetch(request, env as HttpEnv['Bindings']);
      return deadline === null ? answer : withDeadline(Promise.resolve(answer), deadline, (error) => refusalResponse(ex, error));
    },
    { autoCleanupIncoming: false },
  );
  // POST and GET /graphql: Yoga's node adapter behind the same front (src/graphql/http.ts); the
  // credential check there also applies the app's IP allow list (IP_NOT_ALLOWED on the fields).
  // A refusal of the front is labelled by the route Hono would have answered with.
  const routeOf = (method: string, path: string) => templateOf(app.router.match(method === 'HEAD' ? 'GET' : method, path)[0].map(([[, route]]) => route));
  const front = createFront(deps, rules, { rest: (req, res) => void rest(req, res), graphql: graphqlSurface(deps, rules, yoga), routeOf }, () => shuttingDown);

  let server: Server | undefined;
  let ws: GraphQLWs | undefined;
  return {
    deps,
    yoga,
    demoCredentials,
    adminToken,
    simulatorUrl: simulator?.url ?? null,
    dispatcher,
    fetch: (request, env) => injectRequest(front, request, env?.incoming?.socket, withFinalHeaders),
    listen(port = config.port) {
      const http = serveHttp(front, FrontResponse, config, port);
      server = http.server;
      ws = attachGraphQLWs(server, deps, graphql, () => shuttingDown);
      const connections = ws;
      deps.metrics.watch({ wsConnections: () => connections.connections() });
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
      await ws?.close();
      await jobs.stop();
      await deps.webhookOutcomes.close();
      await deps.webhookSender.close();
      await yoga.dispose();
      await upstream.close();
      await simulator?.close();
      if (redis) await redis.quit().catch(() => redis.disconnect());
      await db.close();
      await deps.tracing?.shutdown();
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
    },
  };
}
