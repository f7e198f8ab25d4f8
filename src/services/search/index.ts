/**
 * Search (docs/spec/channel-api.md §4.4): the public face of the module. Field rules and stay normalisation
 * (rules.ts), paging, cancellation policy deadlines and charges, one property's offers and rates
 * (offers.ts), multi-property availability (availability.ts) over the provider's answers kept a few
 * seconds (availabilityCache.ts, results.ts), price check and batch rates.
 */
export {
  MAX_AMENITY_FILTER,
  MAX_ROOMS,
  PRICE_CHECK_TTL_SECONDS,
  SNAKE_NAMES,
  SORTS,
  normalizeAmenities,
  normalizeStay,
  parseOccupancies,
  partySize,
  searchRules,
} from './rules.js';
export type { FieldNames, Stay } from './rules.js';
export { pageOf } from './paging.js';
export type { Page, PositionalList } from './paging.js';
export {
  CHECKIN_HOUR,
  PENALTY_PERCENT,
  cancellationCharges,
  checkinInstant,
  freeCancellationBefore,
} from './cancellation.js';
export type { CancellationCharges } from './cancellation.js';
export { inclusive, localDate, offerOf, pricingOf, propertyAvailability, searchRates } from './offers.js';
export type { NightLine, Pricing, PropertyOffers, RateOffer, RoomOffers } from './offers.js';
export { searchAll, searchAvailability } from './availability.js';
export type { SearchContext } from './availability.js';
export type { SearchItem, SearchResults } from './results.js';
export { AvailabilityCache } from './availabilityCache.js';
export type { AvailabilityCacheStats } from './availabilityCache.js';
export { BOOK_TOKEN_TTL_SECONDS, bookClaims, priceCheck, repriceOffer } from './priceCheck.js';
export type { PriceCheckResult } from './priceCheck.js';
export { BATCH_RATES_MAX_ITEMS, batchRates, itemFieldNames, readBatchItems } from './batchRates.js';
export type { BatchRatesItemInput, BatchRatesResult } from './batchRates.js';
