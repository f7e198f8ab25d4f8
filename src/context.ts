import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import type { ChannelRateLimits, CredentialCache, CredentialHeaders, Principal, RateLimiter, TokenSigner } from './services/access/index.js';
import { createLoaders, type DownloadSlots, type ImageCache, type Loaders, type PropertyCatalog } from './services/catalog/index.js';
import type { Metrics } from './metrics/index.js';
import type { Tracing } from './telemetry/tracing.js';
import type { CallOptions, UpstreamClient } from './upstream/client.js';
import { SCENARIOS, type Scenario } from './upstream/protocol.js';
import { isLanguage, negotiateLanguage, type AppError, type Language } from './services/kernel/index.js';
import type { InFlight } from './services/bookings/index.js';
import type { AvailabilityCache } from './services/search/index.js';
import type { OutcomeRecorder, WebhookSender } from './services/webhooks/index.js';
import type { EventBus } from './events/bus.js';
import type { CredentialChanges } from './events/credentialChanges.js';
import type { SubscriptionSlot } from './events/subscriptionSlots.js';
import type { BookingEventMessage } from './services/webhooks/index.js';

const SCENARIO_SET: ReadonlySet<string> = new Set(SCENARIOS);

/** What the process holds for its whole life: configuration, connections, shared limiters. */
export interface AppDeps {
  readonly config: Config;
  /** This process's identity: the owner written on the bookings, cancellations and Idempotency-Keys it has in flight. */
  readonly instanceId: string;
  /** Which of those this instance's requests still hold (services/bookings/inFlight.ts). */
  readonly inFlight: InFlight;
  readonly db: Database;
  readonly redis: Redis | undefined;
  readonly logger: Logger;
  /** The Prometheus metrics of this instance (src/metrics), served at GET /metrics. */
  readonly metrics: Metrics;
  /** OpenTelemetry tracing (src/telemetry/tracing.ts); undefined when off (OTEL_* unset): check it, nothing more. */
  readonly tracing: Tracing | undefined;
  /** The inventory provider, and its content behind a shared cache. */
  readonly upstream: UpstreamClient;
  readonly catalog: PropertyCatalog;
  /** Image bytes for the public image route, kept up to IMAGE_CACHE_BYTES. */
  readonly images: ImageCache;
  /** The content files' places per channel and on this instance (DOWNLOADS_PER_CHANNEL, DOWNLOADS_PER_INSTANCE). */
  readonly downloads: DownloadSlots;
  /** The provider's answers to multi-property searches, kept a few seconds (SEARCH_CACHE_TTL_MS). */
  readonly searchCache: AvailabilityCache;
  readonly tokens: TokenSigner;
  /** Credentials recently found valid (null when AUTH_CACHE_TTL_MS is 0). */
  readonly credentials: CredentialCache | null;
  /** Announces a credential change to this instance's cache and, through Redis, to the others'. */
  readonly credentialChanges: CredentialChanges;
  /** The service's notion of now; tests move it to expire tokens. */
  readonly clock: () => Date;
  /** Live booking events (in-process, or across instances through Redis). */
  readonly events: EventBus;
  /** Signs and sends webhook attempts. */
  readonly webhookSender: WebhookSender;
  /** Records successful webhook attempts in batches, and endpoints' last success at most once a second. */
  readonly webhookOutcomes: OutcomeRecorder;
  /** Asks this instance's outbox dispatcher to look for work now (a replay, a re-enabled webhook). */
  readonly dispatcher: { wake(): void };
  readonly limiters: {
    /** POST /oauth/token and POST /oauth/revoke together: 20 requests per 60 s per client address (docs/spec/channel-api.md §8). */
    readonly oauthToken: RateLimiter;
    /** graphql-ws connection attempts (upgrades of /graphql): SUBSCRIPTIONS_CONNECTS_PER_ADDRESS_MINUTE per client address. */
    readonly graphqlWsConnect: RateLimiter;
    /** Every request without a credential (or with a refused one, on GraphQL): PUBLIC_REQUESTS_PER_ADDRESS_MINUTE per client address. */
    readonly publicAddress: RateLimiter;
    /** Every authenticated v1, v2 and GraphQL request: the channel's `rate_limit` per window. */
    readonly api: ChannelRateLimits;
  };
}

/** Per request, shared by the REST adapters and the GraphQL resolvers. */
export interface RequestContext {
  readonly requestId: string;
  readonly deps: AppDeps;
  readonly logger: Logger;
  /** The authenticated caller, or null when no credential was sent (or it was refused). */
  readonly principal: Principal | null;
  /** Why a presented credential was refused, so GraphQL can say so instead of "unauthenticated". */
  readonly authError: AppError | null;
  /** The credential as presented, so a long-lived subscription can check it is still good. */
  readonly credentials?: CredentialHeaders | undefined;
  /** The caller's address (behind TRUSTED_PROXIES); undefined for in-process calls without a socket. */
  readonly clientIp?: string | undefined;
  readonly signal: AbortSignal | undefined;
  /** A sandbox test scenario (X-Test-Scenario); always undefined in production. */
  readonly scenario: Scenario | undefined;
  /** Per-request batching of provider lookups. */
  readonly loaders: Loaders;
  /**
   * The language content is served in: negotiated from `Accept-Language` when first read (the
   * default when absent); GraphQL's `@inContext(language:)` sets it for its operation.
   */
  readonly language: Language;
  /**
   * The service's origin as the caller reaches it (`https://api.example.com`): PUBLIC_BASE_URL, else
   * the request's scheme (TLS, or a trusted proxy's X-Forwarded-Proto) and Host. Links the service
   * hands out (images) start with it.
   */
  readonly publicOrigin: string;
  /**
   * A graphql-ws subscription's part in the execution it shares with the others of the same
   * channel, scopes, document and variables (src/graphql/multiplex.ts); undefined when it runs on
   * its own (SSE, and every query and mutation).
   */
  readonly sharing?: SubscriptionSharing | undefined;
}

/** Why a shared subscription ends for one subscriber: its credential, its place, or the shared execution failing. */
export type SubscriptionEnd = 'revoked' | 'lost' | 'failed';

/** What a subscriber of a shared subscription brings to it. */
export interface SharedSubscriber {
  readonly channelId: string;
  /** The subscriber's place among the channel's (SUBSCRIPTIONS_MAX_PER_CHANNEL); losing it ends the subscriber. */
  readonly slot: SubscriptionSlot;
  /** Subscribers with equal keys hold the same credential from the same address: asked once per event. */
  readonly credentialKey: string;
  /** Whether the subscriber's credential still allows the subscription; asked before each event. */
  allowed(): Promise<boolean>;
}

/**
 * The two parts of a shared subscription. A `member` is one subscriber: once admitted, its
 * resolver joins the shared execution (which then holds its place) and returns an empty stream;
 * the events, and the error it may end with, are sent to it from the shared execution. The
 * `group` is the one execution per event: its resolver takes the channel's events from `source`,
 * and with them, why some of its subscribers end (their error is executed once for them all).
 */
export type SubscriptionSharing =
  | { readonly role: 'member'; join(subscriber: SharedSubscriber): void }
  | {
      readonly role: 'group';
      source(channelId: string, wanted: ReadonlySet<string> | null): AsyncIterableIterator<BookingEventMessage | SubscriptionEnd>;
    };

/** A part the context reads when something first asks for it (a logger child, an abort signal). */
export type Lazy<T> = T | (() => T);

/** What the HTTP layer (or a test, or graphql-ws) knows of a request. */
export type RequestContextParts = Omit<RequestContext, 'deps' | 'loaders' | 'scenario' | 'logger' | 'signal' | 'language' | 'publicOrigin'> & {
  logger: Lazy<Logger>;
  signal: Lazy<AbortSignal | undefined>;
  scenarioHeader?: string | undefined;
  /** The request's `Accept-Language`, negotiated when something first asks for the language. */
  languageHeader?: string | undefined;
  /** How the request reached the service, for publicOrigin when PUBLIC_BASE_URL is unset. */
  reachedAs?: { https: boolean; host: string | undefined } | undefined;
};

/**
 * Builds the per-request context; the one place that knows its parts. The logger child, the abort
 * signal and the provider loaders are made when something first reads them: a request answered
 * from caches never builds them.
 */
export function createRequestContext(deps: AppDeps, parts: RequestContextParts): RequestContext {
  return new HttpRequestContext(deps, parts);
}

class HttpRequestContext implements RequestContext {
  readonly requestId: string;
  readonly principal: Principal | null;
  readonly authError: AppError | null;
  readonly credentials?: CredentialHeaders | undefined;
  readonly clientIp?: string | undefined;
  readonly scenario: Scenario | undefined;
  readonly sharing?: SubscriptionSharing | undefined;
  #logger: Lazy<Logger>;
  #signal: Lazy<AbortSignal | undefined>;
  #loaders: Loaders | undefined;
  #language: Language | string | undefined;
  #reachedAs: RequestContextParts['reachedAs'];
  #origin: string | undefined;

  constructor(
    readonly deps: AppDeps,
    parts: RequestContextParts,
  ) {
    this.requestId = parts.requestId;
    this.principal = parts.principal;
    this.authError = parts.authError;
    this.credentials = parts.credentials;
    this.clientIp = parts.clientIp;
    this.sharing = parts.sharing;
    const header = parts.scenarioHeader;
    this.scenario = deps.config.env === 'sandbox' && SCENARIO_SET.has(header ?? '') ? (header as Scenario) : undefined;
    this.#logger = parts.logger;
    this.#signal = parts.signal;
    this.#language = parts.languageHeader;
    this.#reachedAs = parts.reachedAs;
  }

  get publicOrigin(): string {
    return (this.#origin ??= originOf(this.deps.config.publicBaseUrl, this.#reachedAs));
  }

  get language(): Language {
    const value = this.#language;
    if (value !== undefined && isLanguage(value)) return value;
    return (this.#language = negotiateLanguage(value));
  }

  get logger(): Logger {
    if (typeof this.#logger === 'function') this.#logger = this.#logger();
    return this.#logger;
  }

  get signal(): AbortSignal | undefined {
    if (typeof this.#signal === 'function') this.#signal = this.#signal();
    return this.#signal;
  }

  /** The loaders read this context's signal and scenario when they call the provider. */
  get loaders(): Loaders {
    return (this.#loaders ??= createLoaders(this.deps.catalog, new ContextCallOptions(this)));
  }
}

/**
 * Every object made per request (or per operation) reads its lazy parts through getters of its
 * class, never through accessors of its own (an object literal's `get`, Object.defineProperty's
 * `get`): V8 allocates each own accessor pair in the old generation, and a pair left there after
 * its request keeps the getter's closure alive, and through it the whole request (its
 * node:http request and response, headers, context), through every young collection until the
 * next full one. Made per request, that promotes every request and doubles a cached REST read's
 * CPU (bench/README.md, "Issue 20: where the cost came from"; test/platform/request-garbage.test.ts).
 */

/** The provider call options of a context, read when the call is made (the signal is made only then). */
class ContextCallOptions implements CallOptions {
  constructor(private readonly ctx: RequestContext) {}

  get signal(): AbortSignal | undefined {
    return this.ctx.signal;
  }

  get scenario(): Scenario | undefined {
    return this.ctx.scenario;
  }

  get log(): { readonly logger: Logger } {
    return this.ctx;
  }
}

/**
 * The GraphQL context of one operation: the server context Yoga (src/graphql/http.ts) and
 * graphql-ws (src/graphql/ws.ts) hand to envelop, which extends it in place (`request`,
 * `params`), read as its request context `ctx`. The lazy parts (logger, signal, loaders,
 * language, publicOrigin) stay lazy: a resolver that never needs them never builds them. GraphQL's
 * @inContext(language:) gives one operation a language of its own (serveIn).
 */
export class OperationContext implements RequestContext {
  // Not a #private field: were Yoga's batching turned on, each operation of a batch would get
  // Object.create(context), which must read and set it too.
  private operationLanguage: Language | undefined = undefined;

  constructor(readonly ctx: RequestContext) {}

  get requestId(): string {
    return this.ctx.requestId;
  }

  get deps(): AppDeps {
    return this.ctx.deps;
  }

  get principal(): Principal | null {
    return this.ctx.principal;
  }

  get authError(): AppError | null {
    return this.ctx.authError;
  }

  get credentials(): CredentialHeaders | undefined {
    return this.ctx.credentials;
  }

  get clientIp(): string | undefined {
    return this.ctx.clientIp;
  }

  get scenario(): Scenario | undefined {
    return this.ctx.scenario;
  }

  get sharing(): SubscriptionSharing | undefined {
    return this.ctx.sharing;
  }

  get logger(): Logger {
    return this.ctx.logger;
  }

  get signal(): AbortSignal | undefined {
    return this.ctx.signal;
  }

  get loaders(): Loaders {
    return this.ctx.loaders;
  }

  /** The operation's language (@inContext), else the request's (Accept-Language). */
  get language(): Language {
    return this.operationLanguage ?? this.ctx.language;
  }

  get publicOrigin(): string {
    return this.ctx.publicOrigin;
  }

  /** This operation's texts are in `language` (src/graphql/plugins/language.ts). */
  serveIn(language: Language): void {
    this.operationLanguage = language;
  }
}

/** A Host header as a link may carry it: a DNS name or address with an optional port; anything else is not trusted. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The public origin: the configured one, else the request's scheme and Host (localhost when it has none fit for a link). */
export function originOf(configured: string | undefined, reachedAs: RequestContextParts['reachedAs']): string {
  if (configured) return configured;
  const host = reachedAs?.host && HOST.test(reachedAs.host) ? reachedAs.host.toLowerCase() : 'localhost';
  return `${reachedAs?.https ? 'https' : 'http'}://${host}`;
}
