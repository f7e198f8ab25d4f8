import { createRoute, OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { missingScope, requiredScopes, scopesOf, type Operation, type ScopeRequirement } from '../src/services/access/index.js';
import { InsufficientScopeError, RateLimitError, UnauthorizedError } from '../src/services/kernel/index.js';
import { errorResponses, v2ErrorResponses, validationErrorFrom } from './envelope.js';
import type { HttpEnv } from './env.js';

/**
 * The scope check of a REST route: the same rule scope-auth applies to GraphQL fields. Every scope
 * of the requirement is needed; the 403 names the first one the credential lacks.
 */
export function requireScope(requirement: ScopeRequirement): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const { principal } = c.get('ctx');
    if (!principal) throw new UnauthorizedError();
    const missing = missingScope(principal.scopes, requirement);
    if (missing) throw new InsufficientScopeError(missing);
    await next();
  };
}

/** A router whose request validation failures become 400 VALIDATION_ERROR in the envelope. */
export function router(): OpenAPIHono<HttpEnv> {
  return new OpenAPIHono<HttpEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationErrorFrom(result.error, result.target);
    },
  });
}

/** The error responses every scoped route answers, whatever else it declares (docs/spec/channel-api.md §2.1, §5). */
export const STANDARD_ERRORS = [UnauthorizedError, InsufficientScopeError, RateLimitError] as const;

type Route = Omit<RouteConfig, 'security' | 'middleware'>;

/** A scoped route of a REST version: its operation (services/access/operations.ts), method and path. */
export interface RouteOperation {
  version: 'v1' | 'v2';
  operation: Operation;
  method: string;
  path: string;
}

const routeOperations: RouteOperation[] = [];

/** Every route made by scopedRoute or v2ScopedRoute, with the operation it names (for the contract test). */
export function scopedRouteOperations(): readonly RouteOperation[] {
  return routeOperations;
}

/**
 * A documented route of `operation`, which needs the operation's scope (one scope, or several that
 * are all needed; declared once in services/access/operations.ts, where the GraphQL field of the
 * same operation takes it too): declares the security requirement in the OpenAPI document
 * (`OAuth2` lists every scope; `x-required-scopes` says the same for readers of the API key
 * scheme, which has no scopes) and enforces it with requireScope, so the document and the check
 * cannot disagree. It adds the responses every scoped route gives (401, 403 and 429,
 * STANDARD_ERRORS) in v1's words; a route may still say more about one of them by
 * declaring it.
 */
export function scopedRoute<const R extends Route>(
  operation: Operation,
  route: R,
  /** Middleware that runs after the scope check (Idempotency-Key). */
  after: MiddlewareHandler<HttpEnv>[] = [],
) {
  return documentedRoute('v1', operation, route, after);
}

/** The same for a v2 route: the standard responses in v2's words (envelope.ts v2ErrorDescriptions). */
export function v2ScopedRoute<const R extends Route>(operation: Operation, route: R, after: MiddlewareHandler<HttpEnv>[] = []) {
  return documentedRoute('v2', operation, route, after);
}

function documentedRoute<const R extends Route>(
  version: 'v1' | 'v2',
  operation: Operation,
  route: R,
  after: MiddlewareHandler<HttpEnv>[],
) {
  const scope = scopesOf(operation);
  const scopes = [...requiredScopes(scope)];
  routeOperations.push({ version, operation, method: route.method, path: route.path });
  const standard = (version === 'v1' ? errorResponses : v2ErrorResponses)(...STANDARD_ERRORS);
  const scoped = {
    ...route,
    responses: { ...standard, ...route.responses },
    security: [{ ApiKeyAuth: [] }, { OAuth2: scopes }],
    middleware: [requireScope(scope), ...after],
    'x-required-scopes': scopes,
  };
  return createRoute(scoped as unknown as R & Pick<RouteConfig, 'security'> & { middleware: MiddlewareHandler<HttpEnv>[] });
}
