import {
  isUniqueViolation,
  principalOf,
  ConflictError,
  NotFoundError,
  UnprocessableError,
  UpstreamError,
  ValidationError,
  type FieldIssue,
  convertFromKrw,
  positiveAmount,
  type Amount,
  storableText,
} from '../kernel/index.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AppDeps, RequestContext } from '../../context.js';
import { TRANSACTION_OPTIONS } from '../../db/client.js';
import { Prisma, type Booking } from '../../generated/prisma/client.js';
import type { RoomOccupancy, Scenario, UpstreamBooking } from '../../upstream/protocol.js';
import { canTransition, transition, isVisible, VISIBLE_STATUSES, type BookingEventType, type BookingStatus, type Trigger, type VisibleStatus } from './states.js';
import { cancellationCharges, checkinInstant, freeCancellationBefore, type CancellationCharges } from '../search/cancellation.js';
import { movesBookingMoney, postBookingMoney } from './ledger.js';
import type { CancellationPolicyType } from '../catalog/properties.js';
import { pageOf, partySize, type Page } from '../search/search.js';
import { offerClaims, TokenError, type OfferClaims } from '../access/index.js';

/**
 * Bookings (spec §3.1, §4.5): create from a book_token, read, modify, preview and cancel. REST v1,
 * v2 and GraphQL all come here. Money moves only through the ledger, statuses only through the
 * state machine (bookingStates.ts), and every change writes its events in the same transaction.
 *
 * Creating a booking takes three steps, so that the provider failing leaves nothing behind and a
 * booking the provider made is never lost (docs/decisions.md, "Booking creation"):
 *   1. one transaction: the row (status `processing`, the token's jti unique, so a token books
 *      once) and, in production, the charge;
 *   2. the provider booking, idempotent on the booking id;
 *   3. one transaction: `confirmed` or `pending` with its events; or, when the provider refused or
 *      failed, `void` with the charge given back (and, after a failure, the provider told to
 *      cancel whatever it may hold).
 * A crash between the steps leaves a `processing` row the sweeper (bookingSync.ts) settles by
 * asking the provider.
 */

export type { Booking };

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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(id: string): boolean {
  return UUID.test(id);
}

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

// ---------------------------------------------------------------------------------------------
// Errors of the flow

export class BookTokenError extends UnprocessableError {}

export class SoldOutError extends ConflictError {
  constructor() {
    super('SOLD_OUT', 'The room is no longer available for these dates; search again');
  }
}

export class PriceChangedError extends ConflictError {
  constructor() {
    super('PRICE_CHANGED', 'The provider no longer offers this price; run the price check again for a new book_token');
  }
}

export class AlreadyCancelledError extends ConflictError {
  constructor(id: string, status: BookingStatus) {
    super(
      'BOOKING_ALREADY_CANCELLED',
      status === 'cancelling' ? 'The booking is being cancelled' : 'The booking is already cancelled',
      { booking_id: id, status },
    );
  }
}

export class NotCancellableError extends ConflictError {
  constructor(id: string, status: BookingStatus) {
    super('BOOKING_NOT_CANCELLABLE', `A booking that is ${status} cannot be cancelled`, { booking_id: id, status });
  }
}

/**
 * 502 UPSTREAM_ERROR in production when the provider answers that it does not know a booking being
 * cancelled: nothing is cancelled or refunded without its word, and the booking stays as it was.
 */
export class CancellationNotConfirmedError extends UpstreamError {
  constructor(id: string, status: BookingStatus) {
    super(
      `The inventory provider does not confirm this cancellation: the booking stays ${status} and nothing is refunded. ` +
        'The disagreement is reported to an operator; retry later',
      { booking_id: id, status, reason: 'provider_does_not_confirm_cancellation' },
    );
  }
}

export class NotModifiableError extends ConflictError {
  constructor(id: string, message: string, status: BookingStatus) {
    super('BOOKING_NOT_MODIFIABLE', message, { booking_id: id, status });
  }
}

// ---------------------------------------------------------------------------------------------
// The booking record (spec §2.2): camelCase, 64-bit amounts as strings. Webhook payloads too.

export interface BookingRecord {
  id: string;
  userId: string;
  appId: string;
  hubBookingNumber: string | null;
  channelBookingNumber: string | null;
  propertyId: string;
  propertyName: string | null;
  roomType: string | null;
  ratePlan: string | null;
  checkin: string;
  checkout: string;
  guestsAdult: number;
  guestsChild: number;
  bookerName: string;
  bookerEmail: string | null;
  guestFirstName: string | null;
  guestLastName: string | null;
  guestPhone: string | null;
  guestCountry: string | null;
  specialRequests: string | null;
  totalAmount: string;
  netAmount: string;
  saleAmount: string | null;
  currency: string;
  status: VisibleStatus;
  cancellationPolicy: CancellationPolicyType | null;
  cancellationDeadline: string | null;
  refundAmount: string | null;
  cancellationFee: string | null;
  createdAt: string;
  updatedAt: string;
}

export function toBookingRecord(b: Booking): BookingRecord {
  if (!isVisible(b.status)) throw new Error(`booking ${b.id} is ${b.status}, not a partner-visible status`);
  return {
    id: b.id,
    userId: b.channelId,
    appId: b.appId,
    hubBookingNumber: b.hubBookingNumber,
    channelBookingNumber: b.channelBookingNumber,
    propertyId: String(b.propertyId),
    propertyName: b.propertyName,
    roomType: b.roomType,
    ratePlan: b.ratePlan,
    checkin: dateOnly(b.checkin),
    checkout: dateOnly(b.checkout),
    guestsAdult: b.guestsAdult,
    guestsChild: b.guestsChild,
    bookerName: b.bookerName,
    bookerEmail: b.bookerEmail,
    guestFirstName: b.guestFirstName,
    guestLastName: b.guestLastName,
    guestPhone: b.guestPhone,
    guestCountry: b.guestCountry,
    specialRequests: b.specialRequests,
    totalAmount: b.totalAmount.toString(),
    netAmount: b.netAmount.toString(),
    saleAmount: b.saleAmount?.toString() ?? null,
    currency: b.currency,
    status: b.status,
    cancellationPolicy: b.cancellationPolicy as CancellationPolicyType | null,
    cancellationDeadline: b.cancellationDeadline?.toISOString() ?? null,
    refundAmount: b.refundAmount?.toString() ?? null,
    cancellationFee: b.cancellationFee?.toString() ?? null,
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
  };
}

/** The fields of a booking the partner sees: a row, or a record as an event carried it. */
export type BookingView = Pick<
  Booking,
  | 'id' | 'channelId' | 'appId' | 'hubBookingNumber' | 'channelBookingNumber' | 'propertyId' | 'propertyName'
  | 'roomType' | 'ratePlan' | 'checkin' | 'checkout' | 'guestsAdult' | 'guestsChild' | 'bookerName'
  | 'bookerEmail' | 'guestFirstName' | 'guestLastName' | 'guestPhone' | 'guestCountry' | 'specialRequests'
  | 'totalAmount' | 'netAmount' | 'saleAmount' | 'currency' | 'status' | 'cancellationPolicy'
  | 'cancellationDeadline' | 'refundAmount' | 'cancellationFee' | 'createdAt' | 'updatedAt'
>;

/** The inverse of toBookingRecord: the booking as an outbox event recorded it. */
export function fromBookingRecord(r: BookingRecord): BookingView {
  const amount = (v: string | null) => (v === null ? null : BigInt(v));
  const instant = (v: string | null) => (v === null ? null : new Date(v));
  return {
    id: r.id,
    channelId: r.userId,
    appId: r.appId,
    hubBookingNumber: r.hubBookingNumber,
    channelBookingNumber: r.channelBookingNumber,
    propertyId: Number(r.propertyId),
    propertyName: r.propertyName,
    roomType: r.roomType,
    ratePlan: r.ratePlan,
    checkin: dateValue(r.checkin),
    checkout: dateValue(r.checkout),
    guestsAdult: r.guestsAdult,
    guestsChild: r.guestsChild,
    bookerName: r.bookerName,
    bookerEmail: r.bookerEmail,
    guestFirstName: r.guestFirstName,
    guestLastName: r.guestLastName,
    guestPhone: r.guestPhone,
    guestCountry: r.guestCountry,
    specialRequests: r.specialRequests,
    totalAmount: BigInt(r.totalAmount),
    netAmount: BigInt(r.netAmount),
    saleAmount: amount(r.saleAmount),
    currency: r.currency,
    status: r.status,
    cancellationPolicy: r.cancellationPolicy,
    cancellationDeadline: instant(r.cancellationDeadline),
    refundAmount: amount(r.refundAmount),
    cancellationFee: amount(r.cancellationFee),
    createdAt: new Date(r.createdAt),
    updatedAt: new Date(r.updatedAt),
  };
}

export function dateOnly(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function dateValue(date: string): Date {
  return new Date(`${date}T00:00:00.000Z`);
}

// ---------------------------------------------------------------------------------------------
// Transitions and events

/** Moves `booking` by `trigger` if nobody moved it first; writes the move's events. Null when it lost the race. */
async function move(
  tx: Prisma.TransactionClient,
  booking: Booking,
  trigger: Trigger,
  data: Prisma.BookingUpdateManyMutationInput,
  at: Date,
  to?: BookingStatus,
): Promise<Booking | null> {
  const next = transition(booking.status, trigger, to);
  const { count } = await tx.booking.updateMany({
    where: { id: booking.id, status: booking.status },
    data: { ...data, status: next.to, updatedAt: at },
  });
  if (count === 0) return null;
  const updated = await tx.booking.findUniqueOrThrow({ where: { id: booking.id } });
  await recordEvents(tx, updated, next.events, at);
  return updated;
}

/** Writes events into the outbox, each carrying the booking record as it is now. */
export async function recordEvents(tx: Prisma.TransactionClient, booking: Booking, types: BookingEventType[], at: Date) {
  if (!types.length) return;
  const payload = toBookingRecord(booking) as unknown as Prisma.InputJsonValue;
  await tx.outboxEvent.createMany({
    data: types.map((type, i) => ({
      id: randomUUID(),
      channelId: booking.channelId,
      bookingId: booking.id,
      type,
      payload,
      // Distinct instants keep the order of events written together.
      occurredAt: new Date(at.getTime() + i),
    })),
  });
}

export function transact<T>(deps: AppDeps, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return deps.db.prisma.$transaction(fn, TRANSACTION_OPTIONS);
}

// ---------------------------------------------------------------------------------------------
// Create

/** The offer of a book_token issued to this channel, or the 422 of DECISIONS.md. */
export async function verifyBookToken(ctx: RequestContext, token: string): Promise<OfferClaims & { jti: string }> {
  try {
    return await ctx.deps.tokens.verify('book', token, offerClaims, { now: ctx.deps.clock(), channelId: principalOf(ctx).channelId });
  } catch (error) {
    if (!(error instanceof TokenError)) throw error;
    if (error.reason === 'expired') {
      throw new BookTokenError('BOOK_TOKEN_EXPIRED', 'The book_token has expired; run the price check again');
    }
    throw new BookTokenError('BOOK_TOKEN_INVALID', 'The book_token is not valid; take it from a price check');
  }
}

/** The guest-count fields as each surface spells them, for the party rule's refusals. */
export type PartyNames = Record<'guestsAdult' | 'guestsChild', string>;
export const PARTY_NAMES: PartyNames = { guestsAdult: 'guests_adult', guestsChild: 'guests_child' };

export async function createBooking(ctx: RequestContext, input: CreateBookingInput, names: PartyNames = PARTY_NAMES): Promise<Booking> {
  const offer = await verifyBookToken(ctx, input.bookToken);
  // A v1 booking is one row for the whole party, and its own itinerary.
  const [booking] = await bookOffers(ctx, [{ offer, rooms: [{ occupancy: offer.occupancy, details: input }] }], names);
  return booking!;
}

/**
 * The party is the one paid for (issue 15): a booking may name fewer guests than its book token
 * priced (the adults and the children of every room it holds), never more, or its voucher would
 * promise the property a party the provider does not hold. Omitted counts are the token's.
 */
function partyIssues(occupancy: RoomOccupancy[], details: Pick<CreateBookingInput, 'guestsAdult' | 'guestsChild'>, names: PartyNames): FieldIssue[] {
  const priced = partySize(occupancy);
  const issues: FieldIssue[] = [];
  if (details.guestsAdult !== undefined && details.guestsAdult > priced.adults) {
    issues.push({ field: names.guestsAdult, reason: `at most ${priced.adults}: the adults the book token was priced for` });
  }
  if (details.guestsChild !== undefined && details.guestsChild > priced.children) {
    issues.push({ field: names.guestsChild, reason: `at most ${priced.children}: the children the book token was priced for` });
  }
  return issues;
}

/** One room of an offer to book, with its occupancy and its guest and booking details. */
export interface RoomToBook {
  occupancy: RoomOccupancy[];
  details: Omit<CreateBookingInput, 'bookToken'>;
  bedGroupId?: string | undefined;
}

/** A verified book token and the bookings to make of it (one for v1; one per room for v2). */
export interface OfferToBook {
  offer: OfferClaims & { jti: string };
  rooms: RoomToBook[];
}

/**
 * Books every room of `offers` as one itinerary, all or nothing: one transaction writes every
 * row (`processing`) with its own charge; the provider books each; then every row is settled.
 * If the provider refuses or fails any room, the rooms it booked are cancelled there and every
 * row is void with its charge given back. The token's amount is split evenly over its rooms
 * (any remainder on the first), so the rows add up to exactly what the token carries. Guest counts
 * given for a room may not exceed its occupancy (partyIssues; 400 naming `names`' fields).
 */
export async function bookOffers(ctx: RequestContext, offers: OfferToBook[], names: PartyNames = PARTY_NAMES): Promise<Booking[]> {
  // Before anything is asked or written: a refusal leaves the token unused and nothing charged.
  const issues = offers.flatMap(({ rooms }) => rooms.flatMap((room) => partyIssues(room.occupancy, room.details, names)));
  if (issues.length) throw new ValidationError(issues);
  const { channelId, appId } = principalOf(ctx);
  const { deps } = ctx;
  const now = deps.clock();
  const charged = movesBookingMoney(deps.config.env, 'new');
  const itineraryId = randomUUID();
  const confirmationNumber = newConfirmationNumber();
  const rows: { booking: Booking; occupancy: RoomOccupancy[] }[] = [];

  for (const { offer, rooms } of offers) {
    // Content (names, time zone) before anything is written: failing here changes nothing. A
    // property, room or rate the provider no longer offers cannot be booked: sold out.
    const property = await ctx.loaders.property.load(offer.property_id);
    const room = property?.roomTypes.find((r) => r.id === offer.roomtype_id);
    const plan = room?.ratePlans.find((p) => p.id === offer.rateplan_id);
    if (!property || !room || !plan) throw new SoldOutError();
    // The policy shown at the price check, signed into the token, is the one the booking keeps.
    const policy = offer.cancellation_policy ?? plan.cancellationPolicy;
    const total = BigInt(offer.total_inclusive);
    const share = total / BigInt(rooms.length);
    rooms.forEach((part, index) => {
      const amount = index === 0 ? total - share * BigInt(rooms.length - 1) : share;
      const party = partySize(part.occupancy);
      const input = part.details;
      const id = rows.length === 0 ? itineraryId : randomUUID();
      rows.push({
        occupancy: part.occupancy,
        booking: {
          id,
          channelId,
          appId,
          bookTokenJti: offer.jti,
          tokenRoom: index,
          itineraryId,
          itineraryRoom: rows.length,
          confirmationNumber,
          bedGroupId: part.bedGroupId ?? null,
          status: 'processing',
          previousStatus: null,
          hubBookingNumber: null,
          channelBookingNumber: input.channelBookingNumber ?? null,
          propertyId: property.id,
          propertyName: input.propertyName ?? property.name,
          roomtypeId: room.id,
          roomType: input.roomType ?? room.name,
          rateplanId: plan.id,
          ratePlan: input.ratePlan ?? plan.name,
          checkin: dateValue(offer.checkin),
          checkout: dateValue(offer.checkout),
          timezone: property.timezone,
          occupancy: part.occupancy as unknown as Prisma.JsonValue,
          guestsAdult: input.guestsAdult ?? party.adults,
          guestsChild: input.guestsChild ?? party.children,
          bookerName: input.bookerName,
          bookerEmail: input.bookerEmail ?? null,
          guestFirstName: input.guestFirstName ?? null,
          guestLastName: input.guestLastName ?? null,
          guestPhone: input.guestPhone ?? null,
          guestCountry: input.guestCountry ?? null,
          specialRequests: input.specialRequests ?? null,
          arrivalTime: input.arrivalTime ?? null,
          totalAmount: amount,
          netAmount: amount,
          saleAmount: input.saleAmount ?? null,
          currency: 'KRW',
          requestCurrency: offer.currency,
          requestAmount: convertFromKrw(amount, offer.currency),
          charged,
          cancellationPolicy: policy,
          cancellationDeadline: freeCancellationBefore(policy, offer.checkin, property.timezone),
          paymentDeadline: null,
          cancelRequestedAt: null,
          cancelledAt: null,
          refundAmount: null,
          cancellationFee: null,
          upstreamCleanup: false,
          syncedAt: null,
          createdAt: now,
          updatedAt: now,
        },
      });
    });
  }

  try {
    await transact(deps, async (tx) => {
      for (const { booking } of rows) {
        await tx.booking.create({ data: { ...booking, occupancy: booking.occupancy as Prisma.InputJsonValue } });
      }
      // Production pays from the balance, last before the commit (the channel row's lock is held
      // from the first debit on); a short balance refuses (402) everything.
      for (const { booking } of rows) await postBookingMoney(tx, deps.config.env, booking, -booking.totalAmount, 'booking_charge');
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const jtis = offers.map((o) => o.offer.jti);
    const used = await deps.db.prisma.booking.findFirst({ where: { bookTokenJti: { in: jtis } }, select: { itineraryId: true } });
    throw new BookTokenError('BOOK_TOKEN_USED', 'This book token has already made a booking', { booking_id: used?.itineraryId ?? null });
  }
  return bookWithProvider(deps, rows, ctx.scenario);
}

/** The alphabet of confirmation numbers: Crockford's base 32 (no I, L, O or U to misread). */
const CONFIRMATION_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A reservation's confirmation number: 12 characters, 60 random bits. */
export function newConfirmationNumber(): string {
  return Array.from(randomBytes(12), (byte) => CONFIRMATION_ALPHABET[byte % 32]).join('');
}

type Outcome = { ok: true; provider: UpstreamBooking } | { ok: false; failure: unknown; maybeBooked: boolean };

/** Steps 2 and 3. The caller leaving does not stop it: the booking calls run to their deadline. */
async function bookWithProvider(
  deps: AppDeps,
  rows: { booking: Booking; occupancy: RoomOccupancy[] }[],
  scenario: Scenario | undefined,
): Promise<Booking[]> {
  const outcomes: Outcome[] = [];
  // One room after another: after a refusal the rest are not sent.
  for (const { booking, occupancy } of rows) {
    if (outcomes.some((o) => !o.ok)) break;
    try {
      const answer = await deps.upstream.book(
        {
          reference: booking.id,
          property_id: booking.propertyId,
          roomtype_id: booking.roomtypeId,
          rateplan_id: booking.rateplanId,
          checkin: dateOnly(booking.checkin),
          checkout: dateOnly(booking.checkout),
          occupancy,
          total: Number(booking.totalAmount),
          guest: { first_name: booking.guestFirstName, last_name: booking.guestLastName, name: booking.bookerName },
        },
        { scenario },
      );
      if (answer.ok && (answer.booking.status === 'confirmed' || answer.booking.status === 'pending')) {
        outcomes.push({ ok: true, provider: answer.booking });
      } else if (answer.ok) {
        outcomes.push({ ok: false, failure: new SoldOutError(), maybeBooked: false });
      } else {
        outcomes.push({ ok: false, failure: answer.reason === 'price_mismatch' ? new PriceChangedError() : new SoldOutError(), maybeBooked: false });
      }
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      outcomes.push({ ok: false, failure: error, maybeBooked: true });
    }
  }

  const failed = outcomes.find((o): o is Extract<Outcome, { ok: false }> => !o.ok);
  if (!failed) return Promise.all(rows.map(({ booking }, i) => settleCreation(deps, booking, (outcomes[i] as Extract<Outcome, { ok: true }>).provider)));

  // All or nothing: every room the provider booked or may have booked is cancelled there, and
  // every row is void with its charge given back. Unless the provider answered that it holds a
  // room cancelled (then a late duplicate of the request finds it cancelled and cannot book
  // again), the row stays marked so the sweeper checks again once no request can be in flight.
  const results = await Promise.all(
    rows.map(async ({ booking }, i) => {
      const outcome = outcomes[i];
      const mayHold = outcome === undefined ? false : outcome.ok || outcome.maybeBooked;
      const cancelled = mayHold ? (await cancelAtProvider(deps, booking.id)) === 'cancelled' : true;
      return (await voidAttempt(deps, booking, !cancelled)) ? null : booking;
    }),
  );
  // A row something else settled first (a sweeper, long after the request's lease): answer with
  // what the itinerary became rather than a failure that is not true.
  if (results.some((r) => r !== null)) {
    const current = await deps.db.prisma.booking.findMany({ where: { itineraryId: rows[0]!.booking.itineraryId }, orderBy: { tokenRoom: 'asc' } });
    if (current.every((b) => isVisible(b.status))) return current;
  }
  // Rooms are sent one after another and the first failure stops them: it is the answer.
  throw failed.failure;
}

/** Step 3 on a provider answer: confirmed or pending with their events; anything else is void. */
export async function settleCreation(deps: AppDeps, booking: Booking, provider: UpstreamBooking): Promise<Booking> {
  if (provider.status !== 'confirmed' && provider.status !== 'pending') {
    await voidAttempt(deps, booking, provider.status !== 'cancelled' && provider.status !== 'failed');
    return (await deps.db.prisma.booking.findUniqueOrThrow({ where: { id: booking.id } }));
  }
  const now = deps.clock();
  const pending = provider.status === 'pending';
  const settled = await transact(deps, (tx) =>
    move(
      tx,
      booking,
      pending ? 'provider_pending' : 'provider_confirmed',
      {
        hubBookingNumber: provider.confirmation_number,
        paymentDeadline: pending ? paymentDeadline(deps, booking, now) : null,
        syncedAt: now,
      },
      now,
    ),
  );
  // Lost the race to the sweeper, which settled it the same way from the provider's answer.
  return settled ?? deps.db.prisma.booking.findUniqueOrThrow({ where: { id: booking.id } });
}

/** A pending booking must be confirmed within PENDING_DEADLINE_MINUTES, and before check-in. */
function paymentDeadline(deps: AppDeps, booking: Booking, now: Date): Date {
  const byAge = now.getTime() + deps.config.bookings.pendingDeadlineMinutes * 60_000;
  return new Date(Math.min(byAge, checkinInstant(dateOnly(booking.checkin), booking.timezone).getTime()));
}

/** The attempt booked nothing: void, token free again, the charge given back once. */
export async function voidAttempt(deps: AppDeps, booking: Booking, upstreamCleanup: boolean): Promise<boolean> {
  const now = deps.clock();
  return transact(deps, async (tx) => {
    const voided = await move(tx, booking, 'provider_refused', { bookTokenJti: null, upstreamCleanup }, now);
    if (voided) await postBookingMoney(tx, deps.config.env, voided, voided.totalAmount, 'booking_void');
    return voided !== null;
  });
}

/**
 * Tells the provider to cancel `reference`: `cancelled` (it held the booking and now holds it
 * cancelled, so a late duplicate of the booking request cannot book again), `unknown` (it holds
 * nothing under that reference, yet), `refused` (its state forbids it) or `failed` (no answer).
 */
export type ProviderCancel = 'cancelled' | 'unknown' | 'refused' | 'failed';

export async function cancelAtProvider(deps: AppDeps, reference: string): Promise<ProviderCancel> {
  try {
    const answer = await deps.upstream.cancelBooking(reference);
    if (answer === null) return 'unknown';
    return answer === 'not_cancellable' ? 'refused' : 'cancelled';
  } catch (error) {
    if (error instanceof UpstreamError) return 'failed';
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Read

/** A booking of the caller's channel; anything else (another channel's, malformed id) is 404. */
export async function getBooking(ctx: RequestContext, id: string): Promise<Booking> {
  const channelId = principalOf(ctx).channelId;
  const booking = isUuid(id)
    ? await ctx.deps.db.prisma.booking.findFirst({ where: { id: id.toLowerCase(), channelId, status: { in: [...VISIBLE_STATUSES] } } })
    : null;
  if (!booking) throw new NotFoundError(`Booking ${id} was not found`);
  return booking;
}


export interface BookingFilters {
  status?: VisibleStatus | undefined;
  checkinFrom?: string | undefined;
  checkinTo?: string | undefined;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
  channelBookingNumber?: string | undefined;
  page: number;
  perPage: number;
}

export type BookingPage = Page<Booking>;

/** Filter names as each surface spells them, for cross-field errors. */
export type FilterNames = Record<'checkinFrom' | 'checkinTo' | 'createdFrom' | 'createdTo', string>;

/** The caller's bookings, newest first. Date bounds are inclusive days; `created_*` days are UTC. */
export async function listBookings(ctx: RequestContext, filters: BookingFilters, names: FilterNames): Promise<BookingPage> {
  const channelId = principalOf(ctx).channelId;
  const issues = [];
  if (filters.checkinFrom && filters.checkinTo && filters.checkinFrom > filters.checkinTo) {
    issues.push({ field: names.checkinTo, reason: `must not be before ${names.checkinFrom}` });
  }
  if (filters.createdFrom && filters.createdTo && filters.createdFrom > filters.createdTo) {
    issues.push({ field: names.createdTo, reason: `must not be before ${names.createdFrom}` });
  }
  if (issues.length) throw new ValidationError(issues);
  const where: Prisma.BookingWhereInput = {
    channelId,
    status: filters.status ?? { in: [...VISIBLE_STATUSES] },
    checkin: {
      ...(filters.checkinFrom && { gte: dateValue(filters.checkinFrom) }),
      ...(filters.checkinTo && { lte: dateValue(filters.checkinTo) }),
    },
    createdAt: {
      ...(filters.createdFrom && { gte: dateValue(filters.createdFrom) }),
      ...(filters.createdTo && { lt: new Date(dateValue(filters.createdTo).getTime() + 86_400_000) }),
    },
    ...(filters.channelBookingNumber !== undefined && { channelBookingNumber: filters.channelBookingNumber }),
  };
  const { prisma } = ctx.deps.db;
  const [total, items] = await Promise.all([
    prisma.booking.count({ where }),
    prisma.booking.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: (filters.page - 1) * filters.perPage,
      take: filters.perPage,
    }),
  ]);
  return pageOf(items, total, filters.page, filters.perPage);
}

// ---------------------------------------------------------------------------------------------
// Modify

const MODIFIABLE: ReadonlySet<BookingStatus> = new Set(['pending', 'confirmed', 'checked_in']);

/** The rules of a change (409 BOOKING_NOT_MODIFIABLE): a live booking; special requests and arrival time before check-in. */
export function refuseModify(booking: Booking, patch: GuestDetails, now: Date): void {
  if (!MODIFIABLE.has(booking.status)) {
    throw new NotModifiableError(booking.id, `A booking that is ${booking.status} cannot be modified`, booking.status);
  }
  const started = () => booking.status === 'checked_in' || now >= checkinInstant(dateOnly(booking.checkin), booking.timezone);
  if (patch.specialRequests !== undefined && started()) {
    throw new NotModifiableError(booking.id, 'Special requests can be changed only before check-in', booking.status);
  }
  if (patch.arrivalTime !== undefined && started()) {
    throw new NotModifiableError(booking.id, 'The arrival time can be changed only before check-in', booking.status);
  }
}

/**
 * PATCH: guest and booker details while the booking is live; special requests only before
 * check-in (15:00 local on the check-in date, and not once checked in). Writes
 * `reservation.modified` when something changed; an update that changes nothing writes nothing.
 */
/** The fields of `patch` that differ from the booking's: what an update writes (nothing else). */
export function changedGuestFields(booking: Booking, patch: GuestDetails): Prisma.BookingUpdateManyMutationInput {
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch) as [keyof GuestDetails, string | null | undefined][]) {
    if (value !== undefined && booking[key] !== value) changes[key] = value;
  }
  return changes;
}

export async function updateBooking(ctx: RequestContext, id: string, patch: GuestDetails): Promise<Booking> {
  const booking = await getBooking(ctx, id);
  const now = ctx.deps.clock();
  refuseModify(booking, patch, now);
  const changes = changedGuestFields(booking, patch);
  if (!Object.keys(changes).length) return booking;
  return transact(ctx.deps, async (tx) => {
    const { count } = await tx.booking.updateMany({ where: { id: booking.id, status: booking.status }, data: { ...changes, updatedAt: now } });
    if (count === 0) throw new ConflictError('BOOKING_CHANGED', 'The booking changed while it was being updated; read it and retry');
    const updated = await tx.booking.findUniqueOrThrow({ where: { id: booking.id } });
    await recordEvents(tx, updated, ['reservation.modified'], now);
    return updated;
  });
}

// ---------------------------------------------------------------------------------------------
// Cancel

/** 409 BOOKING_ALREADY_CANCELLED or BOOKING_NOT_CANCELLABLE when `booking` cannot be cancelled now. */
export function refuseCancel(booking: Booking): void {
  if (booking.status === 'cancelled' || booking.status === 'cancelling') throw new AlreadyCancelledError(booking.id, booking.status);
  if (!canTransition(booking.status, 'cancel_requested')) throw new NotCancellableError(booking.id, booking.status);
}

/**
 * Fee and refund of cancelling `booking` at `at`. A pending booking past its payment deadline was
 * never confirmed in time: whoever cancels it (the sweeper, the sync, the partner), it is free.
 */
export function chargesOf(booking: Booking, at: Date, options: { waived?: boolean } = {}): CancellationCharges {
  const wasPending = booking.status === 'pending' || (booking.status === 'cancelling' && booking.previousStatus === 'pending');
  const overdue = wasPending && booking.paymentDeadline !== null && booking.paymentDeadline <= at;
  return cancellationCharges(
    {
      cancellationPolicy: (booking.cancellationPolicy ?? 'non_refundable') as CancellationPolicyType,
      totalAmount: booking.totalAmount,
      checkin: dateOnly(booking.checkin),
      timezone: booking.timezone,
    },
    at,
    { waived: options.waived || overdue },
  );
}

export interface CancellationQuote extends CancellationCharges {
  booking: Booking;
  /** True when the figures are the ones a past cancellation recorded. */
  final: boolean;
}

/** What cancelling now would cost (the preview); for a cancelled booking, what it cost. */
export async function cancellationQuote(ctx: RequestContext, id: string): Promise<CancellationQuote> {
  const booking = await getBooking(ctx, id);
  if (booking.status === 'cancelled' && booking.cancellationFee !== null && booking.refundAmount !== null) {
    return { booking, fee: booking.cancellationFee, refund: booking.refundAmount, freeCancellationBefore: booking.cancellationDeadline, final: true };
  }
  refuseCancel(booking);
  return { booking, ...chargesOf(booking, ctx.deps.clock()), final: false };
}

/**
 * PUT /bookings/{id}/cancel. The booking goes to `cancelling` first (one conditional update, so
 * of twenty concurrent cancels one goes on and the rest get 409), then the provider is told,
 * then one transaction makes it `cancelled`, records fee and refund, credits the refund once
 * (production) and writes `reservation.cancelled`. The provider refusing or failing puts the
 * booking back as it was (409 or 502); so does, in production, a provider that does not know the
 * booking (502, cancelsUnknownToProvider). The fee is the one of the moment of the request.
 */
export async function cancelBooking(ctx: RequestContext, id: string): Promise<Booking> {
  const { deps } = ctx;
  const booking = await getBooking(ctx, id);
  refuseCancel(booking);
  const now = deps.clock();
  const started = await transact(deps, (tx) =>
    move(tx, booking, 'cancel_requested', { previousStatus: booking.status, cancelRequestedAt: now }, now),
  );
  if (!started) {
    refuseCancel(await getBooking(ctx, id));
    throw new ConflictError('BOOKING_CHANGED', 'The booking changed while it was being cancelled; read it and retry');
  }

  let answer;
  try {
    answer = await deps.upstream.cancelBooking(started.id, { scenario: ctx.scenario });
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    // Whether the provider cancelled is unknown: the booking stays as it was, and the sync
    // applies the cancellation if the provider did make it.
    await revertCancel(deps, started);
    throw error;
  }
  if (answer === 'not_cancellable') {
    await revertCancel(deps, started);
    throw new NotCancellableError(started.id, started.previousStatus ?? started.status);
  }
  if (answer === null && !cancelsUnknownToProvider(deps, started, 'a partner cancels it')) {
    await revertCancel(deps, started);
    throw new CancellationNotConfirmedError(started.id, started.previousStatus ?? 'confirmed');
  }
  const done = await completeCancel(deps, started, now);
  // Only a sweeper acting on this row after the request's lease could have moved it meanwhile.
  if (done.status !== 'cancelled') throw new ConflictError('BOOKING_CHANGED', 'The booking changed while it was being cancelled; read it and retry');
  return done;
}

/**
 * The one rule for a cancellation the provider answers with "I do not know this booking"
 * (docs/decisions.md, "Environments"): true when it may complete here anyway. Only the sandbox
 * does: its bundled simulator forgets its bookings when it restarts, and no money moves there. In
 * production nothing is cancelled, refunded or announced without the provider's word: the caller
 * keeps the booking as it was, and the disagreement is logged at error level for an operator;
 * the sync keeps comparing the booking with the provider. `why` says what asked for the cancellation.
 */
export function cancelsUnknownToProvider(deps: Pick<AppDeps, 'config' | 'logger'>, booking: Booking, why: string): boolean {
  const facts = { booking: booking.id, channel: booking.channelId, status: booking.status, previous: booking.previousStatus, why };
  if (deps.config.env === 'sandbox') {
    deps.logger.warn(facts, 'provider does not know a booking being cancelled; cancelling here (sandbox)');
    return true;
  }
  deps.logger.error(facts, 'provider does not know a booking being cancelled; it is kept as it was, with nothing refunded, for an operator to reconcile');
  return false;
}

/** Makes a booking cancelled with the charges of `at`, and refunds once. Used by every cancellation. */
export async function completeCancel(deps: AppDeps, booking: Booking, at: Date, options: { waived?: boolean; trigger?: Trigger } = {}): Promise<Booking> {
  const now = deps.clock();
  const charges = chargesOf(booking, at, options);
  const done = await transact(deps, async (tx) => {
    const cancelled = await move(
      tx,
      booking,
      options.trigger ?? 'cancelled',
      { cancellationFee: charges.fee, refundAmount: charges.refund, cancelledAt: now, previousStatus: null },
      now,
    );
    if (cancelled && charges.refund > 0n) await postBookingMoney(tx, deps.config.env, cancelled, charges.refund, 'booking_refund');
    return cancelled;
  });
  return done ?? deps.db.prisma.booking.findUniqueOrThrow({ where: { id: booking.id } });
}

/**
 * The provider refused or failed: back to the status before. The request's moment is forgotten,
 * so a later cancellation pays the fee of its own moment (had the provider cancelled after all,
 * the sync takes the provider's time of cancellation).
 */
export async function revertCancel(deps: AppDeps, booking: Booking): Promise<void> {
  const now = deps.clock();
  const back = booking.previousStatus ?? 'confirmed';
  await transact(deps, (tx) => move(tx, booking, 'cancel_reverted', { previousStatus: null, cancelRequestedAt: null }, now, back));
}

/** A pending booking the provider reports failed: nothing was delivered, so everything comes back. */
export async function failPending(deps: AppDeps, booking: Booking): Promise<Booking | null> {
  const now = deps.clock();
  return transact(deps, async (tx) => {
    const failed = await move(tx, booking, 'provider_failed', { cancellationFee: 0n, refundAmount: booking.totalAmount }, now);
    if (failed && failed.totalAmount > 0n) await postBookingMoney(tx, deps.config.env, failed, failed.totalAmount, 'booking_refund');
    return failed;
  });
}

/** A transition a property reports with no money attached (confirmed, checked in or out, no-show). */
export async function applyReported(deps: AppDeps, booking: Booking, trigger: Trigger): Promise<Booking | null> {
  const now = deps.clock();
  return transact(deps, (tx) => move(tx, booking, trigger, { syncedAt: now }, now));
}
