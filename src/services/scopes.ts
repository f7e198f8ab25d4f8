/** The nine scopes of spec §5.3. Deny by default: a route or field names the scope it needs. */
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
