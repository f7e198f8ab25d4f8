/**
 * The simulator's mutable side: rooms taken by bookings made against it, bookings by reference,
 * and price moves (volatility). The dataset is immutable and computed on demand; everything here
 * is layered on top of it, so a reset returns the simulator to the pure dataset.
 */

import type { NightPrice, RoomOccupancy, UpstreamBooking, UpstreamBookingStatus, UpstreamRate } from '../upstream/protocol.js';
import { type Dataset, hash, type Night, nightOf, priceOn, type Property, prng, type RatePlan, type RoomType, taxAndFees } from './dataset.js';

/** One rate plan located in the dataset: the property, its room type and the plan. */
export interface RateRef {
  property: Property;
  room: RoomType;
  plan: RatePlan;
}

/** How a quote is bent by a sandbox scenario; neither bend is stored. */
export interface QuoteView {
  /** Every rate shows no free rooms. */
  soldOut?: boolean;
  /** Every night's base price is raised by this many percent (rounded to 100 KRW). */
  raisePercent?: number;
}

/** A booking's stay and party, as stored with it so cancelling can give the rooms back. */
interface StoredBooking {
  booking: UpstreamBooking;
  nights: string[];
  /** Date changes applied, oldest first, each with the stay it replaced (so an abort can undo it). */
  changes?: AppliedChange[];
  /** Change ids aborted: refused for ever, so a late duplicate of the request cannot apply. */
  aborted?: Set<string>;
}

interface AppliedChange {
  id: string;
  before: Pick<UpstreamBooking, 'checkin' | 'checkout' | 'total'>;
}

/** Statuses in which a booking's dates may still change (the guest has not arrived). */
const CHANGEABLE: ReadonlySet<UpstreamBookingStatus> = new Set(['confirmed', 'pending']);

/** What a date change request comes to; the server turns refusals into 404/409 answers. */
export type ChangeOutcome =
  | { ok: true; booking: UpstreamBooking }
  | { ok: false; reason: 'not_found' | 'not_modifiable' | 'aborted' | 'sold_out' | 'price_mismatch'; detail: string };

/** Statuses in which a booking occupies its rooms; the others (cancelled, failed) hold none. */
const HOLDS_STOCK: ReadonlySet<UpstreamBookingStatus> = new Set(['confirmed', 'pending', 'checked_in', 'checked_out', 'no_show']);

const MS_PER_DAY = 86_400_000;

/** The nights of a stay: checkin up to the day before checkout, as YYYY-MM-DD. */
export function nightsOf(checkin: string, checkout: string): string[] {
  const nights: string[] = [];
  const end = Date.parse(`${checkout}T00:00:00Z`);
  for (let t = Date.parse(`${checkin}T00:00:00Z`); t < end; t += MS_PER_DAY) {
    nights.push(new Date(t).toISOString().slice(0, 10));
  }
  return nights;
}

/** The nights of a stay with their price factors, parsed once for every rate quoted for it. */
export function stayOf(checkin: string, checkout: string): Night[] {
  return nightsOf(checkin, checkout).map(nightOf);
}

/** True when every room of the party fits the room type (adults and children all count). */
export function roomFits(room: RoomType, occupancy: readonly RoomOccupancy[]): boolean {
  return occupancy.every((o) => o.adults + o.children_ages.length <= room.maxOccupancy);
}

export function inclusiveTotal(rate: Pick<UpstreamRate, 'total_base' | 'total_tax_and_fees'>): number {
  return rate.total_base + rate.total_tax_and_fees;
}

/** Prices are quoted in whole hundreds of KRW, as the dataset does. */
function roundTo100(krw: number): number {
  return Math.round(krw / 100) * 100;
}

const CONFIRMATION_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export class SimulatorState {
  /** Rooms taken by bookings, by `roomtype_id|night`. */
  private readonly consumed = new Map<string, number>();
  /** Moved nightly base prices, by `rateplan_id|night`; they replace the dataset's price. */
  private readonly priceOverrides = new Map<string, number>();
  private readonly bookings = new Map<string, StoredBooking>();
  private volatilityRandom: () => number;

  constructor(
    readonly dataset: Dataset,
    /** Probability (0..1) that a price check first moves the rate's price. */
    private readonly volatility: number,
  ) {
    if (!(volatility >= 0 && volatility <= 1)) throw new RangeError('volatility must be 0 to 1');
    this.volatilityRandom = this.newVolatilityRandom();
  }

  /** Forgets bookings, taken rooms and price moves; the volatility sequence starts over. */
  reset(): void {
    this.consumed.clear();
    this.priceOverrides.clear();
    this.bookings.clear();
    this.volatilityRandom = this.newVolatilityRandom();
  }

  /** Finds a rate plan, checking that the room belongs to the property and the plan to the room. */
  findRate(propertyId: number, roomtypeId: string, rateplanId: string): RateRef | undefined {
    const property = this.dataset.property(propertyId);
    const room = property?.roomTypes.find((r) => r.id === roomtypeId);
    const plan = room?.ratePlans.find((p) => p.id === rateplanId);
    return property && room && plan ? { property, room, plan } : undefined;
  }

  /** Rooms of a type still free on a night: the dataset's stock less what bookings here took. */
  freeRooms(room: RoomType, night: string): number {
    return Math.max(0, this.dataset.baseStock(room, night) - (this.consumed.get(`${room.id}|${night}`) ?? 0));
  }

  /** Nightly base price of a plan, after any price move. */
  nightlyBase(room: RoomType, plan: RatePlan, night: string): number {
    return this.priceOverrides.get(`${plan.id}|${night}`) ?? this.dataset.nightlyPrice(room, plan, night);
  }

  /** Prices a rate for a stay and a number of rooms, as the wire shows it. */
  quote(room: RoomType, plan: RatePlan, nights: readonly Night[], rooms: number, view: QuoteView = {}): UpstreamRate {
    const available = this.stayStock(room, nights, view);
    return this.rate(room, plan, nights, rooms, available, this.planBases(room, plan, nights, this.dataset.stayJitter(room, nights), view));
  }

  /** Every plan of a room type; the stock and the nights' price jitter, shared by the plans, are computed once. */
  quoteRoom(room: RoomType, nights: readonly Night[], rooms: number, view: QuoteView = {}): UpstreamRate[] {
    const available = this.stayStock(room, nights, view);
    const jitter = this.dataset.stayJitter(room, nights);
    return room.ratePlans.map((plan) => this.rate(room, plan, nights, rooms, available, this.planBases(room, plan, nights, jitter, view)));
  }

  /**
   * The bookable rate (free rooms for every room asked) with the lowest inclusive total among
   * every plan of these room types, the first of equals in room then plan order: the same rate as
   * quoting them all with quoteRoom and keeping the cheapest bookable one, without building the
   * others. Undefined when none is bookable.
   */
  lowestQuote(roomTypes: readonly RoomType[], nights: readonly Night[], rooms: number, view: QuoteView = {}): UpstreamRate | undefined {
    let best: { room: RoomType; plan: RatePlan; available: number; bases: number[] } | undefined;
    let bestTotal = 0;
    for (const room of roomTypes) {
      const available = this.stayStock(room, nights, view);
      if (available < rooms) continue;
      const jitter = this.dataset.stayJitter(room, nights);
      for (const plan of room.ratePlans) {
        const bases = this.planBases(room, plan, nights, jitter, view);
        let base = 0;
        let tax = 0;
        for (const b of bases) {
          base += b;
          tax += taxAndFees(b);
        }
        const total = base * rooms + tax * rooms;
        if (!best || total < bestTotal) {
          best = { room, plan, available, bases };
          bestTotal = total;
        }
      }
    }
    return best && this.rate(best.room, best.plan, nights, rooms, best.available, best.bases);
  }

  /** Rooms free on every night of the stay. */
  private stayStock(room: RoomType, nights: readonly Night[], view: QuoteView): number {
    if (view.soldOut) return 0;
    const stock = this.dataset.stayStock(room, nights);
    let free = Infinity;
    for (let i = 0; i < nights.length; i++) {
      let left = stock[i]!;
      // Building the key costs more than the rest: skip it while no booking holds rooms.
      if (this.consumed.size > 0) left = Math.max(0, left - (this.consumed.get(`${room.id}|${nights[i]!.date}`) ?? 0));
      if (left < free) free = left;
    }
    return free;
  }

  /** A plan's nightly base prices over the stay, after price moves and a scenario's raise. */
  private planBases(room: RoomType, plan: RatePlan, nights: readonly Night[], jitter: readonly number[], view: QuoteView): number[] {
    const bases: number[] = new Array<number>(nights.length);
    const moved = this.priceOverrides.size > 0;
    for (let i = 0; i < nights.length; i++) {
      const night = nights[i]!;
      let base = (moved ? this.priceOverrides.get(`${plan.id}|${night.date}`) : undefined) ?? priceOn(room, plan, night, jitter[i]!);
      if (view.raisePercent) base = roundTo100(base * (1 + view.raisePercent / 100));
      bases[i] = base;
    }
    return bases;
  }

  private rate(room: RoomType, plan: RatePlan, nights: readonly Night[], rooms: number, available: number, bases: readonly number[]): UpstreamRate {
    const priced: NightPrice[] = new Array<NightPrice>(nights.length);
    let totalBase = 0;
    let totalTax = 0;
    for (let i = 0; i < nights.length; i++) {
      const base = bases[i]!;
      const tax = taxAndFees(base);
      priced[i] = { date: nights[i]!.date, base, tax_and_fees: tax };
      totalBase += base;
      totalTax += tax;
    }
    return {
      rateplan_id: plan.id,
      roomtype_id: room.id,
      available_rooms: available,
      nights: priced,
      total_base: totalBase * rooms,
      total_tax_and_fees: totalTax * rooms,
    };
  }

  /**
   * With probability `volatility`, moves the plan's price on these nights by 3 to 8 % up or down,
   * persistently, as a real provider's prices drift between search and booking. The sequence is
   * seeded, so a run with the same seed and the same calls moves the same prices.
   */
  maybeMovePrice(room: RoomType, plan: RatePlan, nights: readonly Night[]): boolean {
    const random = this.volatilityRandom;
    if (!(random() < this.volatility)) return false;
    const sign = random() < 0.5 ? -1 : 1;
    const percent = 3 + random() * 5;
    for (const { date: night } of nights) {
      const moved = roundTo100(this.nightlyBase(room, plan, night) * (1 + (sign * percent) / 100));
      this.priceOverrides.set(`${plan.id}|${night}`, Math.max(100, moved));
    }
    return true;
  }

  booking(reference: string): UpstreamBooking | undefined {
    return this.bookings.get(reference)?.booking;
  }

  /** Stores a new booking; its rooms are taken when its status holds stock. */
  addBooking(booking: UpstreamBooking): UpstreamBooking {
    const stored = { booking, nights: nightsOf(booking.checkin, booking.checkout) };
    this.bookings.set(booking.reference, stored);
    if (HOLDS_STOCK.has(booking.status)) this.take(stored, booking.rooms);
    return booking;
  }

  /**
   * Moves a booking to a status, taking or giving back its rooms when the move crosses between
   * holding statuses and the others (cancelled, failed), so stock is released exactly once.
   */
  setStatus(reference: string, status: UpstreamBookingStatus, at: Date): UpstreamBooking | undefined {
    const stored = this.bookings.get(reference);
    if (!stored) return undefined;
    const before = HOLDS_STOCK.has(stored.booking.status);
    const after = HOLDS_STOCK.has(status);
    if (before && !after) this.take(stored, -stored.booking.rooms);
    if (!before && after) this.take(stored, stored.booking.rooms);
    const cancelledAt = status === 'cancelled' ? (stored.booking.cancelled_at ?? at.toISOString()) : null;
    stored.booking = { ...stored.booking, status, cancelled_at: cancelledAt };
    return stored.booking;
  }

  /**
   * Prices new dates for a booking: its room type, rate plan and number of rooms, with the rooms
   * it holds counted as free (a booking moved by a night keeps its room on the nights it shares).
   * Undefined for an unknown reference or rate; `not_modifiable` once the guest has arrived.
   */
  changeQuote(reference: string, stay: { checkin: string; checkout: string }, view: QuoteView = {}): UpstreamRate | 'not_modifiable' | undefined {
    const stored = this.bookings.get(reference);
    if (!stored) return undefined;
    if (!CHANGEABLE.has(stored.booking.status)) return 'not_modifiable';
    const ref = this.findRate(stored.booking.property_id, stored.booking.roomtype_id, stored.booking.rateplan_id);
    if (!ref) return undefined;
    return this.withoutOwnRooms(stored, () => this.quote(ref.room, ref.plan, stayOf(stay.checkin, stay.checkout), stored.booking.rooms, view));
  }

  /**
   * Moves a booking to new dates at `total`: its rooms on the old nights are given back and taken
   * on the new ones, all or nothing. A change id that applied answers the booking as it is now.
   */
  modify(reference: string, change: { id: string; checkin: string; checkout: string; total: number }, view: QuoteView = {}): ChangeOutcome {
    const stored = this.bookings.get(reference);
    if (!stored) return { ok: false, reason: 'not_found', detail: `no booking ${reference}` };
    if (stored.changes?.some((c) => c.id === change.id)) return { ok: true, booking: stored.booking };
    if (stored.aborted?.has(change.id)) return { ok: false, reason: 'aborted', detail: `change ${change.id} was aborted` };
    const quote = this.changeQuote(reference, change, view);
    if (quote === 'not_modifiable') return { ok: false, reason: 'not_modifiable', detail: `a booking that is ${stored.booking.status} cannot change dates` };
    if (!quote) return { ok: false, reason: 'not_found', detail: `the rate of booking ${reference} is gone` };
    if (quote.available_rooms < stored.booking.rooms) {
      return { ok: false, reason: 'sold_out', detail: `only ${quote.available_rooms} room(s) of ${stored.booking.roomtype_id} left for the new stay` };
    }
    if (inclusiveTotal(quote) !== change.total) {
      return { ok: false, reason: 'price_mismatch', detail: `the new stay costs ${inclusiveTotal(quote)} KRW, not ${change.total}` };
    }
    const { checkin, checkout, total } = stored.booking;
    this.restay(stored, { checkin: change.checkin, checkout: change.checkout, total: change.total });
    (stored.changes ??= []).push({ id: change.id, before: { checkin, checkout, total } });
    return { ok: true, booking: stored.booking };
  }

  /**
   * Aborts a change: undone if it is the latest one applied (the old nights taken back without a
   * stock check: they were this booking's), and refused from now on either way.
   */
  abortModification(reference: string, changeId: string): UpstreamBooking | undefined {
    const stored = this.bookings.get(reference);
    if (!stored) return undefined;
    (stored.aborted ??= new Set()).add(changeId);
    const last = stored.changes?.at(-1);
    if (last?.id === changeId) {
      stored.changes!.pop();
      this.restay(stored, last.before);
    }
    return stored.booking;
  }

  /** Gives the booking's rooms back while `fn` runs (synchronously), then takes them again. */
  private withoutOwnRooms<T>(stored: StoredBooking, fn: () => T): T {
    const holds = HOLDS_STOCK.has(stored.booking.status);
    if (holds) this.take(stored, -stored.booking.rooms);
    try {
      return fn();
    } finally {
      if (holds) this.take(stored, stored.booking.rooms);
    }
  }

  /** Sets a booking's stay, moving the rooms it holds from the old nights to the new ones. */
  private restay(stored: StoredBooking, stay: Pick<UpstreamBooking, 'checkin' | 'checkout' | 'total'>): void {
    const holds = HOLDS_STOCK.has(stored.booking.status);
    if (holds) this.take(stored, -stored.booking.rooms);
    stored.booking = { ...stored.booking, ...stay };
    stored.nights = nightsOf(stay.checkin, stay.checkout);
    if (holds) this.take(stored, stored.booking.rooms);
  }

  /** A provider-style confirmation number, derived from the seed and the reference. */
  confirmationNumber(reference: string): string {
    const random = prng(hash(this.dataset.seed, 'confirmation', reference));
    let code = '';
    for (let i = 0; i < 8; i++) code += CONFIRMATION_ALPHABET[Math.floor(random() * CONFIRMATION_ALPHABET.length)];
    return `SIM-${code}`;
  }

  private take(stored: StoredBooking, rooms: number): void {
    const roomtypeId = stored.booking.roomtype_id;
    for (const night of stored.nights) {
      const key = `${roomtypeId}|${night}`;
      const taken = (this.consumed.get(key) ?? 0) + rooms;
      if (taken > 0) this.consumed.set(key, taken);
      else this.consumed.delete(key);
    }
  }

  private newVolatilityRandom(): () => number {
    return prng(hash(this.dataset.seed, 'volatility'));
  }
}
