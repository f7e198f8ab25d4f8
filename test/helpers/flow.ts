import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { apiKey, type TestService } from './service.js';

/**
 * The v1 booking flow for tests: availability → price check → book_token, and the calls that
 * follow. Dates are relative to today so the suite never ages.
 */

export const day = (n: number, from = Date.now()) => new Date(from + n * 86_400_000).toISOString().slice(0, 10);

export interface Offer {
  propertyId: number;
  roomtypeId: string;
  rateplanId: string;
  cancellationPolicy: 'flexible' | 'moderate' | 'strict' | 'non_refundable';
  priceCheckToken: string;
  bookToken: string;
  /** KRW, what the booking will charge. */
  amount: number;
  checkin: string;
  checkout: string;
}

export interface OfferQuery {
  /** First property id to try; the next ones are tried until one has a bookable rate. */
  from?: number;
  checkin?: string;
  checkout?: string;
  adults?: number;
  policy?: Offer['cancellationPolicy'];
  /** Extra query string, e.g. '&currency=USD'. */
  query?: string;
}

export function v1(t: TestService, who: IssuedCredentials) {
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.request(`/channel/v1${path}`, {
      method,
      headers: { ...apiKey(who), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  /** A fresh book_token for a bookable rate (of `policy`, when given). */
  async function offer(q: OfferQuery = {}, headers: Record<string, string> = {}): Promise<Offer> {
    const checkin = q.checkin ?? day(40);
    const checkout = q.checkout ?? day(42);
    const start = q.from ?? 1;
    for (let propertyId = start; propertyId < start + 60; propertyId++) {
      const res = await call('GET', `/search/availability/${propertyId}?checkin=${checkin}&checkout=${checkout}&adults=${q.adults ?? 2}${q.query ?? ''}`);
      if (res.status !== 200) continue;
      const { data } = await res.json();
      for (const room of data.room_types) {
        // Only the chosen (first) rate plan of each room type carries a token; ask for each plan.
        for (const rate of room.rates) {
          if (q.policy && rate.cancellation_policy.type !== q.policy) continue;
          if (rate.available_rooms < 1) continue;
          let token = rate.price_check_token as string | null;
          if (!token) {
            const again = await call(
              'GET',
              `/search/availability/${propertyId}?checkin=${checkin}&checkout=${checkout}&adults=${q.adults ?? 2}${q.query ?? ''}&roomtype_id=${room.roomtype_id}&rateplan_id=${rate.rateplan_id}`,
            );
            const picked = (await again.json()).data.room_types
              .find((r: { roomtype_id: string }) => r.roomtype_id === room.roomtype_id)
              ?.rates.find((r: { rateplan_id: string }) => r.rateplan_id === rate.rateplan_id);
            token = picked?.price_check_token ?? null;
          }
          if (!token) continue;
          const checked = await call('GET', `/search/price-check?token=${encodeURIComponent(token)}`, undefined, headers);
          const result = (await checked.json()).data;
          if (!result?.book_token) continue;
          return {
            propertyId,
            roomtypeId: room.roomtype_id,
            rateplanId: rate.rateplan_id,
            cancellationPolicy: rate.cancellation_policy.type,
            priceCheckToken: token,
            bookToken: result.book_token,
            amount: result.pricing.billable_totals.inclusive_amount,
            checkin,
            checkout,
          };
        }
      }
    }
    throw new Error(`no bookable rate from property ${start}${q.policy ? ` with policy ${q.policy}` : ''}`);
  }

  return {
    call,
    offer,
    book: (body: Record<string, unknown>, headers: Record<string, string> = {}) => call('POST', '/bookings', body, headers),
    get: (id: string) => call('GET', `/bookings/${id}`),
    cancel: (id: string, headers: Record<string, string> = {}) => call('PUT', `/bookings/${id}/cancel`, undefined, headers),
  };
}

/** A rate found by REST availability search (findRate). */
export interface FoundRate {
  propertyId: number;
  roomtypeId: string;
  rateplanId: string;
  policy: string;
  availableRooms: number;
  /** KRW, one room for the stay. */
  amount: number;
  checkin: string;
  checkout: string;
}

/** A rate with at least `minRooms` rooms free for the stay (of `policy`, when given), as REST finds it. */
export async function findRate(
  t: TestService,
  who: IssuedCredentials,
  q: { from: number; checkin: string; checkout: string; minRooms?: number; policy?: string },
): Promise<FoundRate> {
  const call = v1(t, who).call;
  for (let propertyId = q.from; propertyId < q.from + 60; propertyId++) {
    const res = await call('GET', `/search/availability/${propertyId}?checkin=${q.checkin}&checkout=${q.checkout}&adults=2`);
    if (res.status !== 200) continue;
    for (const room of (await res.json()).data.room_types) {
      for (const rate of room.rates) {
        if (q.policy && rate.cancellation_policy.type !== q.policy) continue;
        if (rate.available_rooms < (q.minRooms ?? 1)) continue;
        return {
          propertyId,
          roomtypeId: room.roomtype_id,
          rateplanId: rate.rateplan_id,
          policy: rate.cancellation_policy.type,
          availableRooms: rate.available_rooms,
          amount: rate.pricing.billable_totals.inclusive_amount,
          checkin: q.checkin,
          checkout: q.checkout,
        };
      }
    }
  }
  throw new Error(`no rate with ${q.minRooms ?? 1} rooms from property ${q.from}`);
}
