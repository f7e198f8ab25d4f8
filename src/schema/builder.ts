import SchemaBuilder from '@pothos/core';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ErrorsPlugin from '@pothos/plugin-errors';
import RelayPlugin from '@pothos/plugin-relay';
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
 *
 * The graph (docs/decisions.md, "GraphQL: the graph"): objects a partner refetches implement
 * Relay's `Node` (src/schema/node.ts; the `node` and `nodes` root fields are defined there, with
 * each type's read scope), lists are cursor connections whose edges and nodes are never null, and
 * edges that reach the database or the provider load through DataLoader (plugin-dataloader, or
 * the catalog's own loader for properties).
 */
export const builder = new SchemaBuilder<{
  Context: RequestContext;
  AuthScopes: { authenticated: boolean; scope: ScopeRequirement };
  DefaultFieldNullability: false;
  DefaultEdgesNullability: { list: false; items: false };
  DefaultNodeNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    Date: { Input: string; Output: string };
    Money: { Input: bigint; Output: bigint };
  };
}>({
  // Errors last, so innermost: it sees only what a resolver throws. Authentication, scope and
  // input validation failures are raised outside it and always stay top-level GraphQL errors.
  plugins: [ScopeAuthPlugin, ZodPlugin, RelayPlugin, DataloaderPlugin, ErrorsPlugin],
  defaultFieldNullability: false,
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // Query.node and Query.nodes are src/schema/node.ts's: they answer null for a type the
    // credential may not read, which the plugin's own fields cannot know.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    nodeTypeOptions: {
      description: 'An object with a global id: refetch it with Query.node(id:) (Relay global object identification)',
    },
    idFieldOptions: { description: 'Opaque global id: give it to Query.node; the REST identifier has a field of its own' },
    edgesFieldOptions: { nullable: { list: false, items: false } },
    nodeFieldOptions: { nullable: false },
    firstArgOptions: { description: 'Items after `after`: 0 to 100, default 20' },
    afterArgOptions: { description: 'The endCursor (or an edge cursor) of the page before' },
    lastArgOptions: { description: 'Items before `before`: 0 to 100' },
    beforeArgOptions: { description: 'The startCursor (or an edge cursor) of the page after' },
    pageInfoTypeOptions: { description: 'Where a page of a connection sits: pass endCursor as `after` for the next page' },
  },
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
  description: 'An instant, as an ISO 8601 (RFC 3339) string in UTC, with milliseconds: 2026-11-27T05:44:06.000Z',
  specifiedByURL: 'https://scalars.graphql.org/andimarek/date-time',
  serialize: (value) => value.toISOString(),
  parseValue: (value) => {
    const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return date;
  },
});

/** A calendar day as YYYY-MM-DD: a real date (2026-02-30 is refused), kept as the text it is. */
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

function isCalendarDay(value: string): boolean {
  const match = DAY.exec(value);
  if (!match) return false;
  const [, year, month, day] = match.map(Number) as [number, number, number, number];
  // setUTCFullYear takes the year as it is (Date.UTC reads 0 to 99 as 1900 to 1999).
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

builder.scalarType('Date', {
  description: 'A calendar day, YYYY-MM-DD (RFC 3339 full-date), as at the property: check-in, check-out, a night',
  specifiedByURL: 'https://scalars.graphql.org/andimarek/local-date',
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value !== 'string' || !isCalendarDay(value)) throw new GraphQLError('Date must be a calendar day as YYYY-MM-DD');
    return value;
  },
});

builder.scalarType('Money', {
  description:
    "An amount: a whole number of the currency's smallest unit (KRW has none below the won), as a JSON number " +
    '(at most 2^53 - 1). The currency is the one named beside it',
  specifiedByURL: 'https://www.iso.org/iso-4217-currency-codes.html',
  serialize: (value) => amountToNumber(value),
  parseValue: (value) => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new GraphQLError('Money must be a whole number');
    return BigInt(value);
  },
});

builder.queryType({ authScopes: { authenticated: true } });
builder.mutationType({ authScopes: { authenticated: true } });
builder.subscriptionType({ authScopes: { authenticated: true } });
