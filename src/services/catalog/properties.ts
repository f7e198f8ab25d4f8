import type { CancellationPolicyType, MealPlan } from '../../upstream/protocol.js';
import type { RequestContext } from '../../context.js';
import { NotFoundError, type AmenityGroup, type ImageCategory, type ImageSize, type LocalizedText, type RoomView } from '../kernel/index.js';

/**
 * Property content as the service models it (the shapes of docs/spec/DECISIONS.md, camelCase here; the
 * adapters spell them for their surface). Content comes from the provider through the catalog.
 */

export type { CancellationPolicyType, MealPlan };

/**
 * Texts are LocalizedText: every language the provider translated them into, the default always.
 * A surface reads one with `textIn(text, language)` (src/services/kernel/language.ts), which
 * falls back to the default language field by field.
 */

export interface Amenity {
  /** Stable, e.g. `free_wifi`; filters and files use it. */
  code: string;
  group: AmenityGroup;
  name: LocalizedText;
}

export interface ImageLink {
  size: ImageSize;
  width: number;
  height: number;
  /** Where the provider holds this size; partners get the service's own link (imagePath). */
  providerPath: string;
}

export interface Image {
  /** Unique within its property (room types' images included). */
  id: string;
  category: ImageCategory;
  /** The property's main image (one per property; never on a room type's). */
  hero: boolean;
  caption: LocalizedText;
  /** One per size, smallest first. */
  links: ImageLink[];
}

export interface RatePlan {
  id: string;
  /** The property and room type it prices. */
  propertyId: number;
  roomtypeId: string;
  /** Names its cancellation policy and meal plan. */
  name: LocalizedText;
  mealPlan: MealPlan;
  refundable: boolean;
  cancellationPolicy: CancellationPolicyType;
  /** Included with the rate: breakfast, free cancellation and the like. */
  amenities: Amenity[];
}

export interface BedGroup {
  id: string;
  description: LocalizedText;
}

export interface AgeCategory {
  category: 'adult' | 'child' | 'infant';
  minAge: number;
  /** Inclusive; null: no upper bound. */
  maxAge: number | null;
}

export interface Occupancy {
  maxTotal: number;
  maxAdults: number;
  maxChildren: number;
  ageCategories: AgeCategory[];
}

export interface RoomType {
  id: string;
  propertyId: number;
  name: LocalizedText;
  /** = occupancy.maxTotal. */
  maxOccupancy: number;
  occupancy: Occupancy;
  bedGroups: BedGroup[];
  descriptions: { overview: LocalizedText };
  /** Square metres. */
  areaSqm: number;
  views: RoomView[];
  amenities: Amenity[];
  images: Image[];
  ratePlans: RatePlan[];
}

export interface PropertySummary {
  id: number;
  name: string;
  city: string;
  country: string;
  address: string;
  starRating: number;
  latitude: number;
  longitude: number;
  timezone: string;
  updatedAt: Date;
  descriptions: PropertyDescriptions;
  amenities: Amenity[];
  /** The hero first, then the gallery. */
  images: Image[];
  checkin: {
    /** Local time, HH:MM. */
    beginTime: string;
    /** Local time, HH:MM; null: around the clock. */
    endTime: string | null;
    minAge: number;
    instructions: LocalizedText;
  };
  checkout: { time: string };
  policies: { children: LocalizedText; pets: LocalizedText; extraBeds: LocalizedText; knowBeforeYouGo: LocalizedText };
  phone: string;
  chain: { id: string; name: string } | null;
  brand: { id: string; name: string } | null;
  /** BCP 47 primary tags (`ko`, `en`, ...). */
  spokenLanguages: string[];
  review: { score: number; count: number } | null;
}

export interface PropertyDescriptions {
  headline: LocalizedText;
  general: LocalizedText;
  location: LocalizedText;
  rooms: LocalizedText;
  dining: LocalizedText;
  amenities: LocalizedText;
}

export interface Property extends PropertySummary {
  roomTypes: RoomType[];
}

/** The property's hero image (null when it has no images). */
export function heroImage(property: Pick<PropertySummary, 'images'>): Image | null {
  return property.images.find((i) => i.hero) ?? property.images[0] ?? null;
}

/**
 * The service's own path of an image size (GET, public: an <img> sends no credentials); the
 * image route takes exactly these and nothing else. Surfaces prefix the service's public origin.
 */
export function imagePath(propertyId: number, imageId: string, size: ImageSize): string {
  return `/images/${propertyId}/${imageId}/${size}.png`;
}

/** The link a partner gets for an image size: the service's public origin (ctx.publicOrigin) and imagePath. */
export function imageHref(origin: string, propertyId: number, imageId: string, size: ImageSize): string {
  return origin + imagePath(propertyId, imageId, size);
}

/** An advertised image size of a property (its own or a room type's), or undefined: the image route serves nothing else. */
export function advertisedImage(property: Property, imageId: string, size: string): { image: Image; link: ImageLink } | undefined {
  for (const image of [property.images, ...property.roomTypes.map((r) => r.images)].flat()) {
    if (image.id !== imageId) continue;
    const link = image.links.find((l) => l.size === size);
    return link ? { image, link } : undefined;
  }
  return undefined;
}

/** One property by id, batched with the request's other lookups; 404 when the provider has none. */
export async function getProperty(ctx: RequestContext, id: number): Promise<Property> {
  const property = await ctx.loaders.property.load(id);
  if (!property) throw new NotFoundError(`Property ${id} was not found`);
  return property;
}

export function findRoomType(property: Property, roomtypeId: string): RoomType {
  const room = property.roomTypes.find((r) => r.id === roomtypeId);
  if (!room) throw new NotFoundError(`Room type ${roomtypeId} was not found at property ${property.id}`);
  return room;
}

/** Rate plans of a property, optionally of one room type (unknown room type: 404). */
export function ratePlansOf(property: Property, roomtypeId?: string): RatePlan[] {
  const rooms = roomtypeId === undefined ? property.roomTypes : [findRoomType(property, roomtypeId)];
  return rooms.flatMap((r) => r.ratePlans);
}
