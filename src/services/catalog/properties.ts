import type { CancellationPolicyType, MealPlan } from '../../upstream/protocol.js';
import type { RequestContext } from '../../context.js';
import { NotFoundError } from '../kernel/index.js';

/**
 * Property content as the service models it (the shapes of docs/spec/DECISIONS.md, camelCase here; the
 * adapters spell them for their surface). Content comes from the provider through the catalog.
 */

export type { CancellationPolicyType, MealPlan };

export interface RatePlan {
  id: string;
  /** The property and room type it prices. */
  propertyId: number;
  roomtypeId: string;
  name: string;
  mealPlan: MealPlan;
  refundable: boolean;
  cancellationPolicy: CancellationPolicyType;
}

export interface BedGroup {
  id: string;
  description: string;
}

export interface RoomType {
  id: string;
  propertyId: number;
  name: string;
  maxOccupancy: number;
  bedGroups: BedGroup[];
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
}

export interface Property extends PropertySummary {
  roomTypes: RoomType[];
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
