import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { LocalizedText } from '../../src/services/kernel/index.js';
import type { UpstreamAmenity, UpstreamImage, UpstreamProperty, UpstreamRatePlan, UpstreamRoomType } from '../../src/upstream/protocol.js';

/**
 * A provider of a fixed catalog, for tests that need content the simulator does not make (formula
 * text, a text left untranslated): the content routes of the provider protocol
 * (src/upstream/protocol.ts: the property list, one property, a batch), nothing else.
 */
export async function startStubProvider(catalog: UpstreamProperty[]): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, body: unknown) => {
      res.statusCode = status;
      res.end(JSON.stringify(body));
    };
    const notFound = () => send(404, { error: { code: 'not_found', message: 'not in this stub' } });
    if (req.method === 'GET' && url.pathname === '/properties') {
      const withRooms = url.searchParams.get('include') === 'rooms';
      const since = url.searchParams.get('updated_since');
      const properties = catalog
        .filter((p) => !since || new Date(p.updated_at) > new Date(since))
        .map(({ room_types, ...p }) => (withRooms ? { ...p, room_types } : p));
      send(200, { properties, next_cursor: null });
      return;
    }
    const one = /^\/properties\/(\d+)$/.exec(url.pathname);
    if (req.method === 'GET' && one) {
      const property = catalog.find((p) => p.id === Number(one[1]));
      if (property) send(200, property);
      else notFound();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/properties/batch') {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        const ids = (JSON.parse(raw) as { ids: number[] }).ids;
        send(200, { properties: catalog.filter((p) => ids.includes(p.id)), missing: ids.filter((id) => !catalog.some((p) => p.id === id)) });
      });
      return;
    }
    notFound();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A text in ko-KR and whichever other languages are given. */
export function text(ko: string, others: Omit<LocalizedText, 'ko-KR'> = {}): LocalizedText {
  return { 'ko-KR': ko, ...others };
}

/** A text translated into every language, each marked with its language (`[en-US] ...`). */
export function everywhere(ko: string): LocalizedText {
  return { 'ko-KR': ko, 'en-US': `[en-US] ${ko}`, 'ja-JP': `[ja-JP] ${ko}`, 'zh-CN': `[zh-CN] ${ko}` };
}

export function amenity(code: string, group: UpstreamAmenity['group'], name: LocalizedText = everywhere(code)): UpstreamAmenity {
  return { code, group, name };
}

/** An image advertised at every size (thumbnail 200, medium 640, large 1280 wide; 3:2) at the provider's paths. */
export function image(propertyId: number, id: string, category: UpstreamImage['category'], hero: boolean, caption: LocalizedText = everywhere(`${id} caption`)): UpstreamImage {
  const sizes = [['thumbnail', 200], ['medium', 640], ['large', 1280]] as const;
  return {
    id,
    category,
    hero,
    caption,
    links: sizes.map(([size, width]) => ({ size, width, height: Math.round((width * 2) / 3), path: `/images/${propertyId}/${id}/${size}.png` })),
  };
}

/** A rate plan with its amenities; `name` as given (any text). */
export function ratePlan(roomtypeId: string, id: string, name: LocalizedText, overrides: Partial<UpstreamRatePlan> = {}): UpstreamRatePlan {
  return {
    id,
    roomtype_id: roomtypeId,
    name,
    meal_plan: 'breakfast',
    refundable: true,
    cancellation_policy: 'flexible',
    amenities: [amenity('breakfast_included', 'general'), amenity('free_cancellation', 'general')],
    ...overrides,
  };
}

/** A room type with full content: occupancy, overview, area, views, amenities, one image. */
export function roomType(
  propertyId: number,
  id: string,
  name: LocalizedText,
  bedGroups: { id: string; description: LocalizedText }[],
  ratePlans: UpstreamRatePlan[],
  overrides: Partial<UpstreamRoomType> = {},
): UpstreamRoomType {
  return {
    id,
    property_id: propertyId,
    name,
    max_occupancy: 3,
    occupancy: {
      max_total: 3,
      max_adults: 2,
      max_children: 1,
      age_categories: [
        { category: 'adult', min_age: 13, max_age: null },
        { category: 'child', min_age: 2, max_age: 12 },
        { category: 'infant', min_age: 0, max_age: 1 },
      ],
    },
    bed_groups: bedGroups,
    descriptions: { overview: everywhere(`${id} overview`) },
    area_sqm: 28.5,
    views: ['city', 'river'],
    amenities: [amenity('air_conditioning', 'general'), amenity('minibar', 'general')],
    images: [image(propertyId, `${id}-i1`, 'room', false)],
    rate_plans: ratePlans,
    ...overrides,
  };
}

/** A property's descriptions, each translated everywhere. */
export function descriptions(id: number): UpstreamProperty['descriptions'] {
  return {
    headline: everywhere(`${id} headline`),
    general: everywhere(`${id} general`),
    location: everywhere(`${id} location`),
    rooms: everywhere(`${id} rooms`),
    dining: everywhere(`${id} dining`),
    amenities: everywhere(`${id} amenities`),
  };
}

/** A property with full content around the given base fields and room types. */
export function property(
  base: Pick<UpstreamProperty, 'id' | 'name' | 'city' | 'country' | 'address' | 'star_rating' | 'latitude' | 'longitude' | 'timezone' | 'updated_at'>,
  roomTypes: UpstreamRoomType[],
  overrides: Partial<UpstreamProperty> = {},
): UpstreamProperty {
  const id = base.id;
  return {
    ...base,
    descriptions: descriptions(id),
    amenities: [amenity('free_wifi', 'internet'), amenity('parking', 'parking'), amenity('fitness_center', 'wellness')],
    images: [image(id, `p${id}-hero`, 'exterior', true), image(id, `p${id}-lobby`, 'lobby', false)],
    checkin: { begin_time: '15:00', end_time: '23:00', min_age: 19, instructions: everywhere(`${id} instructions`) },
    checkout: { time: '11:00' },
    policies: {
      children: everywhere(`${id} children`),
      pets: everywhere(`${id} pets`),
      extra_beds: everywhere(`${id} extra beds`),
      know_before_you_go: everywhere(`${id} know before you go`),
    },
    phone: '+82-2-1234-5678',
    chain: { id: 'c1', name: 'Stub Hotels' },
    brand: { id: 'b1', name: 'Stub Stay' },
    spoken_languages: ['ko', 'en'],
    review: { score: 8.7, count: 321 },
    room_types: roomTypes,
    ...overrides,
  };
}
