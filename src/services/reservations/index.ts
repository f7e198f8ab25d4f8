/**
 * Reservations (docs/spec/channel-api.md §4.8): the public face of the module. Rules and the reservation model
 * (rules.ts), errors, what a reservation shows (view.ts), read and list (read.ts), create, update,
 * cancel, date changes (dateChanges.ts) and the sync pass that covers them (sync.ts).
 */
export { reservationRules } from './rules.js';
export type { Reservation } from './rules.js';
export { ModificationNotAllowedError } from './errors.js';
export { cancelledTotals, leadRoom, policyOf, reservationStatus, reservationView } from './view.js';
export type { PolicySummary, ReservationView } from './view.js';
export { getReservation, getReservations, listReservations, readReservation, reservationCursor, reservationWindow } from './read.js';
export type { ReservationFilterValues } from './read.js';
export { createReservation } from './create.js';
export { updateReservation } from './update.js';
export { cancelReservation, cancelReservationRoom } from './cancel.js';
export type { ReservationCancellation } from './cancel.js';
export { modifyBookingDates, modifyDatesRules } from './dateChanges.js';
export { runBookingSync } from './sync.js';
export type { DatesChange } from './dateChanges.js';
