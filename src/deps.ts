import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import type { AppDeps } from './context.js';
import { openDatabase } from './db/client.js';
import { secureDataDir } from './db/dataDir.js';
import { migrate } from './db/migrate.js';
import { openRedis } from './db/redis.js';
import { createEventBus } from './events/bus.js';
import { createCredentialChanges } from './events/credentialChanges.js';
import { Dispatcher } from './events/dispatcher.js';
import { Metrics } from './metrics/index.js';
import { ChannelRateLimits, createCredentialCache, createRateLimiter, TokenSigner } from './services/access/index.js';
import { InFlight } from './services/bookings/index.js';
import { DownloadSlots, ImageCache, PropertyCatalog } from './services/catalog/index.js';
import { checkEnvironment, claimEnvironment } from './services/kernel/index.js';
import { AvailabilityCache } from './services/search/index.js';
import { DeliveryWork, OutcomeRecorder, WebhookSender, webhookBacklog } from './services/webhooks/index.js';
import { startSimulator, type RunningSimulator } from './simulator/server.js';
import { UpstreamClient } from './upstream/client.js';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

export interface DepsOptions {
  logger?: Logger;
  clock?: () => Date;
  /** Tests: traces go to this exporter (an InMemorySpanExporter), and tracing is on whatever OTEL_* says. */
  traceExporter?: SpanExporter;
}

/** What createService holds for the process's life, beside the deps every request sees. */
export interface BuiltDeps {
  deps: AppDeps;
  /** This instance's outbox dispatcher (deps.dispatcher.wake reaches it); started by jobs.ts. */
  dispatcher: Dispatcher;
  /** The bundled simulator when it runs in this process (no UPSTREAM_URL). */
  simulator: RunningSimulator | undefined;
}

/**
 * Opens the database (checked against this environment and migrated), Redis, the provider client
 * (the bundled simulator without UPSTREAM_URL), caches, limiters and the event bus.
 */
export async function createDeps(config: Config, options: DepsOptions = {}): Promise<BuiltDeps> {
  // Lines are written asynchronously, about 16 KB at a time (just under sonic-boom's largest write) or every
  // 250 ms, so the request log costs no write per request: at 4 KiB the writes were about 5 % of a cached
  // REST read's CPU at info, at 16 KB under 2 % (profiles, issue 18). pino flushes it on exit, and close()
  // flushes it (app.ts).
  const logger =
    options.logger ??
    pino({ level: config.logLevel, base: { service: 'channel' } }, pino.destination({ dest: 1, sync: false, minLength: 16_000, periodicFlush: 250 }));
  const metrics = new Metrics(logger);
  // Tracing (OTEL_*): undefined when off, and then nothing below traces anything.
  // The OpenTelemetry packages are not even loaded with tracing off.
  const tracing =
    config.tracing || options.traceExporter ? (await import('./telemetry/tracing.js')).createTracing(config, { exporter: options.traceExporter }) : undefined;
  // This instance's identity (below: its liveness), also the application_name of its connections.
  const instanceId = randomUUID();
  const db = await openDatabase(config, metrics, tracing ? (factory) => tracing.wrapAdapter(factory) : undefined, `channel-service ${instanceId}`);
  // A database belongs to one environment: another environment's instance refuses to start here,
  // before it migrates or writes anything (src/services/kernel/environment.ts).
  try {
    await checkEnvironment(db, config);
    const applied = await migrate(db);
    if (applied.length) logger.info({ applied }, 'migrations applied');
    await claimEnvironment(db, config);
    // PGlite rewrites some of its files at open and migration with modes of its own (db/dataDir.ts).
    if (db.kind === 'pglite' || existsSync(config.dataDir)) secureDataDir(config.dataDir);
  } catch (error) {
    await db.close();
    throw error;
  }
  if (db.kind === 'pglite' && config.env === 'production') {
    logger.error(
      { dataDir: config.dataDir },
      'production runs on the embedded database (ALLOW_EMBEDDED_DATABASE_IN_PRODUCTION=true): one process only, no second instance, no failover; set DATABASE_URL',
    );
  }
  // Its liveness lease for as long as it lives (db/client.ts): the bookings, cancellations and
  // Idempotency-Keys it has in flight carry the id, and another instance takes them over once the
  // lease has been gone for LIVENESS_GRACE_MS (services/bookings/sync.ts, recoverInFlight).
  try {
    await db.holdLiveness(instanceId, (error) => logger.warn({ err: error, instance: instanceId }, 'liveness connection lost; taking the lock again'));
  } catch (error) {
    await db.close();
    throw error;
  }
  const redis = config.redisUrl ? openRedis(config.redisUrl, config.redisCommandTimeoutMs) : undefined;
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
    observer: metrics,
    tracer: tracing?.upstream,
  });
  let dispatcher: Dispatcher | undefined;
  const credentials = createCredentialCache(config.authCacheTtlMs);
  const clock = options.clock ?? (() => new Date());
  const deps: AppDeps = {
    config,
    instanceId,
    inFlight: new InFlight(),
    db,
    redis,
    logger,
    metrics,
    tracing,
    upstream,
    catalog: new PropertyCatalog(upstream, config.contentCache),
    images: new ImageCache(upstream, config.imageCache),
    downloads: new DownloadSlots(config.downloads),
    searchCache: new AvailabilityCache(upstream, { ...config.searchCache, clock }),
    tokens: await TokenSigner.load(db.prisma, config),
    credentials,
    credentialChanges: createCredentialChanges(credentials, redis, logger),
    clock,
    events: createEventBus(redis, logger),
    webhookSender: new WebhookSender({
      timeoutMs: config.webhooks.timeoutMs,
      allowHttp: config.webhooks.allowHttp,
      allowPrivateUrls: config.webhooks.allowPrivateUrls,
      connections: config.webhooks.concurrency,
      observe: (outcome, seconds) => metrics.webhookAttempt(outcome, seconds),
    }),
    webhookOutcomes: new OutcomeRecorder(db.prisma, clock, logger),
    dispatcher: { wake: () => dispatcher?.wake() },
    limiters: {
      oauthToken: createRateLimiter({ name: 'oauth-token', points: 20, durationSeconds: 60, redis }),
      graphqlWsConnect: createRateLimiter({ name: 'graphql-ws-connect', points: config.subscriptions.connectsPerAddressMinute, durationSeconds: 60, redis }),
      publicAddress: createRateLimiter({ name: 'public-address', points: config.publicRequestsPerAddressMinute, durationSeconds: 60, redis }),
      api: new ChannelRateLimits(db.prisma, { env: config.env, ...config.rateLimits, redis }),
    },
  };
  dispatcher = new Dispatcher(deps, (wake) => new DeliveryWork(deps, deps.events, wake));
  // Gauges of state, read when /metrics is scraped (graphql-ws connections: app.ts, once it listens).
  metrics.watch({
    circuit: () => upstream.circuit,
    subscriptions: () => deps.events.live(),
    backlog: () => webhookBacklog(db.prisma, clock()),
  });
  return { deps, dispatcher, simulator };
}
