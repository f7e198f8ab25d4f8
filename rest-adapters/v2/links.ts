import type { StepLink, V2Itinerary, V2PriceCheckResult, V2PropertyAvailability, V2Retrieved } from '../../src/services/itineraries/index.js';

/**
 * v2 links on the wire (docs/spec/channel-api.md §2.9): the services return the step a link leads to and its signed
 * token (StepLink); here they become `{ method, href, expires }`, `href` relative and carrying the
 * token. Every other field of the v2 answers is passed through as the service shaped it.
 */

export const V2_BASE = '/api/channel/v2';

/** docs/spec/channel-api.md §2.9: a link to the next step; `href` is relative and carries its token. */
export interface Link {
  method: 'GET' | 'POST' | 'PUT';
  href: string;
  /** ISO 8601; absent on links that do not expire (retrieve). */
  expires?: string;
}

function route(to: StepLink): { method: Link['method']; path: string } {
  switch (to.step) {
    case 'price_check':
      return { method: 'GET', path: `/properties/${to.propertyId}/rooms/${to.roomId}/rates/${to.rateId}` };
    case 'book':
      return { method: 'POST', path: '/bookings' };
    case 'retrieve':
      return { method: 'GET', path: '/bookings/retrieve' };
    case 'cancel':
      return { method: 'PUT', path: '/bookings/cancel' };
  }
}

export function link(to: StepLink): Link {
  const { method, path } = route(to);
  return {
    method,
    href: `${V2_BASE}${path}?token=${encodeURIComponent(to.token)}`,
    ...(to.expires && { expires: to.expires.toISOString() }),
  };
}

/** Step 1 on the wire: each bed group's price-check link spelled. */
export function availabilityWire(answer: V2PropertyAvailability[]) {
  return answer.map((property) => ({
    ...property,
    rooms: property.rooms.map((room) => ({
      ...room,
      rates: room.rates.map((rate) => ({
        ...rate,
        bed_groups: Object.fromEntries(
          Object.entries(rate.bed_groups).map(([id, bed]) => [
            id,
            { ...bed, links: bed.links.price_check ? { price_check: link(bed.links.price_check) } : {} },
          ]),
        ),
      })),
    })),
  }));
}

/** Step 2 on the wire: the book link spelled (none when sold out). */
export function priceCheckWire(result: V2PriceCheckResult) {
  if (result.status === 'sold_out') return result;
  return { ...result, links: { book: link(result.links.book) } };
}

/** Step 3 on the wire: the retrieve link and, while a room can be cancelled, the cancel link. */
export function itineraryWire(itinerary: V2Itinerary) {
  const { retrieve, cancel } = itinerary.links;
  return { itinerary_id: itinerary.itineraryId, links: { retrieve: link(retrieve), ...(cancel && { cancel: link(cancel) }) } };
}

/** Step 4a on the wire: the cancel link spelled, while there is one. */
export function retrievedWire(retrieved: V2Retrieved) {
  return { ...retrieved, links: retrieved.links.cancel ? { cancel: link(retrieved.links.cancel) } : {} };
}
