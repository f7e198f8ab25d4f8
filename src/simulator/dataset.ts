/**
 * The simulator's inventory: a deterministic, seeded market of properties computed on demand
 * from (seed, id), so 100,000 properties cost no memory until asked for. The same seed always
 * yields the same properties, room types, rate plans, stock and prices.
 */

import type { CancellationPolicyType, MealPlan } from '../upstream/protocol.js';

export type { CancellationPolicyType, MealPlan };

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
  description: string;
}

export interface RatePlan {
  id: string;
  roomtypeId: string;
  name: string;
  mealPlan: MealPlan;
  refundable: boolean;
  cancellationPolicy: CancellationPolicyType;
  /** Multiplier on the room's nightly price, in percent (breakfast costs more). */
  pricePercent: number;
}

export interface RoomType {
  id: string;
  propertyId: number;
  name: string;
  maxOccupancy: number;
  bedGroups: BedGroup[];
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
  updatedAt: Date;
  roomTypes: RoomType[];
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
const ROOM_NAMES = ['Standard Double', 'Superior Twin', 'Deluxe King', 'Family Room', 'Junior Suite', 'Ocean View Deluxe', 'Executive Suite', 'Ondol Room'];
const BEDS: readonly { groups: BedGroup[]; maxOccupancy: number }[] = [
  { groups: [{ id: 'bg-1', description: '1 double bed' }], maxOccupancy: 2 },
  { groups: [{ id: 'bg-1', description: '2 single beds' }, { id: 'bg-2', description: '1 double bed' }], maxOccupancy: 2 },
  { groups: [{ id: 'bg-1', description: '1 king bed' }], maxOccupancy: 3 },
  { groups: [{ id: 'bg-1', description: '1 king bed and 1 single bed' }, { id: 'bg-2', description: '3 single beds' }], maxOccupancy: 4 },
  { groups: [{ id: 'bg-1', description: 'Floor mattresses (ondol)' }], maxOccupancy: 4 },
];
const POLICIES: readonly CancellationPolicyType[] = ['flexible', 'moderate', 'strict', 'non_refundable'];
const MEALS: readonly MealPlan[] = ['room_only', 'breakfast', 'half_board', 'full_board'];
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

/** A stable 32-bit hash of the parts, to seed per-entity and per-date generators. */
export function hash(...parts: (string | number)[]): number {
  let h = 2166136261;
  for (const ch of parts.join('|')) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function weightedCity(random: () => number): City {
  const total = CITY_WEIGHTS.reduce((a, b) => a + b, 0);
  let roll = random() * total;
  for (let i = 0; i < CITIES.length; i++) {
    roll -= CITY_WEIGHTS[i]!;
    if (roll < 0) return CITIES[i]!;
  }
  return CITIES[0]!;
}

export class Dataset {
  constructor(
    readonly seed: number,
    readonly size: number,
  ) {
    if (!Number.isInteger(size) || size < 1 || size > 100_000) throw new RangeError('size must be 1 to 100000');
  }

  has(id: number): boolean {
    return Number.isInteger(id) && id >= 1 && id <= this.size;
  }

  property(id: number): Property | undefined {
    if (!this.has(id)) return undefined;
    const random = prng(hash(this.seed, 'property', id));
    const city = weightedCity(random);
    const starRating = Math.min(5, 1 + Math.floor(random() * 9) / 2);
    const name = `${pick(random, NAMES)} ${pick(random, BRANDS)} ${city.name}`;
    const district = pick(random, city.districts);
    const roomCount = 2 + Math.floor(random() * 4);
    const roomTypes: RoomType[] = [];
    for (let r = 1; r <= roomCount; r++) {
      const roomtypeId = `${id}-r${r}`;
      const beds = pick(random, BEDS);
      // KRW, weekday, before tax: roughly 45,000 for one star to 420,000 for five, plus room rank.
      const basePrice = Math.round((25_000 + starRating * starRating * 15_000) * (1 + (r - 1) * 0.18) * (0.85 + random() * 0.3) / 100) * 100;
      const planCount = 1 + Math.floor(random() * 3);
      const ratePlans: RatePlan[] = [];
      for (let p = 1; p <= planCount; p++) {
        const policy = p === planCount && planCount > 1 ? 'non_refundable' : pick(random, POLICIES.slice(0, 3));
        const mealPlan = pick(random, MEALS.slice(0, p === 1 ? 2 : 4));
        ratePlans.push({
          id: `${roomtypeId}-p${p}`,
          roomtypeId,
          name: `${policy === 'non_refundable' ? 'Non-refundable' : 'Flexible stay'}, ${mealPlan.replace('_', ' ')}`,
          mealPlan,
          refundable: policy !== 'non_refundable',
          cancellationPolicy: policy,
          // Non-refundable rates are cheaper, as in the market.
          pricePercent: MEAL_PERCENT[mealPlan] - (policy === 'non_refundable' ? 12 : 0),
        });
      }
      roomTypes.push({
        id: roomtypeId,
        propertyId: id,
        name: ROOM_NAMES[(r - 1 + Math.floor(random() * 3)) % ROOM_NAMES.length]!,
        maxOccupancy: beds.maxOccupancy,
        bedGroups: beds.groups,
        inventory: 3 + Math.floor(random() * 18),
        basePrice,
        ratePlans,
      });
    }
    return {
      id,
      name,
      city: city.name,
      country: city.country,
      address: `${1 + Math.floor(random() * 300)} ${district}, ${city.name}`,
      starRating,
      latitude: round6(city.latitude + (random() - 0.5) * 0.12),
      longitude: round6(city.longitude + (random() - 0.5) * 0.12),
      timezone: city.timezone,
      updatedAt: new Date(DATASET_EPOCH - Math.floor(random() * YEAR_MS)),
      roomTypes,
    };
  }

  /** Rooms of a type still free on a night (YYYY-MM-DD), before bookings made in the simulator. */
  baseStock(room: RoomType, night: string): number {
    const random = prng(hash(this.seed, 'stock', room.id, night));
    // About one night in eight is sold out; otherwise a share of the inventory is left.
    if (random() < 0.125) return 0;
    return 1 + Math.floor(random() * room.inventory);
  }

  /** Nightly price before tax of a rate plan on a night, KRW (integer). */
  nightlyPrice(room: RoomType, plan: RatePlan, night: string): number {
    const date = new Date(`${night}T00:00:00Z`);
    const weekday = date.getUTCDay();
    const weekend = weekday === 5 || weekday === 6 ? 1.22 : 1;
    const month = date.getUTCMonth() + 1;
    const season = month === 7 || month === 8 ? 1.35 : month === 12 || month === 1 ? 1.15 : month === 4 || month === 10 ? 1.1 : 1;
    const jitter = 0.95 + prng(hash(this.seed, 'price', room.id, night))() * 0.1;
    return Math.round((room.basePrice * plan.pricePercent * weekend * season * jitter) / 10_000) * 100;
  }
}

/** Tax (VAT 10 %) and service charge (10 %) on a nightly price, KRW integers. */
export function taxAndFees(nightly: number): number {
  return Math.round(nightly * 0.2);
}

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
