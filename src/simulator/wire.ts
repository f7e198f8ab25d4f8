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
  UpstreamAmenity,
  UpstreamImage,
  UpstreamProperty,
  UpstreamRate,
} from '../upstream/protocol.js';
import type { Amenity, Dataset, Image, Night, Property } from './dataset.js';
import { imageLinks } from './content.js';
import { inclusiveTotal, type QuoteView, type RateRef, roomFits, type SimulatorState, stayOf } from './state.js';
import { decodeCursor, encodeCursor, invalid, listQuerySchema, notFound, occupancy } from './requests.js';

/** The simulator's wire shapes and route logic (src/simulator/server.ts wires the routes). */

// ---------------------------------------------------------------------------------------------
// Wire shapes

/** An amenity as the wire spells it (names are the shared table's objects: copy nothing). */
function wireAmenity(a: Amenity): UpstreamAmenity {
  return { code: a.code, group: a.group, name: a.name };
}

/** An image with one link per size of IMAGE_SIZES at the simulator's image route. */
export function wireImage(propertyId: number, image: Image): UpstreamImage {
  return { id: image.id, category: image.category, hero: image.hero, caption: image.caption, links: imageLinks(propertyId, image.id) };
}

/** The property's hero image, or null when it has none. */
export function heroImageOf(p: Property): UpstreamImage | null {
  const hero = p.images.find((i) => i.hero);
  return hero ? wireImage(p.id, hero) : null;
}

export function wireProperty(p: Property, withRooms: boolean): UpstreamProperty {
  const d = p.descriptions;
  const checkin = p.checkin;
  const policies = p.policies;
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
    descriptions: { headline: d.headline, general: d.general, location: d.location, rooms: d.rooms, dining: d.dining, amenities: d.amenities },
    amenities: p.amenities.map(wireAmenity),
    images: p.images.map((i) => wireImage(p.id, i)),
    checkin: { begin_time: checkin.beginTime, end_time: checkin.endTime, min_age: checkin.minAge, instructions: checkin.instructions },
    checkout: { time: p.checkout.time },
    policies: { children: policies.children, pets: policies.pets, extra_beds: policies.extraBeds, know_before_you_go: policies.knowBeforeYouGo },
    phone: p.phone,
    chain: p.chain && { id: p.chain.id, name: p.chain.name },
    brand: p.brand && { id: p.brand.id, name: p.brand.name },
    spoken_languages: [...p.spokenLanguages],
    review: p.review && { score: p.review.score, count: p.review.count },
  };
  if (withRooms) {
    property.room_types = p.roomTypes.map((r) => ({
      id: r.id,
      property_id: r.propertyId,
      name: r.name,
      max_occupancy: r.maxOccupancy,
      occupancy: {
        max_total: r.occupancy.maxTotal,
        max_adults: r.occupancy.maxAdults,
        max_children: r.occupancy.maxChildren,
        age_categories: r.occupancy.ageCategories.map((a) => ({ category: a.category, min_age: a.minAge, max_age: a.maxAge })),
      },
      bed_groups: r.bedGroups.map((b) => ({ id: b.id, description: b.description })),
      descriptions: { overview: r.descriptions.overview },
      area_sqm: r.areaSqm,
      views: [...r.views],
      amenities: r.amenities.map(wireAmenity),
      images: r.images.map((i) => wireImage(p.id, i)),
      rate_plans: r.ratePlans.map((rp) => ({
        id: rp.id,
        roomtype_id: rp.roomtypeId,
        name: rp.name,
        meal_plan: rp.mealPlan,
        refundable: rp.refundable,
        cancellation_policy: rp.cancellationPolicy,
        amenities: rp.amenities.map(wireAmenity),
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
  const amenities = request.amenities?.length ? request.amenities : undefined;
  const wanted = (p: Property) =>
    (city === undefined || p.city.toLowerCase() === city) &&
    (request.star_rating_min === undefined || p.starRating >= request.star_rating_min) &&
    (amenities === undefined || amenities.every((code) => p.amenities.some((a) => a.code === code)));
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
    hero_image: heroImageOf(property),
    amenity_codes: property.amenities.map((a) => a.code),
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
