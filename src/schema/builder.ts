import SchemaBuilder from '@pothos/core';
import ErrorsPlugin from '@pothos/plugin-errors';
import ScopeAuthPlugin, { AuthScopeFailureType, type AuthFailure } from '@pothos/plugin-scope-auth';
import ZodPlugin from '@pothos/plugin-zod';
import { GraphQLError } from 'graphql';
import type { ZodError } from 'zod';
import type { RequestContext } from '../context.js';
import {
  InsufficientScopeError,
  UnauthorizedError,
  ValidationError,
  amountToNumber,
} from '../services/kernel/index.js';
import { type Principal, missingScope as firstMissing, type ScopeRequirement } from '../services/access/index.js';

/**
 * Configuration only: plugins, scalars and scope definitions. Types and their root fields live
 * in one file each beside this one.
 *
 * Deny by default: Query, Mutation and Subscription require an authenticated caller at type level
 * and every root field names its scope (test/contract/schema.test.ts checks that none is missing):
 * `authScopes: { scope }` with one scope, or a list of scopes that are all needed (the REST route
 * of the same operation declares the same requirement; src/services/access/scopes.ts).
 */
export const builder = new SchemaBuilder<{
  Context: RequestContext;
  AuthScopes: { authenticated: boolean; scope: ScopeRequirement };
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    Money: { Input: bigint; Output: bigint };
  };
}>({
  // Errors last, so innermost: it sees only what a resolver throws. Authentication, scope and
  // input validation failures are raised outside it and always stay top-level GraphQL errors.
  plugins: [ScopeAuthPlugin, ZodPlugin, ErrorsPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    // Subscriptions are authorized once, when they start, not on every event.
    authorizeOnSubscribe: true,
    authScopes: (ctx) => ({
      authenticated: ctx.principal !== null,
      scope: (requirement) => ctx.principal !== null && firstMissing(ctx.principal.scopes, requirement) === undefined,
    }),
    unauthorizedError: (_parent, ctx, _info, result) => {
      if (!ctx.principal) return ctx.authError ?? new UnauthorizedError();
      const scope = missingScope(result.failure, ctx.principal);
      return scope ? new InsufficientScopeError(scope) : new UnauthorizedError(result.message);
    },
  },
  zod: {
    validationError: (error: ZodError) =>
      new ValidationError(
        error.issues.map((issue) => ({ field: issue.path.join('.') || '(input)', reason: issue.message })),
      ),
  },
});

/** The scope a refused field's requirement lacks first (the one INSUFFICIENT_SCOPE names). */
function missingScope(failure: AuthFailure, principal: Principal): string | undefined {
  switch (failure.kind) {
    case AuthScopeFailureType.AuthScope:
      return failure.scope === 'scope' ? firstMissing(principal.scopes, failure.parameter as ScopeRequirement) : undefined;
    case AuthScopeFailureType.AllAuthScopes:
    case AuthScopeFailureType.AnyAuthScopes:
      return failure.failures.map((f) => missingScope(f, principal)).find((s) => s !== undefined);
    default:
      return undefined;
  }
}

builder.scalarType('DateTime', {
  description: 'An instant, as an ISO 8601 string in UTC',
  serialize: (value) => value.toISOString(),
  parseValue: (value) => {
    const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return date;
  },
});

builder.scalarType('Money', {
  description: "An amount: a whole number of the currency's smallest unit (KRW has none below the won)",
  serialize: (value) => amountToNumber(value),
  parseValue: (value) => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new GraphQLError('Money must be a whole number');
    return BigInt(value);
  },
});

builder.queryType({ authScopes: { authenticated: true } });
builder.mutationType({ authScopes: { authenticated: true } });
builder.subscriptionType({ authScopes: { authenticated: true } });
