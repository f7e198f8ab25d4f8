/**
 * Catalog: the public face of the module. Property content as the service models it
 * (properties.ts), the content cache and its per-request loaders (catalog.ts), and the property
 * listing with its page tokens (listing.ts), and the images of the public image route with their
 * cache (images.ts).
 */
export { advertisedImage, findRoomType, getProperty, heroImage, imageHref, imagePath, ratePlansOf } from './properties.js';
export type {
  AgeCategory,
  Amenity,
  BedGroup,
  Image,
  ImageLink,
  Occupancy,
  PropertyDescriptions,
  CancellationPolicyType,
  MealPlan,
  Property,
  PropertySummary,
  RatePlan,
  RoomType,
} from './properties.js';
export { PropertyCatalog, createLoaders, toImage } from './catalog.js';
export { IMAGE_TTL_MS, ImageCache, imageBytes } from './images.js';
export { DOWNLOAD_RETRY_AFTER_SECONDS, DownloadSlots, type DownloadSlot } from './downloads.js';
export type { ImageCacheStats, ServedImage } from './images.js';
export type { Loaders } from './catalog.js';
export { PAGE_TOKEN_TTL_SECONDS, listProperties, propertyWindow } from './listing.js';
export type { CatalogWindow } from './listing.js';
