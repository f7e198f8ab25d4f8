import { randomBytes, randomUUID } from 'node:crypto';
import type { AppDeps, RequestContext } from '../../context.js';
import { Prisma, type Booking } from '../../generated/prisma/client.js';
import type { RoomOccupancy, Scenario, UpstreamBooking } from '../../upstream/protocol.js';
import { isVisible } from './states.js';
import { checkinInstant, freeCancellationBefore, partySize } from '../search/index.js';
import {
  againWhenUnavailable,
  convertFromKrw,
  DatabaseUnavailableError,
  isDatabaseUnavailable,
  isUniqueViolation,
  principalOf,
  textIn,
  UpstreamError,
  ValidationError,
  type FieldIssue,
} from '../kernel/index.js';
import { insertCharged, movesBookingMoney, postBookingMoney } from './ledger.js';
import { offerClaims, TokenError, type OfferClaims } from '../access/index.js';
import { BookTokenError, PriceChangedError, SoldOutError } from './errors.js';
import { dateOnly, dateValue } from './record.js';
import type { CreateBookingInput } from './rules.js';
import { move, moveHeld, transact } from './transitions.js';

/**
 * Bookings (docs/spec/channel-api.md §3.1, §4.5): create from a book_token, read, modify, preview and cancel. REST v1,
 * v2 and GraphQL all come here. Money moves only through the ledger, statuses only through the
 * state machine (states.ts), and every change writes its events in the same transaction.
 *
 * Creating a booking takes three steps, so that the provider failing leaves nothing behind and a
 * booking the provider made is never lost (docs/decisions.md, "Booking creation"):
 *   1. one transaction: the row (status `processing`, the token's jti unique, so a token books
 *      once) and, in production, the charge;
 *   2. the provider booking, idempotent on the booking id;
 *   3. one transaction: `confirmed` or `pending` with its events; or, when the provider refused or
 *      failed, `void` with the charge given back (and, after a failure, the provider told to
 *      cancel whatever it may hold).
 * A crash between the steps leaves a `processing` row owned by this instance (leaseOwner); any
 * instance settles it by asking the provider once this one is gone, and this one settles it itself
 * when the request died with the database unreachable (sync.ts, recoverInFlight).
 */

// ---------------------------------------------------------------------------------------------
// Create

/** The offer of a book_token issued to this channel, or the 422 of docs/spec/DECISIONS.md. */
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
          // The names as the partner read them: in the request's language.
          roomType: input.roomType ?? textIn(room.name, ctx.language),
          rateplanId: plan.id,
          ratePlan: input.ratePlan ?? textIn(plan.name, ctx.language),
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
          // In flight for this instance until settled (recoverInFlight takes it if the instance dies).
          leaseOwner: deps.instanceId,
          createdAt: now,
          updatedAt: now,
        },
      });
    });
  }

  // Held by this request from before the rows are written until it has settled them (inFlight.ts).
  return deps.inFlight.with(
    rows.map((r) => r.booking.id),
    async () => {
      await reserve(deps, rows.map((r) => r.booking), offers.map((o) => o.offer.jti));
      return bookWithProvider(deps, rows, ctx.scenario, ctx);
    },
  );
}

/**
 * Step 1: the rows and their charge. A connection lost on the way is tried again, once it has
 * looked whether the rows were written after all (the commit may have happened with its answer
 * lost); an outage that outlasts the tries is 503 with nothing booked (a row written nonetheless is
 * settled by this instance's recovery: voided, its charge given back).
 */
async function reserve(deps: AppDeps, bookings: Booking[], jtis: string[]): Promise<void> {
  const tokenUsed = async () => {
    const used = await deps.db.prisma.booking.findFirst({ where: { bookTokenJti: { in: jtis } }, select: { itineraryId: true } });
    return used ? new BookTokenError('BOOK_TOKEN_USED', 'This book token has already made a booking', { booking_id: used.itineraryId }) : null;
  };
  try {
    await againWhenUnavailable(async (attempt) => {
      if (attempt > 0 && (await deps.db.prisma.booking.count({ where: { id: bookings[0]!.id } })) > 0) return;
      if (bookings.length === 1) {
        // One row (every v1 booking): the row and its charge in one statement (ledger.ts).
        const booking = bookings[0]!;
        await insertCharged(deps.db.prisma, deps.config.env, 'bookings', booking, -booking.totalAmount, 'booking_charge', tokenUsed);
        return;
      }
      await transact(deps, async (tx) => {
        for (const booking of bookings) {
          await tx.booking.create({ data: { ...booking, occupancy: booking.occupancy as Prisma.InputJsonValue } });
        }
        // Production pays from the balance, last before the commit (the channel row's lock is held
        // from the first debit on); a short balance refuses (402) everything.
        for (const booking of bookings) await postBookingMoney(tx, deps.config.env, booking, -booking.totalAmount, 'booking_charge');
      });
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw (await tokenUsed()) ?? new BookTokenError('BOOK_TOKEN_USED', 'This book token has already made a booking', { booking_id: null });
  }
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
  /** The request, whose logger writes the provider's failures (its id in each line). */
  log: { readonly logger: RequestContext['logger'] },
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
        { scenario, log },
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
  if (!failed) {
    const settled = await recorded(rows[0]!.booking, () =>
      Promise.all(rows.map(({ booking }, i) => settleCreation(deps, booking, (outcomes[i] as Extract<Outcome, { ok: true }>).provider))),
    );
    // Settled void by another instance that took the rows over (this one looked gone): the
    // provider is told to cancel what it holds (upstream_cleanup), so nothing stays booked.
    if (settled.some((b) => b.status === 'void')) throw new UpstreamError('The booking could not be recorded in time; nothing was booked: book again');
    return settled;
  }

  // All or nothing: every room the provider booked or may have booked is cancelled there, and
  // every row is void with its charge given back. Unless the provider answered that it holds a
  // room cancelled (then a late duplicate of the request finds it cancelled and cannot book
  // again), the row stays marked so the sweeper checks again once no request can be in flight.
  const results = await Promise.all(
    rows.map(async ({ booking }, i) => {
      const outcome = outcomes[i];
      const mayHold = outcome === undefined ? false : outcome.ok || outcome.maybeBooked;
      const cancelled = mayHold ? (await cancelAtProvider(deps, booking.id)) === 'cancelled' : true;
      return (await recorded(booking, () => voidAttempt(deps, booking, !cancelled))) ? null : booking;
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

/**
 * Step 3's writes, tried again after a lost connection (each move is conditional, so a write that
 * happened with its answer lost changes nothing the second time). An outage that outlasts the
 * tries is 503 naming the booking: it reads `pending` until this instance's recovery (or, if this
 * one dies, another's) settles it from the provider's answer, never a 500 for a booking made.
 */
async function recorded<T>(booking: Booking, write: () => Promise<T>): Promise<T> {
  try {
    return await againWhenUnavailable(write);
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw new DatabaseUnavailableError(booking.itineraryId);
    throw error;
  }
}

/** Step 3 on a provider answer: confirmed or pending with their events; anything else is void. */
export async function settleCreation(deps: AppDeps, booking: Booking, provider: UpstreamBooking): Promise<Booking> {
  if (provider.status !== 'confirmed' && provider.status !== 'pending') {
    await voidAttempt(deps, booking, provider.status !== 'cancelled' && provider.status !== 'failed');
    return (await deps.db.prisma.booking.findUniqueOrThrow({ where: { id: booking.id } }));
  }
  const now = deps.clock();
  const pending = provider.status === 'pending';
  const trigger = pending ? 'provider_pending' : 'provider_confirmed';
  const data = {
    hubBookingNumber: provider.confirmation_number,
    paymentDeadline: pending ? paymentDeadline(deps, booking, now) : null,
    syncedAt: now,
  };
  // The row as this request wrote it, in one statement; if it changed meanwhile, as any move.
  const settled = (await moveHeld(deps.db.prisma, booking, trigger, data, now)) ?? (await transact(deps, (tx) => move(tx, booking, trigger, data, now)));
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
