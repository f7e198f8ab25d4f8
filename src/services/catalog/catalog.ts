import DataLoader from 'dataloader';
import { LRUCache } from 'lru-cache';
import type { Amenity, Image, Property, PropertySummary } from './properties.js';
import { UpstreamError } from '../kernel/index.js';
import type { CallOptions, UpstreamClient } from '../../upstream/client.js';
import type { UpstreamAmenity, UpstreamImage, UpstreamProperty } from '../../upstream/protocol.js';

/**
 * Property content from the provider: a bounded, expiring cache shared by all requests, in front
 * of batched provider calls. Per request, a DataLoader gathers every lookup made in one tick into
 * one batch (and answers repeats from its own map), so no resolver makes per-property calls.
 */

/** The provider's largest batch. */
const BATCH_LIMIT = 1_000;

export class PropertyCatalog {
  private readonly cache: LRUCache<number, Property> | null;

  constructor(
    private readonly upstream: UpstreamClient,
    options: { size: number; ttlMs: number },
  ) {
    this.cache = options.size > 0 ? new LRUCache({ max: options.size, ttl: options.ttlMs }) : null;
  }

  /** Properties in the order of `ids`; null where the provider has none. */
  async getMany(ids: readonly number[], options: CallOptions = {}): Promise<(Property | null)[]> {
    const found = new Map<number, Property>();
    const misses: number[] = [];
    for (const id of new Set(ids)) {
      const cached = this.cache?.get(id);
      if (cached) found.set(id, cached);
      else misses.push(id);
    }
    for (let i = 0; i < misses.length; i += BATCH_LIMIT) {
      const batch = await this.upstream.getProperties(misses.slice(i, i + BATCH_LIMIT), options);
      for (const raw of batch.properties) {
        const property = toProperty(raw);
        found.set(property.id, property);
        this.cache?.set(property.id, property);
      }
    }
    return ids.map((id) => found.get(id) ?? null);
  }

  /**
   * Pages of the provider's catalog in id order, fetched one at a time as the consumer asks, so a
   * 100,000-property file never sits in memory.
   */
  async *pages(
    query: { updatedSince?: Date | undefined; includeRooms: boolean; pageSize?: number },
    options: CallOptions = {},
  ): AsyncGenerator<(PropertySummary | Property)[]> {
    let cursor: string | undefined;
    do {
      const page = await this.upstream.listProperties(
        { cursor, limit: query.pageSize ?? 500, updatedSince: query.updatedSince, includeRooms: query.includeRooms },
        options,
      );
      // We only ever pass the provider's own cursors back; refusing one is the provider's fault.
      if (!page) throw new UpstreamError('The inventory provider refused its own cursor');
      yield page.properties.map((p) => (query.includeRooms ? toProperty(p) : toSummary(p)));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  clear(): void {
    this.cache?.clear();
  }
}

export interface Loaders {
  property: DataLoader<number, Property | null>;
}

export function createLoaders(catalog: PropertyCatalog, options: CallOptions): Loaders {
  return {
    property: new DataLoader((ids) => catalog.getMany(ids, options), { maxBatchSize: BATCH_LIMIT }),
  };
}

function toAmenity(a: UpstreamAmenity): Amenity {
  return { code: a.code, group: a.group, name: a.name };
}

/** The provider's image as the service models it (the property's, a room type's, a search result's hero). */
export function toImage(i: UpstreamImage): Image {
  return {
    id: i.id,
    category: i.category,
    hero: i.hero,
    caption: i.caption,
    links: i.links.map((l) => ({ size: l.size, width: l.width, height: l.height, providerPath: l.path })),
  };
}

export function toSummary(p: UpstreamProperty): PropertySummary {
  const d = p.descriptions;
  return {
    id: p.id,
    name: p.name,
    city: p.city,
    country: p.country,
    address: p.address,
    starRating: p.star_rating,
    latitude: p.latitude,
    longitude: p.longitude,
    timezone: p.timezone,
    updatedAt: new Date(p.updated_at),
    descriptions: { headline: d.headline, general: d.general, location: d.location, rooms: d.rooms, dining: d.dining, amenities: d.amenities },
    amenities: p.amenities.map(toAmenity),
    images: p.images.map(toImage),
    checkin: { beginTime: p.checkin.begin_time, endTime: p.checkin.end_time, minAge: p.checkin.min_age, instructions: p.checkin.instructions },
    checkout: { time: p.checkout.time },
    policies: {
      children: p.policies.children,
      pets: p.policies.pets,
      extraBeds: p.policies.extra_beds,
      knowBeforeYouGo: p.policies.know_before_you_go,
    },
    phone: p.phone,
    chain: p.chain,
    brand: p.brand,
    spokenLanguages: p.spoken_languages,
    review: p.review,
  };
}

export function toProperty(p: UpstreamProperty): Property {
  return {
    ...toSummary(p),
    roomTypes: (p.room_types ?? []).map((r) => ({
      id: r.id,
      propertyId: r.property_id,
      name: r.name,
      maxOccupancy: r.max_occupancy,
      occupancy: {
        maxTotal: r.occupancy.max_total,
        maxAdults: r.occupancy.max_adults,
        maxChildren: r.occupancy.max_children,
        ageCategories: r.occupancy.age_categories.map((a) => ({ category: a.category, minAge: a.min_age, maxAge: a.max_age })),
      },
      bedGroups: r.bed_groups.map((b) => ({ id: b.id, description: b.description })),
      descriptions: { overview: r.descriptions.overview },
      areaSqm: r.area_sqm,
      views: r.views,
      amenities: r.amenities.map(toAmenity),
      images: r.images.map(toImage),
      ratePlans: r.rate_plans.map((rp) => ({
        id: rp.id,
        propertyId: r.property_id,
        roomtypeId: rp.roomtype_id,
        name: rp.name,
        mealPlan: rp.meal_plan,
        refundable: rp.refundable,
        cancellationPolicy: rp.cancellation_policy,
        amenities: rp.amenities.map(toAmenity),
      })),
    })),
  };
}
