import { z } from 'zod';
import type {
  AvailabilityRequest,
  AvailabilityResponse,
  BookRequest,
  PriceCheckRequest,
  PriceCheckResponse,
  PropertyAvailability,
  PropertyPage,
  RoomOccupancy,
  UpstreamProperty,
  UpstreamRate,
} from '../upstream/protocol.js';
import type { Dataset, Night, Property } from './dataset.js';
import { inclusiveTotal, type QuoteView, type RateRef, roomFits, type SimulatorState, stayOf } from './state.js';
import { decodeCursor, encodeCursor, invalid, listQuerySchema, notFound, occupancy } from './requests.js';

/** The simulator's wire shapes and route logic (src/simulator/server.ts wires the routes). */

// ---------------------------------------------------------------------------------------------
// Wire shapes

export function wireProperty(p: Property, withRooms: boolean): UpstreamProperty {
  const property: UpstreamProperty = {
    id: p.id,
    name: p.name,
    city: p.city,
    country: p.country,
    address: p.address,
    star_rating: p.starRating,
    latitude: p.latitude,
    longitude: p.longitude,
    timezone: p.timezone,
    updated_at: p.updatedAt.toISOString(),
  };
  if (withRooms) {
    property.room_types = p.roomTypes.map((r) => ({
      id: r.id,
      property_id: r.propertyId,
      name: r.name,
      max_occupancy: r.maxOccupancy,
      bed_groups: r.bedGroups.map((b) => ({ ...b })),
      rate_plans: r.ratePlans.map((rp) => ({
        id: rp.id,
        roomtype_id: rp.roomtypeId,
        name: rp.name,
        meal_plan: rp.mealPlan,
        refundable: rp.refundable,
        cancellation_policy: rp.cancellationPolicy,
      })),
    }));
  }
  return property;
}

// ---------------------------------------------------------------------------------------------
// Route logic

export function listProperties(dataset: Dataset, query: z.infer<typeof listQuerySchema>): PropertyPage {
  const since = query.updated_since ? Date.parse(query.updated_since) : undefined;
  const matches = (p: Property) => since === undefined || p.updatedAt.getTime() > since;
  const withRooms = query.include === 'rooms';
  const properties: UpstreamProperty[] = [];
  let id = query.cursor ? decodeCursor(query.cursor) + 1 : 1;
  // Scan in id order, computing each property once and keeping no more than a page.
  for (; id <= dataset.size && properties.length < query.limit; id++) {
    const property = dataset.scanProperty(id)!;
    if (matches(property)) properties.push(wireProperty(property, withRooms));
  }
  // Look ahead for one more match, so the last page says so instead of a further empty page.
  let more = false;
  for (; id <= dataset.size && !more; id++) more = matches(dataset.scanProperty(id)!);
  const last = properties.at(-1);
  return { properties, next_cursor: more && last ? encodeCursor(last.id) : null };
}

export function availability(state: SimulatorState, request: AvailabilityRequest, view: QuoteView): AvailabilityResponse {
  const dataset = state.dataset;
  const nights = stayOf(request.checkin, request.checkout);
  const city = request.city?.toLowerCase();
  const wanted = (p: Property) =>
    (city === undefined || p.city.toLowerCase() === city) && (request.star_rating_min === undefined || p.starRating >= request.star_rating_min);
  const results: PropertyAvailability[] = [];
  for (const id of propertyIds(dataset, request.property_ids)) {
    const property = request.property_ids ? dataset.property(id) : dataset.scanProperty(id);
    if (property && wanted(property)) results.push(propertyAvailability(state, property, nights, request, view));
  }
  return { results };
}

/** The asked ids once each in the asked order, or every id in order, without building a list. */
function* propertyIds(dataset: Dataset, asked: number[] | undefined): Iterable<number> {
  if (asked) {
    yield* new Set(asked);
    return;
  }
  for (let id = 1; id <= dataset.size; id++) yield id;
}

function propertyAvailability(
  state: SimulatorState,
  property: Property,
  nights: readonly Night[],
  request: { occupancy: RoomOccupancy[]; detail: 'lowest' | 'rates' },
  view: QuoteView,
): PropertyAvailability {
  const rooms = request.occupancy.length;
  const fitting = property.roomTypes.filter((room) => roomFits(room, request.occupancy));
  let available: boolean;
  let rates: UpstreamRate[];
  if (request.detail === 'rates') {
    rates = fitting.flatMap((room) => state.quoteRoom(room, nights, rooms, view));
    available = rates.some((r) => r.available_rooms >= rooms);
  } else {
    // Only the cheapest bookable rate is shown, so only that one is built.
    const lowest = state.lowestQuote(fitting, nights, rooms, view);
    available = lowest !== undefined;
    rates = lowest ? [lowest] : [];
  }
  return {
    property_id: property.id,
    name: property.name,
    city: property.city,
    star_rating: property.starRating,
    available,
    rates,
  };
}

/** The rate a price check or booking names: 404 when unknown, 400 when the party does not fit. */
export function locateRate(state: SimulatorState, request: PriceCheckRequest | BookRequest): RateRef {
  const ref = state.findRate(request.property_id, request.roomtype_id, request.rateplan_id);
  if (!ref) throw notFound(`no rate plan ${request.rateplan_id} of room type ${request.roomtype_id} at property ${request.property_id}`);
  if (!roomFits(ref.room, request.occupancy)) {
    throw invalid(`occupancy: room type ${ref.room.id} sleeps at most ${ref.room.maxOccupancy} per room`);
  }
  return ref;
}

export function priceCheck(rate: UpstreamRate, request: PriceCheckRequest): PriceCheckResponse {
  if (rate.available_rooms < request.occupancy.length) return { status: 'sold_out', rate: null };
  return { status: inclusiveTotal(rate) === request.expected_total ? 'matched' : 'price_changed', rate };
}
