import type { BookingStatus } from '../../generated/prisma/client.js';
import { ConflictError, VISIBLE_BOOKING_STATUSES, type VisibleBookingStatus } from '../kernel/index.js';

/**
 * The booking state machine (docs/spec/channel-api.md §3.1, docs/spec/DECISIONS.md), in one place. Every status change of a
 * booking goes through `transition()`, which refuses any move not in the table and names the
 * event the move writes. `processing` and `void` are internal: a booking the provider has not
 * answered for yet, and an attempt that booked nothing; partners read them as `pending` and
 * `failed` (readStatus), never by their own names.
 */

export type { BookingStatus };

/** The statuses a partner can see, in the order of docs/spec/channel-api.md §2.2 (written once in services/kernel/enums.ts). */
export const VISIBLE_STATUSES = VISIBLE_BOOKING_STATUSES;
export type VisibleStatus = VisibleBookingStatus;

/** The statuses partners never see by their own names (readStatus maps them). */
const INTERNAL_STATUSES = ['processing', 'void'] as const;

// Every booking status is either visible or internal, and the database knows no other: a status
// added to one side only fails the typecheck here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const statusesWrittenOnce: Same<BookingStatus, VisibleStatus | (typeof INTERNAL_STATUSES)[number]> = true;
void statusesWrittenOnce;

export const BOOKING_EVENT_TYPES = [
  'reservation.created',
  'reservation.confirmed',
  'reservation.modified',
  'reservation.cancelled',
  'reservation.failed',
  'reservation.checked_in',
  'reservation.checked_out',
  'reservation.no_show',
] as const;
export type BookingEventType = (typeof BOOKING_EVENT_TYPES)[number];

/** Why a booking moves; one booking can reach the same status for different reasons. */
export type Trigger =
  | 'provider_confirmed' // the provider booked it at once (creation) or confirmed it later
  | 'provider_pending' // the provider took the booking but has not confirmed it
  | 'provider_refused' // creation: sold out, price moved, or the provider failed; nothing booked
  | 'provider_failed' // the provider reports a pending booking failed
  | 'cancel_requested' // the partner asked to cancel; the provider is being told
  | 'cancel_reverted' // the provider refused or failed to cancel
  | 'cancelled' // the provider cancelled it
  | 'payment_deadline' // a pending booking was not confirmed in time
  | 'checked_in'
  | 'checked_out'
  | 'no_show';

interface Rule {
  from: BookingStatus;
  trigger: Trigger;
  to: BookingStatus;
  events: BookingEventType[];
}

const RULES: Rule[] = [
  { from: 'processing', trigger: 'provider_confirmed', to: 'confirmed', events: ['reservation.created', 'reservation.confirmed'] },
  { from: 'processing', trigger: 'provider_pending', to: 'pending', events: ['reservation.created'] },
  { from: 'processing', trigger: 'provider_refused', to: 'void', events: [] },
  { from: 'pending', trigger: 'provider_confirmed', to: 'confirmed', events: ['reservation.confirmed'] },
  { from: 'pending', trigger: 'provider_failed', to: 'failed', events: ['reservation.failed'] },
  { from: 'pending', trigger: 'cancel_requested', to: 'cancelling', events: [] },
  { from: 'pending', trigger: 'cancelled', to: 'cancelled', events: ['reservation.cancelled'] },
  { from: 'pending', trigger: 'payment_deadline', to: 'cancelled', events: ['reservation.cancelled'] },
  { from: 'confirmed', trigger: 'checked_in', to: 'checked_in', events: ['reservation.checked_in'] },
  { from: 'confirmed', trigger: 'no_show', to: 'no_show', events: ['reservation.no_show'] },
  { from: 'confirmed', trigger: 'cancel_requested', to: 'cancelling', events: [] },
  { from: 'confirmed', trigger: 'cancelled', to: 'cancelled', events: ['reservation.cancelled'] },
  { from: 'cancelling', trigger: 'cancelled', to: 'cancelled', events: ['reservation.cancelled'] },
  // Back to where it was before the cancellation was asked for.
  { from: 'cancelling', trigger: 'cancel_reverted', to: 'pending', events: [] },
  { from: 'cancelling', trigger: 'cancel_reverted', to: 'confirmed', events: [] },
  { from: 'checked_in', trigger: 'checked_out', to: 'checked_out', events: ['reservation.checked_out'] },
];

export class InvalidTransitionError extends ConflictError {
  constructor(from: BookingStatus, to: BookingStatus | Trigger) {
    super('INVALID_TRANSITION', `A booking that is ${from} cannot become ${to}`, { from, to });
  }
}

/**
 * The status `trigger` moves a booking in `from` to, and the events it writes; throws if the
 * table has no such move. `to` picks among several rules of one trigger (a reverted cancellation).
 */
export function transition(
  from: BookingStatus,
  trigger: Trigger,
  to?: BookingStatus,
): { to: BookingStatus; events: BookingEventType[] } {
  const rule = RULES.find((r) => r.from === from && r.trigger === trigger && (to === undefined || r.to === to));
  if (!rule) throw new InvalidTransitionError(from, to ?? trigger);
  return { to: rule.to, events: rule.events };
}

export function canTransition(from: BookingStatus, trigger: Trigger): boolean {
  return RULES.some((r) => r.from === from && r.trigger === trigger);
}

/** The trigger a status the property reports stands for (operator CLI and provider sync). */
export const REPORTED: Partial<Record<BookingStatus, Trigger>> = {
  confirmed: 'provider_confirmed',
  failed: 'provider_failed',
  checked_in: 'checked_in',
  checked_out: 'checked_out',
  no_show: 'no_show',
  cancelled: 'cancelled',
};

/** What an operator may report with `booking:status` (a cancellation goes through the cancel flow). */
export const OPERATOR_REPORTABLE = ['confirmed', 'failed', 'checked_in', 'checked_out', 'no_show'] as const satisfies readonly BookingStatus[];

/**
 * The chain of triggers that takes a booking from `from` to the reported status `to`, following
 * the table (a booking the provider reports checked out while it is still confirmed here goes
 * through checked_in first, writing both events). Null when the table has no such path.
 */
export function pathTo(from: BookingStatus, to: BookingStatus): Trigger[] | null {
  if (from === to) return [];
  const seen = new Set<BookingStatus>([from]);
  const queue: { at: BookingStatus; path: Trigger[] }[] = [{ at: from, path: [] }];
  while (queue.length) {
    const { at, path } = queue.shift()!;
    for (const rule of RULES) {
      // Only moves a property can report; cancellation requests and creation are the service's own.
      if (rule.from !== at || !Object.values(REPORTED).includes(rule.trigger) || seen.has(rule.to)) continue;
      const next = [...path, rule.trigger];
      if (rule.to === to) return next;
      seen.add(rule.to);
      queue.push({ at: rule.to, path: next });
    }
  }
  return null;
}

export function isVisible(status: BookingStatus): status is VisibleStatus {
  return (VISIBLE_STATUSES as readonly string[]).includes(status);
}

/**
 * The status a partner reads (docs/decisions.md, "Reading a booking whose outcome is unknown"): its
 * own, except that `processing` (the provider's answer is not in yet) reads `pending`, and `void`
 * (the creation booked nothing) reads `failed`. So a booking that a BOOK_TOKEN_USED names is always
 * there to read.
 */
export function readStatus(status: BookingStatus): VisibleStatus {
  if (isVisible(status)) return status;
  return status === 'processing' ? 'pending' : 'failed';
}

/**
 * The statuses a list shows for its `status` filter: the visible ones, and `processing` as
 * `pending`. Void attempts are not listed: they booked nothing (read by id, they are `failed`).
 */
export function listedStatuses(filter?: VisibleStatus): BookingStatus[] {
  if (filter === undefined) return [...VISIBLE_STATUSES, 'processing'];
  return filter === 'pending' ? ['pending', 'processing'] : [filter];
}
