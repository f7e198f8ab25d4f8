import { createHash } from 'node:crypto';
import { z } from 'zod';
import { offerClaims } from '../access/index.js';

/**
 * v2 identifiers and link-token claims (docs/spec/channel-api.md §2.9, §4.6, docs/spec/DECISIONS.md "v2 details"). Room and
 * rate ids are opaque: a hash of what they stand for, stable across searches, so a path taken
 * from step 1 can be compared with the context signed into a link token (403 FORBIDDEN when it
 * differs). They are not secrets; the token's signature is what cannot be forged.
 */

function opaque(kind: string, ...parts: (string | number)[]): string {
  return createHash('sha256').update([kind, ...parts].join('\u0000')).digest('base64url').slice(0, 22);
}

/** The v2 id of a property's room type. */
export function v2RoomId(propertyId: number, roomtypeId: string): string {
  return opaque('room', propertyId, roomtypeId);
}

/** The v2 id of a rate plan of a room type. */
export function v2RateId(propertyId: number, roomtypeId: string, rateplanId: string): string {
  return opaque('rate', propertyId, roomtypeId, rateplanId);
}

/**
 * What a v2 price-check link token and a v2 book token carry: the v1 offer (property, room type,
 * rate plan, dates, every room's occupancy, currency, KRW totals for all rooms, and, in a book
 * token, the cancellation policy) plus the v2 path context and the chosen bed group.
 */
export const v2OfferClaims = offerClaims.extend({
  room_id: z.string(),
  rate_id: z.string(),
  bed_group_id: z.string(),
});
export type V2OfferClaims = z.infer<typeof v2OfferClaims>;

/** v2 retrieve and cancel link tokens: the itinerary they stand for. */
export const v2ItineraryClaims = z.object({ channel_id: z.string(), itinerary_id: z.string() });
export type V2ItineraryClaims = z.infer<typeof v2ItineraryClaims>;
