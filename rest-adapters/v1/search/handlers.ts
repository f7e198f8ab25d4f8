import { priceCheck, propertyAvailability, searchAvailability, searchRates } from '../../../src/services/search/index.js';
import { ok } from '../../envelope.js';
import { servedIn } from '../../language.js';
import { wireOptions } from '../../wire/properties.js';
import type { AppRouteHandler } from '../../env.js';
import type { multiRoute, priceCheckRoute, ratesRoute, singleRoute } from './routes.js';
import { contextToWire, offersToWire, paginationToWire, priceCheckToWire, searchItemToWire } from './wire.js';

/** v1 search handlers (docs/spec/channel-api.md §4.4): parse, call the search service, map to the wire. */

export const multi: AppRouteHandler<typeof multiRoute> = async (c) => {
  const q = c.req.valid('query');
  const { context, page } = await searchAvailability(c.get('ctx'), {
    checkin: q.checkin,
    checkout: q.checkout,
    adults: q.adults,
    occupancy: q.occupancy,
    children: q.children,
    rooms: q.rooms,
    currency: q.currency,
    propertyIds: q.property_id,
    city: q.city,
    starRatingMin: q.star_rating_min,
    amenities: q.amenities,
    priceMin: q.price_min,
    priceMax: q.price_max,
    sortBy: q.sort_by,
    page: q.page,
    perPage: q.per_page,
  });
  // Captions in the request's language (Accept-Language; servedIn), links on the service's origin.
  const options = wireOptions(c);
  const items = page.items.map((i) => searchItemToWire(i, options));
  return ok(c, items, 200, { search_context: contextToWire(context), pagination: paginationToWire(page) });
};

export const single: AppRouteHandler<typeof singleRoute> = async (c) => {
  const q = c.req.valid('query');
  const offers = await propertyAvailability(c.get('ctx'), {
    propertyId: c.req.valid('param').propertyId,
    checkin: q.checkin,
    checkout: q.checkout,
    adults: q.adults,
    children: q.children,
    childrenAges: q.children_ages,
    rooms: q.rooms,
    currency: q.currency,
    roomtypeId: q.roomtype_id,
    rateplanId: q.rateplan_id,
  });
  // Room and rate plan names were read in ctx.language (offers.ts).
  servedIn(c);
  return ok(c, offersToWire(offers));
};

export const check: AppRouteHandler<typeof priceCheckRoute> = async (c) =>
  ok(c, priceCheckToWire(await priceCheck(c.get('ctx'), c.req.valid('query').token)));

export const rates: AppRouteHandler<typeof ratesRoute> = async (c) => {
  const q = c.req.valid('query');
  const offers = await searchRates(c.get('ctx'), {
    propertyId: q.property_id,
    checkin: q.checkin,
    checkout: q.checkout,
    adults: q.adults,
    currency: q.currency,
  });
  servedIn(c);
  return ok(c, offersToWire(offers));
};
