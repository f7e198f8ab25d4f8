import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import type { Principal } from './services/auth.js';
import type { AppError } from './services/errors.js';
import type { RateLimiter } from './services/rateLimits.js';

/** What the process holds for its whole life: configuration, connections, shared limiters. */
export interface AppDeps {
  readonly config: Config;
  readonly db: Database;
  readonly redis: Redis | undefined;
  readonly logger: Logger;
  readonly limiters: {
    /** POST /oauth/token: 20 requests per 60 s per client address (spec §8). */
    readonly oauthToken: RateLimiter;
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
  readonly signal: AbortSignal | undefined;
}

/** Narrows a context whose route or field already required authentication. */
export function principalOf(ctx: RequestContext): Principal {
  if (!ctx.principal) throw new Error('principalOf called on an unauthenticated context');
  return ctx.principal;
}
