import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createService, type ChannelService } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { DepsOptions } from '../../src/deps.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { createChannel, type IssuedCredentials, type NewChannel } from '../../src/services/channels/index.js';

/**
 * A service for one test file: embedded PGlite in a temporary directory, or, when DATABASE_URL is
 * set, PostgreSQL in a schema of its own (dropped afterwards); Redis when REDIS_URL is set.
 */
export interface TestService {
  service: ChannelService;
  config: Config;
  /** Calls the service in-process, as from `ip` (a loopback address of this test file by default). */
  request(path: string, init?: RequestInit & { ip?: string }): Promise<Response>;
  graphql(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<GraphQLResult>;
  /**
   * A channel with generous rate limits (tests make many requests per channel), unless the test
   * gives `rateLimit`: its own values, or 'default' for the database defaults (60 and 600).
   */
  channel(input?: TestChannelInput): Promise<IssuedCredentials>;
  close(): Promise<void>;
}

export interface RateLimitValues {
  sandbox: number;
  production: number;
}

/** Requests per window of a test channel that does not ask for other limits. */
export const TEST_RATE_LIMIT: RateLimitValues = { sandbox: 1_000_000, production: 1_000_000 };

export type TestChannelInput = Partial<NewChannel> & { rateLimit?: Partial<RateLimitValues> | 'default' };

/**
 * createChannel for tests: generous rate limits unless `rateLimit` gives others ('default': the
 * database defaults). For tests that make channels without a TestService.
 */
export async function createTestChannel(prisma: PrismaClient, { rateLimit = {}, ...input }: TestChannelInput = {}): Promise<IssuedCredentials> {
  const credentials = await createChannel(prisma, { name: 'Test Channel', ...input });
  if (rateLimit !== 'default') {
    const { sandbox, production } = { ...TEST_RATE_LIMIT, ...rateLimit };
    await prisma.channel.update({
      where: { id: credentials.user_id },
      data: { rateLimitSandbox: sandbox, rateLimitProduction: production },
    });
  }
  return credentials;
}

export interface GraphQLResult {
  status: number;
  data?: Record<string, unknown> | null;
  errors?: { message: string; path?: string[]; extensions?: { code?: string; details?: Record<string, unknown> } }[];
}

/** The origin of in-process requests (`request` below), and production's PUBLIC_BASE_URL in tests. */
export const TEST_ORIGIN = 'http://channel.test';

export function testEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'channel-test-'));
  // No background booking sync or recovery: tests run them when they mean to (runBookingSync, recoverInFlight).
  // Webhook receivers of tests listen on loopback; the tests of the address rule turn this off.
  // Tests speak plain HTTP in production mode too; test/platform/transport.test.ts tests REQUIRE_HTTPS.
  const env: Record<string, string> = {
    REQUIRE_HTTPS: 'false',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    PORT: '0',
    BOOKING_SYNC_INTERVAL_MS: '0',
    BOOKING_RECOVERY_INTERVAL_MS: '0',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    // Every test file connects its graphql-ws clients from loopback (and files share Redis): the
    // attempts per address are generous, as test channels' rate limits are (test/graphql/ws-limits.test.ts
    // sets its own); so are requests without a credential (test/platform/public-limits.test.ts).
    SUBSCRIPTIONS_CONNECTS_PER_ADDRESS_MINUTE: '100000',
    PUBLIC_REQUESTS_PER_ADDRESS_MINUTE: '1000000',
  };
  if (process.env.DATABASE_URL) {
    env.DATABASE_URL = process.env.DATABASE_URL;
    env.DATABASE_SCHEMA = `t_${randomBytes(6).toString('hex')}`;
  } else {
    // Production refuses the embedded database unless an operator allows it (docs/operations.md):
    // the tests of production's rules run on PostgreSQL when DATABASE_URL is set, else so.
    env.ALLOW_EMBEDDED_DATABASE_IN_PRODUCTION = 'true';
  }
  if (process.env.REDIS_URL) env.REDIS_URL = process.env.REDIS_URL;
  // Production needs its public origin: the one in-process requests reach (request(), below).
  if (overrides.CHANNEL_ENV === 'production') env.PUBLIC_BASE_URL = TEST_ORIGIN;
  // Any suite can run with graphql-jit from a document's first run (GRAPHQL_JIT_AFTER=0) or without it.
  for (const name of ['GRAPHQL_JIT', 'GRAPHQL_JIT_AFTER']) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  return { ...env, ...overrides };
}

/** Removes what testEnv made: the data directory and the PostgreSQL schema. */
export async function cleanupEnv(env: Record<string, string>): Promise<void> {
  rmSync(env.DATA_DIR!, { recursive: true, force: true });
  if (env.DATABASE_URL && env.DATABASE_SCHEMA && env.DATABASE_SCHEMA !== 'public') {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${env.DATABASE_SCHEMA}" CASCADE`);
    await client.end();
  }
}

export async function startTestService(
  overrides: Record<string, string> = {},
  options: DepsOptions = {},
): Promise<TestService> {
  const env = testEnv(overrides);
  const t = await startTestServiceOn(env, options);
  return {
    ...t,
    async close() {
      await t.close();
      await cleanupEnv(env);
    },
  };
}

/**
 * A service on the database of `env` (a testEnv), for tests that start several instances, or
 * the same one again, on one database; close() leaves the database (cleanupEnv removes it).
 */
export async function startTestServiceOn(env: Record<string, string>, options: DepsOptions = {}): Promise<TestService> {
  const config = loadConfig(env);
  const service = await createService(config, options);
  // A loopback address of its own, so per-address limits of files sharing Redis do not collide.
  const ownIp = `127.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(1, 255)}`;

  const request: TestService['request'] = (path, init = {}) => {
    const { ip = ownIp, ...rest } = init;
    return service.fetch(new Request(`${TEST_ORIGIN}${path}`, rest), { incoming: { socket: { remoteAddress: ip } } });
  };

  return {
    service,
    config,
    request,
    async graphql(query, variables, headers = {}) {
      const res = await request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return { status: res.status, ...((await res.json()) as object) };
    },
    channel: (input) => createTestChannel(service.deps.db.prisma, input),
    close: () => service.close(),
  };
}

/** A client address no other test (or earlier run sharing Redis) has used. */
export function uniqueIp(): string {
  const hex = randomBytes(8).toString('hex').match(/.{4}/g)!;
  return `fd00::${hex.join(':')}`;
}

export function apiKey(credentials: IssuedCredentials): Record<string, string> {
  return { 'x-api-key': credentials.api_key };
}

/**
 * An access token of `who` from the token endpoint (client credentials): with `scopes`, only
 * those (else every scope of the app); as from `ip` when given.
 */
export async function accessToken(t: TestService, who: { client_id: string; client_secret: string }, options: { scopes?: readonly string[]; ip?: string } = {}): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: who.client_id, client_secret: who.client_secret });
  if (options.scopes) form.set('scope', options.scopes.join(' '));
  const res = await t.request('/channel/v1/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
    ...(options.ip === undefined ? {} : { ip: options.ip }),
  });
  if (res.status !== 200) throw new Error(`the token endpoint answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** The Authorization header of an access token of `who` carrying only `scopes`. */
export async function bearerWith(t: TestService, who: { client_id: string; client_secret: string }, scopes: readonly string[]): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await accessToken(t, who, { scopes })}` };
}

export function json(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } };
}
