import type { Scope, ScopeRequirement } from './scopes.js';

/**
 * Each operation of the API and the scopes it needs, declared once (docs/spec/channel-api.md
 * §5.3). A REST route names its operation in scopedRoute (rest-adapters/routing.ts) and a GraphQL
 * field in `authScopes: operationScopes(...)`, so the two surfaces of an operation cannot need
 * different scopes; test/contract/scopes.test.ts checks that every route and root field names one.
 * Deny by default: what names no operation is not reachable with any scope.
 *
 * A requirement is one scope, or several that are all needed (the 403 names the first missing):
 * a webhook's delivery log carries booking records, so it needs reservations:read too.
 */
const DELIVERY: readonly Scope[] = ['channels:write', 'reservations:read'];

export const OPERATIONS = {
  // The channel and its app
  'channel.read': 'channels:read',
  'channel.update': 'channels:write',
  'app.read': 'channels:read',
  'app.setIpAllowList': 'channels:write',
  // Content
  'properties.list': 'properties:read',
  'property.read': 'properties:read',
  'property.roomTypes': 'roomtypes:read',
  'property.ratePlans': 'roomtypes:read',
  'content.files': 'properties:read',
  // Search and price check
  'search.availability': 'search:availability',
  'search.propertyAvailability': 'search:availability',
  'search.rates': 'search:availability',
  'search.batchRates': 'search:availability',
  'search.priceCheck': 'search:availability',
  // Bookings (v1 records)
  'bookings.list': 'reservations:read',
  'booking.read': 'reservations:read',
  'booking.cancellationQuote': 'reservations:read',
  'booking.cancellationPolicy': 'reservations:read',
  'booking.create': 'reservations:write',
  'booking.update': 'reservations:write',
  'booking.cancel': 'reservations:write',
  'booking.voucher': 'voucher:read',
  'bookingEvents.subscribe': 'reservations:read',
  // Reservations
  'reservations.list': 'reservations:read',
  'reservation.read': 'reservations:read',
  'reservation.create': 'reservations:write',
  'reservation.update': 'reservations:write',
  'reservation.cancel': 'reservations:write',
  'reservation.modifyDates': 'reservations:write',
  // v2 itineraries (the link-chained flow)
  'itinerary.book': 'reservations:write',
  'itinerary.retrieve': 'reservations:read',
  'itinerary.cancel': 'reservations:write',
  // Vouchers
  'voucher.read': 'voucher:read',
  'voucher.send': 'voucher:read',
  // Webhooks
  'webhooks.list': 'channels:write',
  'webhook.read': 'channels:write',
  'webhook.create': 'channels:write',
  'webhook.update': 'channels:write',
  'webhook.delete': 'channels:write',
  'webhook.ping': 'channels:write',
  'webhook.deliveries': DELIVERY,
  'webhook.delivery': DELIVERY,
  'webhook.replay': DELIVERY,
  // Tax invoices (not implemented in v1)
  'taxInvoices.list': 'tax-invoices:read',
} as const satisfies Record<string, ScopeRequirement>;

export type Operation = keyof typeof OPERATIONS;

/** The scopes an operation needs; an unknown name needs what no credential holds (deny by default). */
export function scopesOf(operation: Operation): ScopeRequirement {
  const requirement: ScopeRequirement | undefined = OPERATIONS[operation];
  if (requirement === undefined) throw new Error(`No such operation: ${operation}`);
  return requirement;
}

const OPERATION = 'operation';

/**
 * `{ scope }` of an operation, for a GraphQL field's `authScopes`. It names the operation too, as
 * a property that is not enumerable (scope checks read only the enumerable scope names), so the
 * contract test can pair the field with the REST routes of the same operation (operationOf).
 */
export function operationScopes(operation: Operation): { scope: ScopeRequirement } {
  const authScopes = { scope: scopesOf(operation) };
  Object.defineProperty(authScopes, OPERATION, { value: operation, enumerable: false });
  return authScopes;
}

/** The operation named by an `authScopes` built with operationScopes, if any. */
export function operationOf(authScopes: unknown): Operation | undefined {
  if (!authScopes || typeof authScopes !== 'object') return undefined;
  const name = (authScopes as Record<string, unknown>)[OPERATION];
  return typeof name === 'string' && name in OPERATIONS ? (name as Operation) : undefined;
}
