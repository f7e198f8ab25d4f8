/** The nine scopes of docs/spec/channel-api.md §5.3. Deny by default: a route or field names the scope it needs. */
export const SCOPES = [
  'properties:read',
  'roomtypes:read',
  'search:availability',
  'reservations:read',
  'reservations:write',
  'voucher:read',
  'channels:read',
  'channels:write',
  'tax-invoices:read',
] as const;

export type Scope = (typeof SCOPES)[number];

const known: ReadonlySet<string> = new Set(SCOPES);

export function isScope(value: string): value is Scope {
  return known.has(value);
}

/** Keeps the canonical order of SCOPES, drops duplicates. */
export function sortScopes(scopes: Iterable<Scope>): Scope[] {
  const set = new Set(scopes);
  return SCOPES.filter((s) => set.has(s));
}

/**
 * What an operation requires: one scope, or several that are all needed (a webhook's delivery log
 * carries booking records: channels:write and reservations:read). Declared once per operation, in
 * operations.ts, which its REST routes (scopedRoute) and GraphQL fields (operationScopes) name.
 */
export type ScopeRequirement = Scope | readonly Scope[];

/** The scopes of a requirement, in the order declared. */
export function requiredScopes(requirement: ScopeRequirement): readonly Scope[] {
  return typeof requirement === 'string' ? [requirement] : requirement;
}

/** The first scope of the requirement the credential lacks (the one a 403 names), or undefined. */
export function missingScope(held: ReadonlySet<Scope>, requirement: ScopeRequirement): Scope | undefined {
  return requiredScopes(requirement).find((scope) => !held.has(scope));
}
