/** The v2 link-chained booking flow (docs/spec/channel-api.md §4.6): offers, price check, book, retrieve, cancel. */
export { v2Availability, v2PriceCheck } from './offers.js';
export type {
  StepLink,
  V2AvailabilityInput,
  V2PriceCheckInput,
  V2PriceCheckResult,
  V2PropertyAvailability,
  V2Step,
} from './offers.js';
export { v2Cancel, v2CreateBooking, v2Retrieve } from './bookings.js';
export type { V2BookInput, V2Cancelled, V2Guest, V2Itinerary, V2Retrieved } from './bookings.js';
export { v2ItineraryClaims, v2OfferClaims } from './ids.js';
export type { V2ItineraryClaims, V2OfferClaims } from './ids.js';
