import { z } from 'zod';
import type { AppDeps } from '../../context.js';
import { TRANSACTION_OPTIONS } from '../../db/client.js';
import { positiveAmount, storableText, type Amount } from '../kernel/index.js';

/**
 * The longest a creation or cancellation request can take: two provider calls (booking and its
 * compensating cancel) and two transactions, each waited for and run to its limit, plus a margin.
 * The sweeper leaves `processing` and `cancelling` rows alone until then, and an Idempotency-Key
 * is held as long.
 */
export function requestLeaseMs(deps: Pick<AppDeps, 'config'>): number {
  const transaction = TRANSACTION_OPTIONS.maxWait + TRANSACTION_OPTIONS.timeout;
  return 2 * deps.config.upstream.bookingTimeoutMs + 2 * transaction + 30_000;
}

/** The rule of row ids is the kernel's (src/services/kernel/ids.ts); the modules that take it from here keep doing so. */
export { isUuid } from '../kernel/index.js';

// ---------------------------------------------------------------------------------------------
// Input rules, written once; REST (snake_case) and GraphQL (camelCase) build their schemas from them.

export const bookingRules = {
  bookToken: z.string().min(1, 'must not be empty').max(4096),
  bookerName: storableText(z.string().trim().min(1, 'must not be empty').max(200)),
  email: z.email('an e-mail address').max(254),
  personName: storableText(z.string().trim().min(1, 'must not be empty').max(100)),
  phone: z
    .string()
    .trim()
    .regex(/^\+?[0-9][0-9 ()-]{3,29}$/, 'a phone number: digits, spaces, dashes or brackets, optionally after +'),
  country: z
    .string()
    .trim()
    .regex(/^[A-Za-z]{2}$/, 'an ISO 3166-1 alpha-2 country code')
    .transform((s) => s.toUpperCase()),
  guestsAdult: z.int().min(1).max(64),
  guestsChild: z.int().min(0).max(64),
  displayName: storableText(z.string().trim().min(1, 'must not be empty').max(200)),
  specialRequests: storableText(z.string().max(500, 'at most 500 characters')),
  /** Expected arrival, local time at the property. */
  arrivalTime: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a local time as HH:MM (24-hour)'),
  saleAmount: positiveAmount,
  channelBookingNumber: storableText(z.string().trim().min(1, 'must not be empty').max(100)),
  /** A date filter: ISO 8601, within what the database stores (year 0000 is not a date there). */
  date: z.iso.date('a date, YYYY-MM-DD').refine((d) => d >= '1900-01-01', 'a date from 1900-01-01 on'),
};

export interface GuestDetails {
  bookerName?: string | undefined;
  bookerEmail?: string | null | undefined;
  guestFirstName?: string | null | undefined;
  guestLastName?: string | null | undefined;
  guestPhone?: string | null | undefined;
  guestCountry?: string | null | undefined;
  specialRequests?: string | null | undefined;
  arrivalTime?: string | null | undefined;
}

export interface CreateBookingInput extends GuestDetails {
  bookToken: string;
  bookerName: string;
  guestsAdult?: number | undefined;
  guestsChild?: number | undefined;
  propertyName?: string | undefined;
  roomType?: string | undefined;
  ratePlan?: string | undefined;
  saleAmount?: Amount | undefined;
  channelBookingNumber?: string | undefined;
}
