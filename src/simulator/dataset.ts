/**
 * The simulator's inventory: a deterministic, seeded market of properties computed on demand
 * from (seed, id), so 100,000 properties cost no memory until asked for. The same seed always
 * yields the same properties, room types, rate plans, stock and prices.
 *
 * Speed without changing a single figure: recently used properties are kept (a bounded LRU,
 * frozen, shared by every caller), and the per-night generators are seeded by continuing a FNV
 * state precomputed for `seed|stock|` and `seed|price|` rather than joining and hashing the whole
 * key each time; a stay's nights are parsed once (see `Night`), not once per rate plan.
 */

import { LRUCache } from 'lru-cache';
import type { CancellationPolicyType, MealPlan } from '../upstream/protocol.js';
import { CANCELLATION_POLICY_TYPES, MEAL_PLANS, type LocalizedText, type RoomView } from '../services/kernel/index.js';
import {
  type Amenity,
  BED_DESCRIPTIONS,
  checkinInstructionsOf,
  type Descriptions,
  descriptionsOf,
  distanceKm,
  drawContent,
  type Image,
  type Occupancy,
  type Policies,
  policiesOf,
  ratePlanAmenities,
  ratePlanName,
  type DrawnContent,
  occupancyFor,
  type PropertyContent,
  type RoomContent,
  roomOverviewOf,
  ROOM_TYPE_NAMES,
  type TextSource,
} from './content.js';

export type { Amenity, CancellationPolicyType, Descriptions, Image, MealPlan, Occupancy, Policies };

export interface City {
  name: string;
  country: string;
  timezone: string;
  latitude: number;
  longitude: number;
  districts: string[];
}

export interface BedGroup {
  id: string;
  description: LocalizedText;
}

export interface RatePlan {
  id: string;
  roomtypeId: string;
  /** Says its cancellation policy and meal plan (content.ts, ratePlanName). */
  name: LocalizedText;
  mealPlan: MealPlan;
  refundable: boolean;
  cancellationPolicy: CancellationPolicyType;
  /** Included with the rate: its meals, free cancellation (shared, frozen). */
  amenities: readonly Amenity[];
  /** Multiplier on the room's nightly price, in percent (breakfast costs more). */
  pricePercent: number;
}

export interface RoomType {
  id: string;
  propertyId: number;
  name: LocalizedText;
  maxOccupancy: number;
  /** maxTotal = maxOccupancy. */
  occupancy: Occupancy;
  bedGroups: BedGroup[];
  /** Written when read, from the room's facts (not stored). */
  readonly descriptions: { overview: LocalizedText };
  readonly areaSqm: number;
  readonly views: readonly RoomView[];
  readonly amenities: readonly Amenity[];
  /** Ids `r{n}-{k}`: unique within the property. */
  readonly images: readonly Image[];
  /** Rooms of this type the property has; daily stock never exceeds it. */
  inventory: number;
  /** Weekday nightly price before tax and fees, KRW. */
  basePrice: number;
  ratePlans: RatePlan[];
}

export interface Property {
  id: number;
  name: string;
  city: string;
  country: string;
  address: string;
  starRating: number;
  latitude: number;
  longitude: number;
  timezone: string;
  /** The content's last change: drawn, or the time of its latest revision (Dataset.reviseContent). */
  updatedAt: Date;
  roomTypes: RoomType[];
  /**
   * Content (content.ts), drawn from a stream of its own (`seed|content|id`) when first read:
   * these are getters, not own enumerable fields. Texts are written when read (not stored).
   */
  readonly descriptions: Descriptions;
  readonly amenities: readonly Amenity[];
  /** The hero first (id `p1`), then the gallery (`p2`...). */
  readonly images: readonly Image[];
  /** `instructions` is written when read. */
  readonly checkin: { beginTime: string; endTime: string | null; minAge: number; instructions: LocalizedText };
  readonly checkout: { time: string };
  /** Written when read. */
  readonly policies: Policies;
  readonly phone: string;
  readonly chain: { readonly id: string; readonly name: string } | null;
  readonly brand: { readonly id: string; readonly name: string } | null;
  readonly spokenLanguages: readonly string[];
  readonly review: { readonly score: number; readonly count: number } | null;
  /** 0 until the content is revised (POST /_control/properties/{id}/content). */
  contentRevision: number;
}

export const CITIES: readonly City[] = [
  { name: 'Seoul', country: 'KR', timezone: 'Asia/Seoul', latitude: 37.5665, longitude: 126.978, districts: ['Jung-gu', 'Gangnam-gu', 'Mapo-gu', 'Jongno-gu', 'Yongsan-gu', 'Songpa-gu'] },
  { name: 'Busan', country: 'KR', timezone: 'Asia/Seoul', latitude: 35.1796, longitude: 129.0756, districts: ['Haeundae-gu', 'Suyeong-gu', 'Jung-gu', 'Busanjin-gu'] },
  { name: 'Jeju', country: 'KR', timezone: 'Asia/Seoul', latitude: 33.4996, longitude: 126.5312, districts: ['Jeju-si', 'Seogwipo-si', 'Aewol-eup'] },
  { name: 'Incheon', country: 'KR', timezone: 'Asia/Seoul', latitude: 37.4563, longitude: 126.7052, districts: ['Jung-gu', 'Yeonsu-gu', 'Namdong-gu'] },
  { name: 'Gyeongju', country: 'KR', timezone: 'Asia/Seoul', latitude: 35.8562, longitude: 129.2247, districts: ['Hwangnam-dong', 'Bomun-ro'] },
  { name: 'Gangneung', country: 'KR', timezone: 'Asia/Seoul', latitude: 37.7519, longitude: 128.8761, districts: ['Gyeongpo', 'Jumunjin'] },
  { name: 'Daegu', country: 'KR', timezone: 'Asia/Seoul', latitude: 35.8714, longitude: 128.6014, districts: ['Jung-gu', 'Suseong-gu'] },
  { name: 'Tokyo', country: 'JP', timezone: 'Asia/Tokyo', latitude: 35.6762, longitude: 139.6503, districts: ['Shinjuku', 'Shibuya', 'Ginza', 'Asakusa'] },
  { name: 'Osaka', country: 'JP', timezone: 'Asia/Tokyo', latitude: 34.6937, longitude: 135.5023, districts: ['Namba', 'Umeda', 'Shinsaibashi'] },
  { name: 'Fukuoka', country: 'JP', timezone: 'Asia/Tokyo', latitude: 33.5904, longitude: 130.4017, districts: ['Hakata', 'Tenjin'] },
  { name: 'Taipei', country: 'TW', timezone: 'Asia/Taipei', latitude: 25.033, longitude: 121.5654, districts: ['Xinyi', 'Zhongshan', 'Da-an'] },
  { name: 'Hong Kong', country: 'HK', timezone: 'Asia/Hong_Kong', latitude: 22.3193, longitude: 114.1694, districts: ['Tsim Sha Tsui', 'Central', 'Causeway Bay'] },
  { name: 'Bangkok', country: 'TH', timezone: 'Asia/Bangkok', latitude: 13.7563, longitude: 100.5018, districts: ['Sukhumvit', 'Silom', 'Riverside'] },
  { name: 'Singapore', country: 'SG', timezone: 'Asia/Singapore', latitude: 1.3521, longitude: 103.8198, districts: ['Marina Bay', 'Orchard', 'Sentosa'] },
  { name: 'Da Nang', country: 'VN', timezone: 'Asia/Ho_Chi_Minh', latitude: 16.0544, longitude: 108.2022, districts: ['My Khe', 'Son Tra', 'Hai Chau'] },
];

// Korean cities carry most of the market, as on a Korean marketplace.
const CITY_WEIGHTS = [22, 12, 12, 6, 4, 4, 4, 7, 5, 3, 4, 3, 5, 4, 5];

const BRANDS = ['Grand', 'Hotel', 'Stay', 'Residence', 'Suites', 'Resort', 'Hanok', 'Inn', 'Boutique', 'Palace'];
const NAMES = ['Lotte', 'Shilla', 'Haven', 'Ocean', 'Maple', 'Pine', 'Harbor', 'Lumen', 'Aria', 'Blossom', 'Moonlight', 'Cedar', 'Han River', 'Summit', 'Coral', 'Jade'];
// Room type names are ROOM_TYPE_NAMES of content.ts (localized); these are their indexes.
const [STANDARD_DOUBLE, SUPERIOR_TWIN, DELUXE_KING, FAMILY_ROOM, JUNIOR_SUITE, OCEAN_VIEW_DELUXE, EXECUTIVE_SUITE, ONDOL_ROOM] = [0, 1, 2, 3, 4, 5, 6, 7] as const;
const [SUPERIOR_DOUBLE, DELUXE_TWIN, DELUXE_ONDOL_ROOM, FAMILY_SUITE] = [8, 9, 10, 11] as const;

/**
 * The room type names that fit each kind of BEDS (an index of ROOM_TYPE_NAMES), cheapest first;
 * an ocean view only in a city by the sea.
 */
const NAMES_FOR_BEDS: readonly (readonly number[])[] = [
  [STANDARD_DOUBLE, SUPERIOR_DOUBLE, JUNIOR_SUITE, OCEAN_VIEW_DELUXE],
  [SUPERIOR_TWIN, DELUXE_TWIN, STANDARD_DOUBLE, OCEAN_VIEW_DELUXE],
  [DELUXE_KING, JUNIOR_SUITE, OCEAN_VIEW_DELUXE, EXECUTIVE_SUITE],
  [FAMILY_ROOM, FAMILY_SUITE, EXECUTIVE_SUITE],
  [ONDOL_ROOM, DELUXE_ONDOL_ROOM, FAMILY_ROOM],
];
const COASTAL_CITIES = new Set(['Busan', 'Jeju', 'Incheon', 'Gangneung', 'Hong Kong', 'Singapore', 'Da Nang', 'Fukuoka']);

/**
 * A room type's name: one that fits its beds, from the draw the generator has always made for it
 * (`rank`, 0 to 2, plus the room's position), the first one not already taken in the property.
 */
function roomNameIndex(beds: number, city: string, position: number, rank: number, taken: readonly number[]): number {
  const names = NAMES_FOR_BEDS[beds]!.filter((n) => n !== OCEAN_VIEW_DELUXE || COASTAL_CITIES.has(city));
  for (let k = 0; k < names.length; k++) {
    const name = names[(position + rank + k) % names.length]!;
    if (!taken.includes(name)) return name;
  }
  return names[(position + rank) % names.length]!;
}
const bed = (id: string, en: string): BedGroup => ({ id, description: BED_DESCRIPTIONS[en]! });
const BEDS: readonly { groups: BedGroup[]; maxOccupancy: number }[] = [
  { groups: [bed('bg-1', '1 double bed')], maxOccupancy: 2 },
  { groups: [bed('bg-1', '2 single beds'), bed('bg-2', '1 double bed')], maxOccupancy: 2 },
  { groups: [bed('bg-1', '1 king bed')], maxOccupancy: 3 },
  { groups: [bed('bg-1', '1 king bed and 1 single bed'), bed('bg-2', '3 single beds')], maxOccupancy: 4 },
  { groups: [bed('bg-1', 'Floor mattresses (ondol)')], maxOccupancy: 4 },
];
const POLICIES: readonly CancellationPolicyType[] = CANCELLATION_POLICY_TYPES;
const MEALS: readonly MealPlan[] = MEAL_PLANS;
const MEAL_PERCENT: Record<MealPlan, number> = { room_only: 100, breakfast: 112, half_board: 125, full_board: 140 };

/** Content times are spread over the year before this instant, so `updated_since` filters mean something. */
export const DATASET_EPOCH = Date.UTC(2026, 10, 1);
const YEAR_MS = 365 * 86_400_000;

/** mulberry32: small, fast and good enough for a repeatable dataset. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FNV_OFFSET = 2166136261;

/**
 * Continues a FNV-1a state over the code points of `text`, exactly as hashing the longer string
 * would: fnv(fnv(FNV_OFFSET, 'ab'), 'c') >>> 0 === hash('abc').
 */
function fnv(state: number, text: string): number {
  let h = state;
  for (let i = 0; i < text.length; i++) {
    const code = text.codePointAt(i)!;
    if (code > 0xffff) i++;
    h ^= code;
    h = Math.imul(h, 16777619);
  }
  return h;
}

/** A stable 32-bit hash of the parts, to seed per-entity and per-date generators. */
export function hash(...parts: (string | number)[]): number {
  return fnv(FNV_OFFSET, parts.join('|')) >>> 0;
}

/** One draw of mulberry32 seeded with `seed`: the same as prng(seed)(), without the closure. */
function firstDraw(seed: number): number {
  const a = ((seed >>> 0) + 0x6d2b79f5) >>> 0;
  let t = a;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/**
 * A night of a stay (YYYY-MM-DD) with the price factors of its date, parsed once per stay rather
 * than once per rate plan and night.
 */
export interface Night {
  readonly date: string;
  /** 1.22 on Friday and Saturday nights, else 1. */
  readonly weekend: number;
  /** 1.35 in July and August, 1.15 in December and January, 1.1 in April and October, else 1. */
  readonly season: number;
}

/** The price factors of a night (YYYY-MM-DD). */
export function nightOf(date: string): Night {
  const d = new Date(`${date}T00:00:00Z`);
  const weekday = d.getUTCDay();
  const weekend = weekday === 5 || weekday === 6 ? 1.22 : 1;
  const month = d.getUTCMonth() + 1;
  const season = month === 7 || month === 8 ? 1.35 : month === 12 || month === 1 ? 1.15 : month === 4 || month === 10 ? 1.1 : 1;
  return { date, weekend, season };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

const CITY_WEIGHT_TOTAL = CITY_WEIGHTS.reduce((a, b) => a + b, 0);
/** The policies and meal plans a plan draws from, as the generator has always sliced them. */
const REFUNDABLE_POLICIES = POLICIES.slice(0, 3);
const FIRST_PLAN_MEALS = MEALS.slice(0, 2);
const OTHER_PLAN_MEALS = MEALS.slice(0, 4);

/**
 * Properties a Dataset keeps (least recently used dropped first): a bound on memory, as each
 * takes about 2.7 KB of heap, 4.5 KB once its content is drawn (its texts are written when read,
 * its amenities, images and names are shared objects), so at most about 90 MB. Catalogs up to
 * this size are kept whole.
 */
export const PROPERTY_CACHE_SIZE = 20_000;

/** Freezes a generated property and what it holds, as it is shared by every caller from the cache. */
function freezeProperty(property: Property): Property {
  for (const room of property.roomTypes) {
    for (const plan of room.ratePlans) Object.freeze(plan);
    Object.freeze(room.ratePlans);
    Object.freeze(room);
  }
  Object.freeze(property.roomTypes);
  return Object.freeze(property);
}

// The bed groups are shared by every room of their kind; they were never meant to be changed.
for (const beds of BEDS) {
  for (const group of beds.groups) Object.freeze(group);
  Object.freeze(beds.groups);
  Object.freeze(beds);
}

function weightedCity(random: () => number): City {
  const total = CITY_WEIGHT_TOTAL;
  let roll = random() * total;
  for (let i = 0; i < CITIES.length; i++) {
    roll -= CITY_WEIGHTS[i]!;
    if (roll < 0) return CITIES[i]!;
  }
  return CITIES[0]!;
}

/** Check-out objects, shared by time. */
const CHECKOUTS: Record<string, { time: string }> = {};

/**
 * A generated room type. Its content (area, views, amenities, images) is its property's, drawn
 * when first read (see GeneratedProperty); its overview is written when read.
 */
class GeneratedRoomType implements RoomType {
  readonly name: LocalizedText;
  readonly occupancy: Occupancy;
  #owner: GeneratedProperty | undefined;
  #index = 0;

  constructor(
    readonly id: string,
    readonly propertyId: number,
    /** Index in ROOM_TYPE_NAMES. */
    nameIndex: number,
    readonly maxOccupancy: number,
    readonly bedGroups: BedGroup[],
    readonly inventory: number,
    readonly basePrice: number,
    readonly ratePlans: RatePlan[],
  ) {
    this.name = ROOM_TYPE_NAMES[nameIndex]!;
    this.occupancy = occupancyFor(maxOccupancy);
  }

  /** Called once, by the property that has this room type. */
  attach(owner: GeneratedProperty, index: number): void {
    this.#owner = owner;
    this.#index = index;
  }

  private get drawn(): RoomContent {
    return this.#owner!.drawn().rooms[this.#index]!;
  }

  get areaSqm(): number {
    return this.drawn.areaSqm;
  }

  get views(): readonly RoomView[] {
    return this.drawn.views;
  }

  get amenities(): readonly Amenity[] {
    return this.drawn.amenities;
  }

  get images(): readonly Image[] {
    return this.drawn.images;
  }

  get descriptions(): { overview: LocalizedText } {
    return { overview: roomOverviewOf(this.drawn, this.bedGroups[0]!.description) };
  }
}

/**
 * A generated property. The market's fields are drawn with it; its content is drawn from its own
 * stream when first read and kept with it (a search that filters by city never draws the content
 * of the properties it skips), and its long texts (descriptions, check-in instructions, policies)
 * are written when read, so a cached property holds no long strings. Content fields are getters:
 * read them, do not expect them from Object.keys or a spread.
 */
class GeneratedProperty implements Property, TextSource {
  readonly city: string;
  readonly country: string;
  readonly timezone: string;
  /** Kilometres from the city's centre. */
  readonly distanceKm: number;
  #drawn: DrawnContent | undefined;
  readonly #seed: number;
  readonly #revisedSeed: number;

  constructor(
    readonly id: number,
    readonly name: string,
    city: City,
    readonly address: string,
    readonly starRating: number,
    readonly latitude: number,
    readonly longitude: number,
    readonly updatedAt: Date,
    readonly roomTypes: GeneratedRoomType[],
    /** The facts the content is drawn and written from. */
    readonly district: string,
    readonly brandWord: string,
    readonly contentRevision: number,
    /** Seeds of the content's streams: `seed|content|id` and `seed|content|id|revision`. */
    seed: number,
    revisedSeed: number,
  ) {
    this.city = city.name;
    this.country = city.country;
    this.timezone = city.timezone;
    this.distanceKm = distanceKm(city.latitude, city.longitude, latitude, longitude);
    this.#seed = seed;
    this.#revisedSeed = revisedSeed;
    roomTypes.forEach((room, i) => room.attach(this, i));
  }

  /** The content, drawn on first use. */
  drawn(): DrawnContent {
    return (this.#drawn ??= drawContent(
      {
        id: this.id,
        name: this.name,
        city: this.city,
        country: this.country,
        district: this.district,
        brandWord: this.brandWord,
        starRating: this.starRating,
        rooms: this.roomTypes.map((r) => ({ nameIndex: ROOM_TYPE_NAMES.indexOf(r.name as (typeof ROOM_TYPE_NAMES)[number]), maxOccupancy: r.maxOccupancy })),
      },
      prng(this.#seed),
      prng(this.#revisedSeed),
      this.contentRevision,
    ));
  }

  get content(): PropertyContent {
    return this.drawn().content;
  }

  get amenities(): readonly Amenity[] {
    return this.content.amenities;
  }

  get images(): readonly Image[] {
    return this.content.images;
  }

  get checkout(): { time: string } {
    const time = this.content.checkoutTime;
    return (CHECKOUTS[time] ??= Object.freeze({ time }));
  }

  get phone(): string {
    return this.content.phone;
  }

  get chain(): Property['chain'] {
    return this.content.chain;
  }

  get brand(): Property['brand'] {
    return this.content.brand;
  }

  get spokenLanguages(): readonly string[] {
    return this.content.spokenLanguages;
  }

  get review(): Property['review'] {
    return this.content.review;
  }

  get descriptions(): Descriptions {
    return descriptionsOf(this);
  }

  get checkin(): Property['checkin'] {
    const c = this.content;
    return { beginTime: c.checkinBegin, endTime: c.checkinEnd, minAge: c.checkinMinAge, instructions: checkinInstructionsOf(this) };
  }

  get policies(): Policies {
    return policiesOf(this);
  }
}

export class Dataset {
  /** Recently used properties, so a search over the catalog does not regenerate each one. */
  private readonly properties: LRUCache<number, Property>;
  /** FNV states after `seed|property|`, `seed|stock|` and `seed|price|`, the prefixes of the generators' keys. */
  private readonly propertyPrefix: number;
  private readonly stockPrefix: number;
  private readonly pricePrefix: number;
  /** FNV state after `seed|content|`: the prefix of the content's own streams. */
  private readonly contentPrefix: number;
  /** Content revisions by property id (control route), with when each was made. */
  private readonly revisions = new Map<number, { revision: number; at: Date }>();

  constructor(
    readonly seed: number,
    readonly size: number,
  ) {
    if (!Number.isInteger(size) || size < 1 || size > 100_000) throw new RangeError('size must be 1 to 100000');
    this.properties = new LRUCache({ max: Math.min(size, PROPERTY_CACHE_SIZE) });
    this.propertyPrefix = fnv(FNV_OFFSET, `${seed}|property|`);
    this.stockPrefix = fnv(FNV_OFFSET, `${seed}|stock|`);
    this.pricePrefix = fnv(FNV_OFFSET, `${seed}|price|`);
    this.contentPrefix = fnv(FNV_OFFSET, `${seed}|content|`);
  }

  has(id: number): boolean {
    return Number.isInteger(id) && id >= 1 && id <= this.size;
  }

  /**
   * The property with this id, or undefined outside 1..size. The object is frozen and shared by
   * every caller (it may come from the cache): copy it to change anything, and leave `updatedAt`,
   * a Date, alone.
   */
  property(id: number): Property | undefined {
    if (!this.has(id)) return undefined;
    let property = this.properties.get(id);
    if (!property) {
      property = freezeProperty(this.generate(id));
      this.properties.set(id, property);
    }
    return property;
  }

  /**
   * The property with this id, for a walk over the catalog: as property(id), but when the catalog
   * is larger than the cache a property not in it is generated without being kept, since a walk
   * over more properties than the cache holds would evict each one before it is asked for again,
   * and churning long-lived objects costs the garbage collector more than regenerating them.
   */
  scanProperty(id: number): Property | undefined {
    if (this.size <= PROPERTY_CACHE_SIZE || !this.has(id)) return this.property(id);
    // Not frozen: nobody else is handed this object.
    return this.properties.get(id) ?? this.generate(id);
  }

  private generate(id: number): Property {
    // The market's stream: its draws, and their order, are what they have always been.
    const random = prng(fnv(this.propertyPrefix, String(id)) >>> 0);
    const city = weightedCity(random);
    const starRating = Math.min(5, 1 + Math.floor(random() * 9) / 2);
    const first = pick(random, NAMES);
    const brandWord = pick(random, BRANDS);
    const name = `${first} ${brandWord} ${city.name}`;
    const district = pick(random, city.districts);
    const roomCount = 2 + Math.floor(random() * 4);
    const drawn: { id: string; beds: (typeof BEDS)[number]; basePrice: number; ratePlans: RatePlan[]; nameIndex: number; inventory: number }[] = [];
    for (let r = 1; r <= roomCount; r++) {
      const roomtypeId = `${id}-r${r}`;
      const bedsIndex = Math.floor(random() * BEDS.length);
      const beds = BEDS[bedsIndex]!;
      // KRW, weekday, before tax: roughly 45,000 for one star to 420,000 for five, plus room rank.
      const basePrice = Math.round((25_000 + starRating * starRating * 15_000) * (1 + (r - 1) * 0.18) * (0.85 + random() * 0.3) / 100) * 100;
      const planCount = 1 + Math.floor(random() * 3);
      const ratePlans: RatePlan[] = [];
      for (let p = 1; p <= planCount; p++) {
        const policy = p === planCount && planCount > 1 ? 'non_refundable' : pick(random, REFUNDABLE_POLICIES);
        const mealPlan = pick(random, p === 1 ? FIRST_PLAN_MEALS : OTHER_PLAN_MEALS);
        ratePlans.push({
          id: `${roomtypeId}-p${p}`,
          roomtypeId,
          name: ratePlanName(policy, mealPlan),
          mealPlan,
          refundable: policy !== 'non_refundable',
          cancellationPolicy: policy,
          amenities: ratePlanAmenities(policy, mealPlan),
          // Non-refundable rates are cheaper, as in the market.
          pricePercent: MEAL_PERCENT[mealPlan] - (policy === 'non_refundable' ? 12 : 0),
        });
      }
      const nameIndex = roomNameIndex(bedsIndex, city.name, r - 1, Math.floor(random() * 3), drawn.map((d) => d.nameIndex));
      const inventory = 3 + Math.floor(random() * 18);
      drawn.push({ id: roomtypeId, beds, basePrice, ratePlans, nameIndex, inventory });
    }
    const address = `${1 + Math.floor(random() * 300)} ${district}, ${city.name}`;
    const latitude = round6(city.latitude + (random() - 0.5) * 0.12);
    const longitude = round6(city.longitude + (random() - 0.5) * 0.12);
    const drawnUpdatedAt = new Date(DATASET_EPOCH - Math.floor(random() * YEAR_MS));

    // The content's own streams: `seed|content|id`, and `seed|content|id|revision` for what a revision changes.
    const revised = this.revisions.get(id);
    const revision = revised?.revision ?? 0;
    const roomTypes = drawn.map(
      (r) => new GeneratedRoomType(r.id, id, r.nameIndex, r.beds.maxOccupancy, r.beds.groups, r.inventory, r.basePrice, r.ratePlans),
    );
    return new GeneratedProperty(
      id,
      name,
      city,
      address,
      starRating,
      latitude,
      longitude,
      revised ? revised.at : drawnUpdatedAt,
      roomTypes,
      district,
      brandWord,
      revision,
      fnv(this.contentPrefix, String(id)) >>> 0,
      fnv(this.contentPrefix, `${id}|${revision}`) >>> 0,
    );
  }

  /**
   * Revises a property's content (the control route POST /_control/properties/{id}/content): to
   * `revision`, or the next one. Its content is drawn again with the revision in the seed (a new
   * headline, new reviews) and its `updatedAt` becomes `at`, so `updated_since` sees the change.
   * Undefined for an unknown id.
   */
  reviseContent(id: number, at: Date, revision?: number): Property | undefined {
    if (!this.has(id)) return undefined;
    const next = revision ?? (this.revisions.get(id)?.revision ?? 0) + 1;
    this.revisions.set(id, { revision: next, at });
    this.properties.delete(id);
    return this.property(id);
  }

  /** Forgets every content revision: each property is as the seed draws it again. */
  clearRevisions(): void {
    for (const id of this.revisions.keys()) this.properties.delete(id);
    this.revisions.clear();
  }

  /** Rooms of a type still free on a night (YYYY-MM-DD), before bookings made in the simulator. */
  baseStock(room: RoomType, night: string): number {
    return this.stockWith(this.roomStockKey(room), night, room.inventory);
  }

  /** Nightly price before tax of a rate plan on a night, KRW (integer). */
  nightlyPrice(room: RoomType, plan: RatePlan, night: string): number {
    return priceOn(room, plan, nightOf(night), this.jitterWith(this.roomPriceKey(room), night));
  }

  /**
   * Base stock of a room type on each night of a stay: baseStock(room, night.date) for every
   * night, with the room's part of the key hashed once.
   */
  stayStock(room: RoomType, nights: readonly Night[]): number[] {
    const key = this.roomStockKey(room);
    const stock: number[] = new Array<number>(nights.length);
    for (let i = 0; i < nights.length; i++) stock[i] = this.stockWith(key, nights[i]!.date, room.inventory);
    return stock;
  }

  /**
   * The price jitter of a room type on each night of a stay, shared by its rate plans: with
   * `priceOn`, nightlyPrice(room, plan, night.date) === priceOn(room, plan, night, jitter[i]).
   */
  stayJitter(room: RoomType, nights: readonly Night[]): number[] {
    const key = this.roomPriceKey(room);
    const jitter: number[] = new Array<number>(nights.length);
    for (let i = 0; i < nights.length; i++) jitter[i] = this.jitterWith(key, nights[i]!.date);
    return jitter;
  }

  /** FNV state after `seed|stock|roomId|`. */
  private roomStockKey(room: RoomType): number {
    return fnv(fnv(this.stockPrefix, room.id), '|');
  }

  /** FNV state after `seed|price|roomId|`. */
  private roomPriceKey(room: RoomType): number {
    return fnv(fnv(this.pricePrefix, room.id), '|');
  }

  private stockWith(roomKey: number, night: string, inventory: number): number {
    const random = prng(fnv(roomKey, night) >>> 0);
    // About one night in eight is sold out; otherwise a share of the inventory is left.
    if (random() < 0.125) return 0;
    return 1 + Math.floor(random() * inventory);
  }

  private jitterWith(roomKey: number, night: string): number {
    return 0.95 + firstDraw(fnv(roomKey, night) >>> 0) * 0.1;
  }
}

/** Nightly price before tax of a rate plan on a night, given the room's jitter that night (see Dataset.stayJitter). */
export function priceOn(room: RoomType, plan: RatePlan, night: Night, jitter: number): number {
  return Math.round((room.basePrice * plan.pricePercent * night.weekend * night.season * jitter) / 10_000) * 100;
}

/** Tax (VAT 10 %) and service charge (10 %) on a nightly price, KRW integers. */
export function taxAndFees(nightly: number): number {
  return Math.round(nightly * 0.2);
}

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
