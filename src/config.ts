import { z } from 'zod';
import { absolute, addressList, durationMs, flag, isOrigin, otelPairs } from './configValues.js';
import { ConfigError } from './services/kernel/index.js';

/** Every environment variable the service reads, parsed once, with its default. */

const optionalUrl = z.url().optional();

const otlpProtocol = z.enum(['http/protobuf', 'http/json', 'grpc']).refine((v) => v !== 'grpc', 'grpc is not supported: use http/protobuf or http/json (port 4318)');

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().default('0.0.0.0'),
  CHANNEL_ENV: z.enum(['sandbox', 'production']).default('sandbox'),
  DATABASE_URL: optionalUrl,
  /** PostgreSQL schema the service's tables live in (the tests give each run its own). */
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier')
    .default('public'),
  DATA_DIR: z.string().default('./data'),
  /**
   * Production on the embedded database (no DATABASE_URL) is refused at start unless an operator
   * sets this: one process only, no second instance, its backups the data directory's.
   */
  ALLOW_EMBEDDED_DATABASE_IN_PRODUCTION: flag.default(false),
  REDIS_URL: optionalUrl,
  /** A Redis command of a request (rate limits, credential changes, subscription places) that has no answer by then has failed. */
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(50).max(10_000).default(500),
  /**
   * The service's public origin (https://api.example.com), which the links it hands out start with
   * (images). Needed in production, where links never come from a request's Host; unset in the
   * sandbox: the scheme and Host of each request.
   */
  PUBLIC_BASE_URL: z
    .url({ protocol: /^https?$/ })
    .transform((v) => new URL(v).origin)
    .optional(),
  UPSTREAM_URL: optionalUrl,
  /** Deadlines of upstream calls: content and search are short, booking longer. */
  UPSTREAM_CONTENT_TIMEOUT_MS: z.coerce.number().int().positive().default(3_000),
  UPSTREAM_SEARCH_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  UPSTREAM_BOOKING_TIMEOUT_MS: z.coerce.number().int().positive().default(20_000),
  /** Consecutive failed upstream attempts (retries count) that open the circuit, and how long it stays open. */
  UPSTREAM_BREAKER_THRESHOLD: z.coerce.number().int().positive().default(5),
  UPSTREAM_BREAKER_COOLDOWN_MS: z.coerce.number().int().positive().default(5_000),
  UPSTREAM_CONNECTIONS: z.coerce.number().int().positive().default(64),
  /** How long a credential found valid is trusted without a database lookup (0: always look up). */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  /** A pending booking the provider has not confirmed this long after booking is cancelled (capped at check-in). */
  PENDING_DEADLINE_MINUTES: z.coerce.number().int().positive().max(7 * 24 * 60).default(24 * 60),
  /** How often bookings are compared with the provider and overdue pending ones cancelled; 0: never. */
  BOOKING_SYNC_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  BOOKING_RECOVERY_INTERVAL_MS: z.coerce.number().int().min(0).default(2_000),
  /** How often the outbox and due webhook deliveries are checked when no notification wakes the dispatcher; 0: no dispatcher in this instance. */
  EVENTS_POLL_INTERVAL_MS: z.coerce.number().int().min(0).default(1_000),
  /** A webhook attempt that has no complete answer by then has failed. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().max(60_000).default(10_000),
  /** Waits before each retry of a failed webhook delivery (e.g. 5s,5m,30m,2h); the default spans 27.5 hours. */
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default('5s,5m,30m,2h,5h,10h,10h')
    .transform((v, ctx) => {
      const steps = v.split(',').map((s) => durationMs(s.trim()));
      if (!steps.length || steps.some((s) => s === undefined)) {
        ctx.addIssue({ code: 'custom', message: 'a comma-separated list of durations such as 500ms, 5s, 5m, 2h' });
        return z.NEVER;
      }
      return steps as number[];
    }),
  /** Webhook attempts in flight at once per instance. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().positive().max(1_000).default(50),
  /** Webhook URLs may use plain http (default: in the sandbox only). */
  WEBHOOK_ALLOW_HTTP: flag.optional(),
  /**
   * Webhook URLs may point at loopback, private or other non-public addresses. Off by default in
   * the sandbox too: a hosted sandbox must not let partners probe the internal network (the
   * delivery log shows the answer). Set it for local receivers.
   */
  WEBHOOK_ALLOW_PRIVATE_URLS: flag.default(false),
  /**
   * Live booking-event subscriptions (graphql-ws and SSE) one channel may hold: on one instance, or
   * with REDIS_URL across every instance sharing that Redis (src/events/subscriptionSlots.ts).
   */
  SUBSCRIPTIONS_MAX_PER_CHANNEL: z.coerce.number().int().positive().default(10_000),
  /** Operations one graphql-ws connection may run at once. */
  SUBSCRIPTIONS_MAX_PER_CONNECTION: z.coerce.number().int().positive().max(1_000).default(20),
  /** graphql-ws connections one channel may hold open (across instances with REDIS_URL, as subscriptions). */
  SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CHANNEL: z.coerce.number().int().positive().default(1_000),
  /** graphql-ws connection attempts (upgrades of /graphql) one client address may make per minute. */
  SUBSCRIPTIONS_CONNECTS_PER_ADDRESS_MINUTE: z.coerce.number().int().positive().max(100_000).default(120),
  /**
   * GraphQL protection, on every operation over HTTP and graphql-ws: nesting depth, aliases,
   * lexical tokens, directives and estimated cost per operation.
   */
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().positive().max(1_000).default(10),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().positive().max(10_000).default(15),
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().positive().max(1_000_000).default(1_000),
  GRAPHQL_MAX_DIRECTIVES: z.coerce.number().int().positive().max(10_000).default(20),
  /** In rate-limit points (documentCost); the default is the starter tier's whole minute. */
  GRAPHQL_MAX_COST: z.coerce.number().int().positive().default(600),
  /** The values an operation's answer may hold at most (documentMeasure: fields and list items, pages assumed full). */
  GRAPHQL_MAX_ANSWER_VALUES: z.coerce.number().int().positive().max(10_000_000).default(250_000),
  /** Schema introspection and the GraphiQL page (default: on in the sandbox, off in production). */
  GRAPHQL_INTROSPECTION: flag.optional(),
  GRAPHQL_GRAPHIQL: flag.optional(),
  /** Hide "Did you mean ...?" in validation errors (default: in production only). */
  GRAPHQL_BLOCK_FIELD_SUGGESTIONS: flag.optional(),
  /** A JSON file of persisted operations: {"<sha256 hex>": "<document>"} or a list of documents. */
  GRAPHQL_PERSISTED_OPERATIONS_FILE: z.string().optional(),
  /** Run only the persisted operations (needs GRAPHQL_PERSISTED_OPERATIONS_FILE). */
  GRAPHQL_PERSISTED_ONLY: flag.default(false),
  /** graphql-jit for documents that run again and again (src/graphql/plugins/jit.ts). */
  GRAPHQL_JIT: flag.default(true),
  /** Runs of a document on Yoga's executor before graphql-jit compiles it (0: at its first run). */
  GRAPHQL_JIT_AFTER: z.coerce.number().int().min(0).max(1_000_000).default(1),
  /** Property content kept in memory: entries and time to live. */
  CONTENT_CACHE_SIZE: z.coerce.number().int().min(0).default(10_000),
  CONTENT_CACHE_TTL_MS: z.coerce.number().int().positive().default(300_000),
  /**
   * Image bytes (the public image route) kept in memory, least recently used first out, in bytes
   * (default 64 MiB; 0: every request not already in flight asks the provider).
   */
  IMAGE_CACHE_BYTES: z.coerce.number().int().min(0).default(64 * 1024 * 1024),
  /** How long the image route remembers a property or image the provider does not have (0: never). */
  IMAGE_NOT_FOUND_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  /** Requests without a credential one client address may make per minute (images, docs, GraphiQL, OAuth, GraphQL). */
  PUBLIC_REQUESTS_PER_ADDRESS_MINUTE: z.coerce.number().int().positive().max(1_000_000).default(600),
  /** Content-file downloads at once per channel and per instance; one whose reader takes nothing this long is ended. */
  DOWNLOADS_PER_CHANNEL: z.coerce.number().int().positive().max(1_000).default(2),
  DOWNLOADS_PER_INSTANCE: z.coerce.number().int().positive().max(10_000).default(8),
  DOWNLOAD_WRITE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /**
   * The provider's answers to multi-property searches, kept this long and shared by every request
   * asking the same of the provider (0: every search asks the provider); prices are re-checked with
   * the provider at the price check whatever a search showed.
   */
  SEARCH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(10_000),
  /** What those answers may hold in memory at most, in MiB (estimated from their results). */
  SEARCH_CACHE_MAX_MB: z.coerce.number().int().min(1).max(4_096).default(64),
  /** The bundled simulator (used when UPSTREAM_URL is unset, and by `npm run simulator`). */
  SIMULATOR_SEED: z.coerce.number().int().min(0).max(0xffff_ffff).default(42),
  SIMULATOR_SIZE: z.coerce.number().int().min(1).max(100_000).default(500),
  SIMULATOR_VOLATILITY: z.coerce.number().min(0).max(1).default(0),
  SIMULATOR_PORT: z.coerce.number().int().min(0).max(65535).default(4100),
  SIMULATOR_HOST: z.string().default('127.0.0.1'),
  /** Signs price-check and book tokens; generated once and kept in the database when unset. */
  TOKEN_SIGNING_SECRET: z.string().min(32, 'at least 32 characters').optional(),
  /** Addresses (or CIDR ranges) of reverse proxies whose X-Forwarded-* headers are believed. */
  TRUSTED_PROXIES: addressList(),
  /** Callers whose traceparent/tracestate is continued: client addresses or CIDR ranges, and/or `proxies`
   * (what a TRUSTED_PROXIES peer hands on). Anyone else's starts a new trace linked to theirs. */
  TRACE_CONTEXT_TRUSTED: addressList(['proxies']),
  ADMIN_TOKEN: z.string().min(24, 'at least 24 characters').optional(),
  ADMIN_ALLOW_REMOTE: flag.default(false),
  /** Where `npm run admin` finds the running service; defaults to loopback on PORT. */
  ADMIN_URL: optionalUrl,
  /**
   * GET /metrics (Prometheus) answers loopback callers only; with true, also callers elsewhere
   * that send the operator token (Authorization: Bearer <ADMIN_TOKEN>). Partner credentials are
   * always refused.
   */
  METRICS_ALLOW_REMOTE: flag.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * Rate limits of the API (v1, v2, GraphQL): a channel's `rate_limit` (for CHANNEL_ENV) is the
   * number of points it may spend per window. The specification's window is a minute; a shorter
   * one is for tests.
   */
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(3_600).default(60),
  /** How long a channel's limit is reused before it is read again (an operator's change takes this long). */
  RATE_LIMIT_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(5_000),
  /**
   * Plain HTTP is refused with 403 HTTPS_REQUIRED (default: in production). A request counts as
   * HTTPS on a TLS socket (TLS_CERT_FILE) or when a TRUSTED_PROXIES peer sends X-Forwarded-Proto: https.
   */
  REQUIRE_HTTPS: flag.optional(),
  /** PEM certificate chain and private key: the service serves HTTPS itself (both or neither). */
  TLS_CERT_FILE: z.string().optional(),
  TLS_KEY_FILE: z.string().optional(),
  /**
   * Browser origins allowed by CORS, comma-separated (https://app.example.com), or * for any
   * (default: * in the sandbox, none in production). Credentials travel in headers, never cookies.
   */
  CORS_ORIGINS: z
    .string()
    .transform((v, ctx) => {
      const origins = v.split(',').map((s) => s.trim()).filter(Boolean);
      for (const origin of origins) {
        if (origin !== '*' && !isOrigin(origin)) {
          ctx.addIssue({ code: 'custom', message: `"${origin}" is not an origin such as https://app.example.com, nor *` });
          return z.NEVER;
        }
      }
      return origins;
    })
    .optional(),
  /** A request whose answer is not ready by then gets 504 REQUEST_TIMEOUT (streams are not cut). */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().max(600_000).default(30_000),
  /** How long a client may take to send its request headers, and its whole request (then 408). */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().positive().max(600_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().max(600_000).default(30_000),
  /** How long an idle keep-alive connection stays open; keep it above a load balancer's idle timeout. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().positive().max(600_000).default(65_000),
  /** Largest accepted request body; larger bodies get 413. */
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(1024 * 1024),
  /** How long SIGTERM waits for in-flight requests before closing anyway. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * Voucher e-mails go out through this SMTP server (smtp://user:pass@host:587, smtps://... for
   * TLS from the start); unset: they are written as .eml files under DATA_DIR/outbox-mail.
   */
  SMTP_URL: z
    .url()
    .refine((v) => /^smtps?:$/.test(new URL(v).protocol), 'an smtp:// or smtps:// URL')
    .optional(),
  /** The From address of voucher e-mails (needed with SMTP_URL: a relay refuses the placeholder). */
  MAIL_FROM: z.email('an e-mail address').max(254).optional(),
  /** A TrueType/OpenType font for voucher PDFs, for names in scripts Helvetica lacks (Hangul, kana, ...). */
  VOUCHER_PDF_FONT: z.string().optional(),
  /** Voucher e-mails one channel may send, all its reservations together, per hour and per day. */
  VOUCHER_MAILS_PER_CHANNEL_HOUR: z.coerce.number().int().min(1).max(100_000).default(100),
  VOUCHER_MAILS_PER_CHANNEL_DAY: z.coerce.number().int().min(1).max(1_000_000).default(500),
  /**
   * OpenTelemetry tracing, by the standard OTEL_* variables (opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables).
   * Tracing is on when an exporter is configured: OTEL_TRACES_EXPORTER=otlp or console, or (with
   * OTEL_TRACES_EXPORTER unset) an OTLP endpoint; off otherwise, and always with OTEL_SDK_DISABLED=true.
   * Off costs nothing: no tracer, no context propagation. src/telemetry/tracing.ts builds it.
   */
  OTEL_SDK_DISABLED: flag.default(false),
  /** otlp (to OTEL_EXPORTER_OTLP_*; default endpoint http://localhost:4318), console (stdout), none. */
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'console', 'none']).optional(),
  /** The collector's base URL (http://collector:4318): traces go to <endpoint>/v1/traces. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  /** The full URL traces are POSTed to (wins over OTEL_EXPORTER_OTLP_ENDPOINT). */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl,
  /** Headers of every export, key=value pairs separated by commas, values URL-encoded (api-key=abc%20d). */
  OTEL_EXPORTER_OTLP_HEADERS: z.string().default('').transform((v, ctx) => otelPairs(v, ctx)),
  /** The same for trace exports only (a key given in both takes this value). */
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: z.string().default('').transform((v, ctx) => otelPairs(v, ctx)),
  /** http/protobuf (default, as the specification's) or http/json; gRPC is not supported. */
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.default('http/protobuf'),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
  /** service.name of the traces' resource. */
  OTEL_SERVICE_NAME: z.string().min(1).default('channel-service'),
  /** More resource attributes, key=value pairs separated by commas (deployment.environment.name=prod). */
  OTEL_RESOURCE_ATTRIBUTES: z.string().default('').transform((v, ctx) => otelPairs(v, ctx)),
  /**
   * Which traces are kept: always_on, always_off, traceidratio, parentbased_always_on (default: a
   * caller's sampled flag decides, else always), parentbased_always_off, parentbased_traceidratio.
   */
  OTEL_TRACES_SAMPLER: z
    .enum(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'])
    .default('parentbased_always_on'),
  /** The ratio of the traceidratio samplers, 0 to 1 (default 1). */
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
});

/** The configuration: the variables parsed, checked together, and shaped as the service reads them. */
const configSchema = envSchema.transform((e, ctx) => {
  // Rules across variables, once each variable is valid: the first one broken is reported.
  const refuse = (path: string, message: string) => {
    ctx.addIssue({ code: 'custom', path: [path], message });
    return z.NEVER;
  };
  if (e.GRAPHQL_PERSISTED_ONLY && !e.GRAPHQL_PERSISTED_OPERATIONS_FILE) {
    return refuse('GRAPHQL_PERSISTED_ONLY', 'needs GRAPHQL_PERSISTED_OPERATIONS_FILE (the operations to allow)');
  }
  if (Boolean(e.TLS_CERT_FILE) !== Boolean(e.TLS_KEY_FILE)) return refuse('TLS_CERT_FILE, TLS_KEY_FILE', 'set both (or neither)');
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) {
    return refuse('HTTP_HEADERS_TIMEOUT_MS', 'must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  if (e.CHANNEL_ENV === 'production' && !e.PUBLIC_BASE_URL) {
    return refuse('PUBLIC_BASE_URL', 'needed with CHANNEL_ENV=production (the public origin links start with, such as https://api.example.com): links are never made from a request\'s Host there');
  }
  if (e.SMTP_URL && !e.MAIL_FROM) return refuse('MAIL_FROM', 'needed with SMTP_URL (the sender address of voucher e-mails)');
  const tracesExporter = e.OTEL_SDK_DISABLED
    ? 'none'
    : (e.OTEL_TRACES_EXPORTER ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT || e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? 'otlp' : 'none'));
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    env: e.CHANNEL_ENV,
    databaseUrl: e.DATABASE_URL,
    databaseSchema: e.DATABASE_SCHEMA,
    dataDir: absolute(e.DATA_DIR),
    allowEmbeddedDatabaseInProduction: e.ALLOW_EMBEDDED_DATABASE_IN_PRODUCTION,
    redisUrl: e.REDIS_URL,
    redisCommandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
    publicBaseUrl: e.PUBLIC_BASE_URL,
    upstreamUrl: e.UPSTREAM_URL,
    upstream: {
      contentTimeoutMs: e.UPSTREAM_CONTENT_TIMEOUT_MS,
      searchTimeoutMs: e.UPSTREAM_SEARCH_TIMEOUT_MS,
      bookingTimeoutMs: e.UPSTREAM_BOOKING_TIMEOUT_MS,
      breakerThreshold: e.UPSTREAM_BREAKER_THRESHOLD,
      breakerCooldownMs: e.UPSTREAM_BREAKER_COOLDOWN_MS,
      connections: e.UPSTREAM_CONNECTIONS,
    },
    graphql: {
      maxDepth: e.GRAPHQL_MAX_DEPTH,
      maxAliases: e.GRAPHQL_MAX_ALIASES,
      maxTokens: e.GRAPHQL_MAX_TOKENS,
      maxDirectives: e.GRAPHQL_MAX_DIRECTIVES,
      maxCost: e.GRAPHQL_MAX_COST,
      maxAnswerValues: e.GRAPHQL_MAX_ANSWER_VALUES,
      introspection: e.GRAPHQL_INTROSPECTION ?? e.CHANNEL_ENV === 'sandbox',
      graphiql: e.GRAPHQL_GRAPHIQL ?? e.CHANNEL_ENV === 'sandbox',
      blockFieldSuggestions: e.GRAPHQL_BLOCK_FIELD_SUGGESTIONS ?? e.CHANNEL_ENV === 'production',
      persistedOperationsFile:
        e.GRAPHQL_PERSISTED_OPERATIONS_FILE === undefined ? undefined : absolute(e.GRAPHQL_PERSISTED_OPERATIONS_FILE),
      persistedOnly: e.GRAPHQL_PERSISTED_ONLY,
      jit: e.GRAPHQL_JIT,
      jitAfter: e.GRAPHQL_JIT_AFTER,
    },
    contentCache: { size: e.CONTENT_CACHE_SIZE, ttlMs: e.CONTENT_CACHE_TTL_MS },
    imageCache: { maxBytes: e.IMAGE_CACHE_BYTES, notFoundTtlMs: e.IMAGE_NOT_FOUND_TTL_MS },
    publicRequestsPerAddressMinute: e.PUBLIC_REQUESTS_PER_ADDRESS_MINUTE,
    downloads: { perChannel: e.DOWNLOADS_PER_CHANNEL, perInstance: e.DOWNLOADS_PER_INSTANCE, writeTimeoutMs: e.DOWNLOAD_WRITE_TIMEOUT_MS },
    searchCache: { ttlMs: e.SEARCH_CACHE_TTL_MS, maxBytes: e.SEARCH_CACHE_MAX_MB * 1024 * 1024 },
    authCacheTtlMs: e.AUTH_CACHE_TTL_MS,
    bookings: { pendingDeadlineMinutes: e.PENDING_DEADLINE_MINUTES, syncIntervalMs: e.BOOKING_SYNC_INTERVAL_MS, recoveryIntervalMs: e.BOOKING_RECOVERY_INTERVAL_MS },
    events: { pollIntervalMs: e.EVENTS_POLL_INTERVAL_MS },
    subscriptions: { maxPerChannel: e.SUBSCRIPTIONS_MAX_PER_CHANNEL, maxPerConnection: e.SUBSCRIPTIONS_MAX_PER_CONNECTION,
      maxConnectionsPerChannel: e.SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CHANNEL, connectsPerAddressMinute: e.SUBSCRIPTIONS_CONNECTS_PER_ADDRESS_MINUTE },
    webhooks: {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retrySchedule: Object.freeze(e.WEBHOOK_RETRY_SCHEDULE),
      concurrency: e.WEBHOOK_CONCURRENCY,
      allowHttp: e.WEBHOOK_ALLOW_HTTP ?? e.CHANNEL_ENV === 'sandbox',
      allowPrivateUrls: e.WEBHOOK_ALLOW_PRIVATE_URLS,
    },
    simulator: {
      seed: e.SIMULATOR_SEED,
      size: e.SIMULATOR_SIZE,
      volatility: e.SIMULATOR_VOLATILITY,
      port: e.SIMULATOR_PORT,
      host: e.SIMULATOR_HOST,
    },
    tokenSigningSecret: e.TOKEN_SIGNING_SECRET,
    trustedProxies: e.TRUSTED_PROXIES,
    traceContextTrusted: { proxies: e.TRACE_CONTEXT_TRUSTED.includes('proxies'), ranges: e.TRACE_CONTEXT_TRUSTED.filter((v) => v !== 'proxies') },
    adminToken: e.ADMIN_TOKEN,
    adminAllowRemote: e.ADMIN_ALLOW_REMOTE,
    metrics: { allowRemote: e.METRICS_ALLOW_REMOTE },
    // With TLS the service speaks only HTTPS: set ADMIN_URL to a name its certificate covers.
    adminUrl: e.ADMIN_URL ?? (e.TLS_CERT_FILE ? `https://localhost:${e.PORT}` : `http://127.0.0.1:${e.PORT}`),
    logLevel: e.LOG_LEVEL,
    rateLimits: { windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS, cacheTtlMs: e.RATE_LIMIT_CACHE_TTL_MS },
    transport: {
      requireHttps: e.REQUIRE_HTTPS ?? e.CHANNEL_ENV === 'production',
      tls: e.TLS_CERT_FILE && e.TLS_KEY_FILE ? { certFile: absolute(e.TLS_CERT_FILE), keyFile: absolute(e.TLS_KEY_FILE) } : undefined,
      corsOrigins: Object.freeze(e.CORS_ORIGINS ?? (e.CHANNEL_ENV === 'sandbox' ? ['*'] : [])),
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      receiveTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    // The file transport's placeholder sender: .invalid never resolves (RFC 2606).
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM ?? 'vouchers@channel.invalid' },
    // Null: tracing off (src/telemetry/tracing.ts is not even built).
    tracing:
      tracesExporter === 'none'
        ? null
        : {
            exporter: tracesExporter,
            otlp: {
              url: e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${(e.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`,
              headers: Object.freeze({ ...e.OTEL_EXPORTER_OTLP_HEADERS, ...e.OTEL_EXPORTER_OTLP_TRACES_HEADERS }),
              protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL,
            },
            resource: Object.freeze({ ...e.OTEL_RESOURCE_ATTRIBUTES, 'service.name': e.OTEL_SERVICE_NAME }),
            sampler: e.OTEL_TRACES_SAMPLER,
            samplerRatio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
          },
    vouchers: {
      pdfFont: e.VOUCHER_PDF_FONT === undefined ? undefined : absolute(e.VOUCHER_PDF_FONT),
      mailsPerChannelHour: e.VOUCHER_MAILS_PER_CHANNEL_HOUR,
      mailsPerChannelDay: e.VOUCHER_MAILS_PER_CHANNEL_DAY,
    },
  });
});

/** What loadConfig gives: the output of the one schema. */
export type Config = z.output<typeof configSchema>;

export { ConfigError };

/** Parses the environment (process.env by default). Throws ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable means "unset", as in most shells' `VAR= cmd`.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/**
 * The name of every environment variable the service reads: the keys of its schema.
 * test/contract/docs.test.ts checks that docs/operations.md documents each one.
 */
export const CONFIG_VARIABLES: readonly string[] = Object.freeze(Object.keys(envSchema.shape));
