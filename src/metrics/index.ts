import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { DatabaseObserver, SqlStatement, TransactionOutcome } from '../db/observed.js';
import type { WebhookAttemptOutcome, WebhookBacklog } from '../services/webhooks/index.js';
import type { ProviderCallKind, ProviderCallOutcome, UpstreamObserver } from '../upstream/client.js';
import { counter, gauge, histogram } from './families.js';
import { OperationNames } from './operationNames.js';

export { ANONYMOUS, MAX_OPERATION_NAMES, OTHER, UNKNOWN, OperationNames } from './operationNames.js';

/**
 * The service's Prometheus metrics (prom-client), one Registry per service instance (tests build
 * many services in one process), served at GET /metrics (rest-adapters/metrics.ts). Who records
 * gets this object from deps (src/deps.ts): the front (HTTP requests), the provider client and the
 * database adapter (through their observer interfaces), the GraphQL plugin
 * (src/graphql/plugins/metrics.ts), the rate limits of each surface and the webhook sender. Gauges
 * of state (outbox, deliveries, circuit, subscriptions, connections) are read when scraped.
 * Every label value comes from a fixed set: route templates, never paths.
 */

/** Where a request was refused by a rate limit. */
export type RateLimitSurface = 'rest_v1' | 'rest_v2' | 'graphql' | 'graphql_ws' | 'oauth' | 'public';

/** How a webhook attempt ended (services/webhooks' WebhookSender tells). */
export type { WebhookAttemptOutcome };

/** What a GraphQL operation came to. */
export type GraphQLOutcome = 'ok' | 'parse_error' | 'validation_error' | 'client_error' | 'server_error' | 'rate_limited';

/** The webhook backlog as one query reads it at scrape time (services/webhooks' webhookBacklog). */
export type Backlog = WebhookBacklog;

/** What the scrape reads from the rest of the service; set once they exist (watch). */
export interface ScrapeSources {
  circuit: () => 'closed' | 'open' | 'half_open' | 'isolated';
  subscriptions: () => { graphql_ws: number; http: number };
  wsConnections: () => number;
  backlog: () => Promise<Backlog>;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const CIRCUIT_STATES = ['closed', 'open', 'half_open', 'isolated'] as const;

/** Node's default process metrics, made once per process (see defaults()). */
let processDefaults: Registry | undefined;

/**
 * prom-client's default metrics hold process-wide resources per call (a GC PerformanceObserver and
 * an event-loop delay monitor that are never stopped), so collecting them into each service's
 * registry would leak one set per service a process builds. They describe the process anyway:
 * made once, in a registry of their own that every service's scrape includes.
 */
function defaults(): Registry {
  if (!processDefaults) {
    processDefaults = new Registry();
    collectDefaultMetrics({ register: processDefaults });
  }
  return processDefaults;
}

export class Metrics implements UpstreamObserver, DatabaseObserver {
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;
  readonly operationNames: OperationNames;
  private readonly registry = new Registry();
  private readonly sources: Partial<ScrapeSources> = {};

  private readonly http = histogram(this.registry, 'channel_http_request_duration_seconds', 'HTTP requests by method, route template and status, from arrival to the end of the answer', ['method', 'route', 'status']);
  private readonly provider = histogram(this.registry, 'channel_provider_call_duration_seconds', 'Calls to the inventory provider by kind and outcome (retries included in one call)', ['kind', 'outcome']);
  private readonly dbQuery = histogram(this.registry, 'channel_db_query_duration_seconds', 'SQL statements sent to the database (Prisma queries and raw SQL), by statement kind', ['statement']);
  private readonly dbErrors = counter(this.registry, 'channel_db_query_errors_total', 'SQL statements that failed, by statement kind', ['statement']);
  private readonly dbTransaction = histogram(this.registry, 'channel_db_transaction_duration_seconds', 'Database transactions from start to commit or rollback', ['outcome']);
  private readonly gqlParse = histogram(this.registry, 'channel_graphql_parse_duration_seconds', 'GraphQL documents parsed (cache hits included)', []);
  private readonly gqlValidate = histogram(this.registry, 'channel_graphql_validate_duration_seconds', 'GraphQL documents validated (cache hits included)', []);
  private readonly gqlExecute = histogram(this.registry, 'channel_graphql_execute_duration_seconds', 'GraphQL executions (to the first payload of a stream) by operation name and type', ['operation', 'type']);
  private readonly gqlOperations = counter(this.registry, 'channel_graphql_operations_total', 'GraphQL operations by operation name, type and outcome', ['operation', 'type', 'outcome']);
  private readonly rateLimits = counter(this.registry, 'channel_rate_limit_refusals_total', 'Requests refused by a rate limit, by surface', ['surface']);
  private readonly webhookAttempts = counter(this.registry, 'channel_webhook_attempts_total', 'Webhook delivery attempts by outcome', ['outcome']);
  private readonly webhookDuration = histogram(this.registry, 'channel_webhook_attempt_duration_seconds', 'Webhook delivery attempts, from sending to the end of the answer', []);

  private readonly circuit = gauge(this.registry, 'channel_provider_circuit_state', 'The provider circuit breaker: 1 for its current state', ['state']);
  private readonly subscriptions = gauge(this.registry, 'channel_graphql_subscriptions', 'Live booking-event subscriptions on this instance, by transport (http: SSE or multipart)', ['transport']);
  private readonly wsConnections = gauge(this.registry, 'channel_graphql_ws_connections', 'Open graphql-ws connections on this instance');
  private readonly outboxPending = gauge(this.registry, 'channel_outbox_events_pending', 'Outbox events not yet published (database-wide)');
  private readonly outboxOldest = gauge(this.registry, 'channel_outbox_oldest_pending_age_seconds', 'Age of the oldest outbox event not yet published (0 when none)');
  private readonly deliveries = gauge(this.registry, 'channel_webhook_deliveries', 'Webhook deliveries waiting (pending) or held while their endpoint is disabled (database-wide)', ['status']);
  private readonly deliveryOldest = gauge(this.registry, 'channel_webhook_oldest_pending_delivery_age_seconds', 'Age of the oldest pending webhook delivery (0 when none)');
  private readonly endpointsDisabled = gauge(this.registry, 'channel_webhook_endpoints_disabled', 'Webhook endpoints disabled, by their partner or after a delivery failed its whole retry schedule (database-wide)');
  private readonly scrapeErrors = counter(this.registry, 'channel_metrics_scrape_errors_total', 'Scrapes whose database gauges could not be read', []);

  private readonly served: Registry;

  constructor(private readonly logger: Logger) {
    // The persisted operations' names are added by the GraphQL server (src/graphql/yoga.ts).
    this.operationNames = new OperationNames();
    this.served = Registry.merge([this.registry, defaults()]);
  }

  /** Tells the scrape where to read the gauges of state. */
  watch(sources: Partial<ScrapeSources>): void {
    Object.assign(this.sources, sources);
  }

  /** The text exposition of every family (the gauges of state read now). */
  async scrape(): Promise<string> {
    await this.readState();
    return this.served.metrics();
  }

  httpRequest(method: string, route: string | undefined, status: number, seconds: number): void {
    this.http.children.get(METHODS.has(method) ? method : 'OTHER', route ?? 'unmatched', status).observe(seconds);
  }

  /** UpstreamObserver: one logical provider call (its retries included). */
  providerCall(kind: ProviderCallKind, outcome: ProviderCallOutcome, seconds: number): void {
    this.provider.children.get(kind, outcome).observe(seconds);
  }

  /** DatabaseObserver: one SQL statement. */
  query(statement: SqlStatement, seconds: number, failed: boolean): void {
    this.dbQuery.children.get(statement).observe(seconds);
    if (failed) this.dbErrors.children.get(statement).inc();
  }

  /** DatabaseObserver: one transaction, from its start to its commit or rollback. */
  transaction(outcome: TransactionOutcome, seconds: number): void {
    this.dbTransaction.children.get(outcome).observe(seconds);
  }

  graphqlParsed(seconds: number): void {
    this.gqlParse.metric.observe(seconds);
  }

  graphqlValidated(seconds: number): void {
    this.gqlValidate.metric.observe(seconds);
  }

  /** `operation` is a label of operationNames (bounded); `type` query, mutation, subscription or unknown. */
  graphqlOperation(operation: string, type: string, outcome: GraphQLOutcome, executeSeconds?: number): void {
    this.gqlOperations.children.get(operation, type, outcome).inc();
    if (executeSeconds !== undefined) this.gqlExecute.children.get(operation, type).observe(executeSeconds);
  }

  rateLimited(surface: RateLimitSurface): void {
    this.rateLimits.children.get(surface).inc();
  }

  webhookAttempt(outcome: WebhookAttemptOutcome, seconds: number): void {
    this.webhookAttempts.children.get(outcome).inc();
    this.webhookDuration.metric.observe(seconds);
  }

  private async readState(): Promise<void> {
    const { circuit, subscriptions, wsConnections, backlog } = this.sources;
    if (circuit) {
      const state = circuit();
      for (const one of CIRCUIT_STATES) this.circuit.labels(one).set(one === state ? 1 : 0);
    }
    if (subscriptions) {
      const live = subscriptions();
      this.subscriptions.labels('graphql_ws').set(live.graphql_ws);
      this.subscriptions.labels('http').set(live.http);
    }
    this.wsConnections.set(wsConnections ? wsConnections() : 0);
    if (!backlog) return;
    try {
      const b = await backlog();
      this.outboxPending.set(b.outboxPending);
      this.outboxOldest.set(b.outboxOldestSeconds);
      this.deliveries.labels('pending').set(b.deliveriesPending);
      this.deliveries.labels('held').set(b.deliveriesHeld);
      this.deliveryOldest.set(b.deliveryOldestSeconds);
      this.endpointsDisabled.set(b.endpointsDisabled);
    } catch (error) {
      // The rest of the scrape is still worth having; stale figures are not.
      this.scrapeErrors.metric.inc();
      for (const g of [this.outboxPending, this.outboxOldest, this.deliveries, this.deliveryOldest, this.endpointsDisabled]) g.reset();
      this.logger.warn({ err: error }, 'metrics: the webhook backlog could not be read');
    }
  }
}
