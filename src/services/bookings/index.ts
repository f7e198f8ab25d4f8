/**
 * Bookings (docs/spec/channel-api.md §3.1, §4.5): the public face of the module. Rules and errors, the booking record,
 * the state machine, the ledger, create (create.ts), read and list (list.ts), modify (update.ts),
 * cancel (cancel.ts), the sweeper (sync.ts) and Idempotency-Keys (idempotency.ts). Files are listed
 * in dependency order: the sweeper, which reaches into reservations, comes last.
 */
export { bookingRules, isUuid, requestLeaseMs } from './rules.js';
export type { GuestDetails } from './rules.js';
export {
  AlreadyCancelledError,
  BookTokenError,
  NotCancellableError,
  NotModifiableError,
  PriceChangedError,
  SoldOutError,
} from './errors.js';
export { asRead, dateOnly, dateValue, fromBookingRecord, toBookingRecord } from './record.js';
export type { Booking, BookingRecord, BookingView } from './record.js';
export { BOOKING_EVENT_TYPES, OPERATOR_REPORTABLE, VISIBLE_STATUSES, isVisible, listedStatuses, readStatus } from './states.js';
export type { BookingEventType, BookingStatus, VisibleStatus } from './states.js';
export { InsufficientBalanceError, movesBookingMoney, post, postBookingMoney } from './ledger.js';
export { recordEvents, transact } from './transitions.js';
export { claim, fingerprintOf, purgeExpired, settle } from './idempotency.js';
export { InFlight, keyInFlight } from './inFlight.js';
export { bookingCursor, bookingEvents, bookingWindow, getBooking, getBookings, listBookings, readBooking } from './list.js';
export type { BookingEventEntry, BookingFilterValues, BookingPage, FilterNames } from './list.js';
export { bookOffers, createBooking, verifyBookToken } from './create.js';
export type { OfferToBook, PartyNames, RoomToBook } from './create.js';
export { changedGuestFields, refuseModify, updateBooking } from './update.js';
export { applyReported, cancelBooking, cancellationQuote, chargesOf, quoteOrNull, refuseCancel } from './cancel.js';
export type { CancellationQuote } from './cancel.js';
export { newSyncReport, recoverInFlight, reportStatus, settleLeftoversAndLive, settleOverdueAndStuck } from './sync.js';
export type { SyncReport } from './sync.js';
