import { createRoute, OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { missingScope, requiredScopes, type ScopeRequirement } from '../src/services/access/index.js';
import { InsufficientScopeError, UnauthorizedError } from '../src/services/kernel/index.js';
import { validationErrorFrom } from './envelope.js';
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

/**
 * A documented route that needs `scope` (one scope, or several that are all needed): declares the
 * security requirement in the OpenAPI document (`OAuth2` lists every scope; `x-required-scopes`
 * says the same for readers of the API key scheme, which has no scopes) and enforces it with
 * requireScope, so the document and the check cannot disagree.
 */
export function scopedRoute<const R extends Omit<RouteConfig, 'security' | 'middleware'>>(
  scope: ScopeRequirement,
  route: R,
  /** Middleware that runs after the scope check (Idempotency-Key). */
  after: MiddlewareHandler<HttpEnv>[] = [],
) {
  const scopes = [...requiredScopes(scope)];
  const scoped = {
    ...route,
    security: [{ ApiKeyAuth: [] }, { OAuth2: scopes }],
    middleware: [requireScope(scope), ...after],
    'x-required-scopes': scopes,
  };
  return createRoute(scoped as unknown as R & Pick<RouteConfig, 'security'> & { middleware: MiddlewareHandler<HttpEnv>[] });
}
