import {
  amountToNumber,
  AppError,
  ConflictError,
  convertFromKrw,
  InvalidTokenError,
  NotFoundError,
  principalOf,
  textIn,
  TokenExpiredError,
  ValidationError,
  type Currency,
} from '../kernel/index.js';
import type { RequestContext } from '../../context.js';
import type { Booking } from '../../generated/prisma/client.js';
import type { RoomOccupancy } from '../../upstream/protocol.js';
import { bookOffers, BookTokenError, cancelBooking, chargesOf, dateOnly, isVisible, type OfferToBook } from '../bookings/index.js';
import { checkinInstant } from '../search/index.js';
import type { CancellationPolicyType } from '../catalog/index.js';
import { TokenError } from '../access/index.js';
import { cancelPenalties, occupancyKey, stepLink, verifyV2Token, type CancelPenalty, type MoneyValue, type StepLink } from './offers.js';
import { v2ItineraryClaims, v2RateId, v2RoomId } from './ids.js';

/**
 * v2 steps 3 and 4 (docs/spec/channel-api.md §4.6, §3.2, §7): book from book tokens (one or several, one room per
 * occupancy, all or nothing), retrieve (a link that never expires and is never consumed) and
 * cancel (a link consumed by its success). Every room is a normal booking of the booking
 * service: it is listed in v1 and GraphQL, with the same money rules and events.
 */

export interface V2Guest {
  givenName: string;
  familyName: string;
}

export interface V2BookInput {
  tokens: string[];
  rooms: V2Guest[];
  affiliateReferenceId?: string | undefined;
}

export interface V2Itinerary {
  itineraryId: string;
  links: { retrieve: StepLink; cancel: StepLink | null };
}

class TokenAlreadyUsedError extends ConflictError {
  constructor(message: string) {
    super('TOKEN_ALREADY_USED', `${message}; restart at step 1 (availability)`);
  }
}

export async function v2CreateBooking(ctx: RequestContext, input: V2BookInput): Promise<V2Itinerary> {
  const offers = [];
  for (const token of input.tokens) offers.push(await verifyV2Token(ctx, 'v2_book', token));
  // The same token twice is told by its id, not its text: a token's last base64url character has
  // bits no decoder reads, so two spellings of one token both verify.
  if (new Set(offers.map((offer) => offer.jti)).size !== offers.length) {
    throw new ValidationError([{ field: 'book_tokens', reason: 'each book token at most once' }]);
  }
  const roomCount = offers.reduce((n, o) => n + o.occupancy.length, 0);
  if (input.rooms.length !== roomCount) {
    throw new ValidationError([
      { field: 'rooms', reason: `give one guest per room booked: the book token${offers.length > 1 ? 's hold' : ' holds'} ${roomCount}` },
    ]);
  }

  // Guests are taken in order: the rooms of the first token, then of the next.
  let next = 0;
  const toBook: OfferToBook[] = offers.map((offer) => ({
    offer,
    rooms: (offer.occupancy as RoomOccupancy[]).map((occupancy) => {
      const guest = input.rooms[next++]!;
      return {
        occupancy: [occupancy],
        bedGroupId: offer.bed_group_id,
        details: {
          bookerName: `${guest.givenName} ${guest.familyName}`,
          guestFirstName: guest.givenName,
          guestLastName: guest.familyName,
          channelBookingNumber: input.affiliateReferenceId,
        },
      };
    }),
  }));

  let bookings: Booking[];
  try {
    bookings = await bookOffers(ctx, toBook);
  } catch (error) {
    if (error instanceof BookTokenError) {
      // Only a used token reaches here: the others were refused at verification.
      throw new TokenAlreadyUsedError('This book token has already made a booking');
    }
    throw error;
  }
  return { itineraryId: bookings[0]!.itineraryId, links: await itineraryLinks(ctx, bookings) };
}

/** The retrieve link (no expiry) and, while a room can still be cancelled, the cancel link. */
async function itineraryLinks(ctx: RequestContext, bookings: Booking[]): Promise<V2Itinerary['links']> {
  const now = ctx.deps.clock();
  const claims = { channel_id: principalOf(ctx).channelId, itinerary_id: bookings[0]!.itineraryId };
  const retrieve = await ctx.deps.tokens.sign('v2_retrieve', claims, { now, ttlSeconds: null });
  const cancellable = bookings.filter((b) => b.status === 'pending' || b.status === 'confirmed');
  if (!cancellable.length) return { retrieve: stepLink({ step: 'retrieve' }, retrieve, null), cancel: null };
  // A cancel link is good until check-in (15:00 local on the check-in date), at least a minute.
  const until = Math.min(...cancellable.map((b) => checkinInstant(dateOnly(b.checkin), b.timezone).getTime()));
  const ttlSeconds = Math.max(60, Math.floor((until - now.getTime()) / 1000));
  const cancel = await ctx.deps.tokens.sign('v2_cancel', claims, { now, ttlSeconds });
  return {
    retrieve: stepLink({ step: 'retrieve' }, retrieve, null),
    cancel: stepLink({ step: 'cancel' }, cancel, new Date(now.getTime() + ttlSeconds * 1000)),
  };
}

/** The itinerary a retrieve or cancel link stands for; its bookings, rooms in order. */
async function itineraryOf(ctx: RequestContext, kind: 'v2_retrieve' | 'v2_cancel', token: string): Promise<Booking[]> {
  const channelId = principalOf(ctx).channelId;
  let claims;
  try {
    claims = await ctx.deps.tokens.verify(kind, token, v2ItineraryClaims, { now: ctx.deps.clock(), channelId });
  } catch (error) {
    if (!(error instanceof TokenError)) throw error;
    if (error.reason === 'expired') throw new TokenExpiredError('The link has expired; retrieve the booking for a new one');
    throw new InvalidTokenError('The token is not valid; use the link as given');
  }
  const bookings = await ctx.deps.db.prisma.booking.findMany({
    where: { itineraryId: claims.itinerary_id, channelId },
    orderBy: [{ createdAt: 'asc' }, { tokenRoom: 'asc' }],
  });
  const visible = bookings.filter((b) => isVisible(b.status));
  if (!visible.length) throw new NotFoundError('The itinerary was not found');
  return visible;
}

export interface V2CancelRefund {
  refundable: boolean;
  refund_amount: number;
  penalty_amount: number;
  currency: string;
}

export interface V2RetrievedRoom {
  room_id: string;
  rate_id: string;
  bed_group_id: string | null;
  bed_group_description: string | null;
  status: string;
  refundable: boolean;
  guest: { given_name: string | null; family_name: string | null };
  occupancy_pricing: Record<string, { totals: { inclusive: { request_currency: MoneyValue; billable_currency: MoneyValue } } }>;
  cancel_penalties: CancelPenalty[];
  cancel_refund: V2CancelRefund;
}

export interface V2Retrieved {
  itinerary_id: string;
  status: string;
  property_id: string;
  checkin: string;
  checkout: string;
  request_currency: string;
  billable_currency: string;
  affiliate_reference_id: string | null;
  rooms: V2RetrievedRoom[];
  links: { cancel?: StepLink };
}

/** Step 4a: works before and after cancelling; the link is never consumed. */
export async function v2Retrieve(ctx: RequestContext, token: string): Promise<V2Retrieved> {
  const bookings = await itineraryOf(ctx, 'v2_retrieve', token);
  const now = ctx.deps.clock();
  const first = bookings[0]!;
  const property = await ctx.loaders.property.load(first.propertyId);
  const links = await itineraryLinks(ctx, bookings);
  return {
    itinerary_id: first.itineraryId,
    status: itineraryStatus(bookings),
    property_id: String(first.propertyId),
    checkin: dateOnly(first.checkin),
    checkout: dateOnly(first.checkout),
    request_currency: first.requestCurrency,
    billable_currency: first.currency,
    affiliate_reference_id: first.channelBookingNumber,
    rooms: bookings.map((b) => {
      const bedGroup = property?.roomTypes.find((r) => r.id === b.roomtypeId)?.bedGroups.find((g) => g.id === b.bedGroupId);
      const occupancy = (b.occupancy as unknown as RoomOccupancy[])[0]!;
      const currency = b.requestCurrency as Currency;
      return {
        room_id: v2RoomId(b.propertyId, b.roomtypeId),
        rate_id: v2RateId(b.propertyId, b.roomtypeId, b.rateplanId),
        bed_group_id: b.bedGroupId,
        bed_group_description: bedGroup ? textIn(bedGroup.description, ctx.language) : null,
        status: b.status,
        refundable: b.cancellationPolicy !== 'non_refundable',
        guest: { given_name: b.guestFirstName, family_name: b.guestLastName },
        occupancy_pricing: {
          [occupancyKey(occupancy)]: {
            totals: {
              inclusive: {
                request_currency: { currency, value: amountToNumber(convertFromKrw(b.totalAmount, currency)) },
                billable_currency: { currency: b.currency, value: amountToNumber(b.totalAmount) },
              },
            },
          },
        },
        cancel_penalties: cancelPenalties(
          (b.cancellationPolicy ?? 'non_refundable') as CancellationPolicyType,
          { checkin: dateOnly(b.checkin), timezone: b.timezone },
          b.totalAmount,
          currency,
          now,
        ),
        cancel_refund: refundOf([b], now),
      };
    }),
    links: links.cancel ? { cancel: links.cancel } : {},
  };
}

export interface V2Cancelled {
  itinerary_id: string;
  status: 'cancelled';
  cancel_refund: V2CancelRefund;
}

/**
 * Step 4b: cancels every room still live, each through the v1 cancellation (one fee function,
 * one refund). The link is consumed by its success: once every room is cancelled, using it again
 * is 409 TOKEN_ALREADY_USED. If the provider fails on a room, the rooms cancelled so far stay
 * cancelled and the same link cancels the rest.
 */
export async function v2Cancel(ctx: RequestContext, token: string): Promise<V2Cancelled> {
  const bookings = await itineraryOf(ctx, 'v2_cancel', token);
  if (bookings.every((b) => b.status === 'cancelled')) throw new TokenAlreadyUsedError('This cancel link has already been used');
  const live = bookings.filter((b) => b.status === 'pending' || b.status === 'confirmed');
  if (!live.length) {
    const blocking = bookings.find((b) => b.status !== 'cancelled')!;
    throw new ConflictError('BOOKING_NOT_CANCELLABLE', `A booking that is ${blocking.status} cannot be cancelled`, {
      itinerary_id: blocking.itineraryId,
      status: blocking.status,
    });
  }
  for (const booking of live) {
    try {
      await cancelBooking(ctx, booking.id);
    } catch (error) {
      // A room someone cancelled meanwhile is as good as cancelled here.
      if (!(error instanceof AppError && error.code === 'BOOKING_ALREADY_CANCELLED')) throw error;
    }
  }
  const after = await ctx.deps.db.prisma.booking.findMany({ where: { id: { in: bookings.map((b) => b.id) } } });
  return { itinerary_id: bookings[0]!.itineraryId, status: 'cancelled', cancel_refund: refundOf(after, ctx.deps.clock()) };
}

/** `cancel_refund` of rooms: what cancelling now gives back, or what a cancellation gave back. */
function refundOf(bookings: Booking[], now: Date): V2CancelRefund {
  let refund = 0n;
  let penalty = 0n;
  for (const b of bookings) {
    if (b.status === 'cancelled' && b.refundAmount !== null && b.cancellationFee !== null) {
      refund += b.refundAmount;
      penalty += b.cancellationFee;
    } else if (b.status === 'pending' || b.status === 'confirmed') {
      const charges = chargesOf(b, now);
      refund += charges.refund;
      penalty += charges.fee;
    } else {
      penalty += b.totalAmount;
    }
  }
  return { refundable: refund > 0n, refund_amount: amountToNumber(refund), penalty_amount: amountToNumber(penalty), currency: bookings[0]?.currency ?? 'KRW' };
}

/** One status for the itinerary: the rooms' when they agree; else pending before confirmed, then the first room's. */
function itineraryStatus(bookings: Booking[]): string {
  const statuses = new Set(bookings.map((b) => b.status));
  if (statuses.size === 1) return bookings[0]!.status;
  if (statuses.has('pending')) return 'pending';
  if (statuses.has('confirmed')) return 'confirmed';
  return bookings[0]!.status;
}
