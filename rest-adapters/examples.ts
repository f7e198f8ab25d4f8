/**
 * Examples for the OpenAPI documents: a value for a schema, built from the examples its parts
 * declare (components such as Property carry whole ones), their defaults and enums, and else from
 * the field's name (one sandbox stay, one booking, one channel, consistent across the documents),
 * so Swagger UI and generated clients show realistic bodies instead of invented ones
 * (`"guests_child": 64`). test/contract/openapi-generators.test.ts checks that every example
 * validates against its schema.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const BOOKING_ID = '3f1c2b9e-5a7d-4c1e-9b2a-7d4e8f6a1c20';
const CHANNEL_ID = '8b6f0c3a-2d4e-4f71-a9c5-1e2d3c4b5a60';
const APP_ID = 'c2a4e6f8-1b3d-4a5c-8e7f-9a0b1c2d3e40';
const WEBHOOK_ID = 'e7d6c5b4-a392-4811-b0c9-d8e7f6a5b430';
const DELIVERY_ID = '5b4a3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c10';
const REQUEST_ID = '0d9c8b7a-6f5e-4d3c-b2a1-0f9e8d7c6b50';

const CHECKIN = '2026-12-24';
const CHECKOUT = '2026-12-26';
const AT = '2026-11-27T09:30:00.000Z';

/** Values by field name, where the schema itself gives no example. */
const BY_NAME: Record<string, unknown> = {
  id: BOOKING_ID,
  booking_id: BOOKING_ID,
  itinerary_id: BOOKING_ID,
  reservation_id: BOOKING_ID,
  userId: CHANNEL_ID,
  user_id: CHANNEL_ID,
  appId: APP_ID,
  app_id: APP_ID,
  webhook_id: WEBHOOK_ID,
  delivery_id: DELIVERY_ID,
  request_id: REQUEST_ID,
  timestamp: AT,
  createdAt: AT,
  updatedAt: AT,
  created_at: AT,
  updated_at: AT,
  checkin: CHECKIN,
  checkout: CHECKOUT,
  check_in: CHECKIN,
  check_out: CHECKOUT,
  new_checkin: '2026-12-25',
  new_checkout: '2026-12-27',
  expires: '2026-11-27T10:00:00.000Z',
  expires_at: '2026-11-27T10:00:00.000Z',
  free_cancellation_before: '2026-12-23T06:00:00.000Z',
  cancellationDeadline: '2026-12-23T06:00:00.000Z',
  currency: 'KRW',
  request_currency: 'KRW',
  billable_currency: 'KRW',
  default_currency: 'KRW',
  property_id: 1,
  propertyId: '1',
  roomtype_id: 'rt-1-deluxe-double',
  rateplan_id: 'rp-1-room-only',
  hubBookingNumber: 'HB20261127001',
  channelBookingNumber: 'OTA-2026-0042',
  channel_booking_number: 'OTA-2026-0042',
  affiliate_reference_id: 'OTA-2026-0042',
  confirmation_number: 'HB20261127001',
  propertyName: 'Hanok Stay Bukchon',
  property_name: 'Hanok Stay Bukchon',
  name: 'Hanok Stay Bukchon',
  company: 'Example Travel Co., Ltd.',
  bank_name: 'KB Kookmin Bank',
  bank_code: '004',
  account_number: '110-123-456789',
  account_holder: 'Example Travel Co., Ltd.',
  roomType: 'Deluxe Double Room',
  room_type: 'Deluxe Double Room',
  room_name: 'Deluxe Double Room',
  ratePlan: 'Room only, free cancellation',
  rate_plan: 'Room only, free cancellation',
  guestsAdult: 2,
  guestsChild: 0,
  guests_adult: 2,
  guests_child: 0,
  adults: 2,
  children: 0,
  rooms: 1,
  nights: 2,
  available_rooms: 3,
  bookerName: 'Minji Kim',
  booker_name: 'Minji Kim',
  bookerEmail: 'minji.kim@example.com',
  booker_email: 'minji.kim@example.com',
  email: 'minji.kim@example.com',
  guest_email: 'minji.kim@example.com',
  guestFirstName: 'Minji',
  guestLastName: 'Kim',
  guest_first_name: 'Minji',
  guest_last_name: 'Kim',
  given_name: 'Minji',
  family_name: 'Kim',
  first_name: 'Minji',
  last_name: 'Kim',
  guestPhone: '+82-10-1234-5678',
  guest_phone: '+82-10-1234-5678',
  phone: '+82-10-1234-5678',
  guestCountry: 'KR',
  guest_country: 'KR',
  country: 'KR',
  specialRequests: 'Late arrival, around 22:00',
  special_requests: 'Late arrival, around 22:00',
  totalAmount: '182400',
  netAmount: '182400',
  saleAmount: '199000',
  refundAmount: null,
  cancellationFee: null,
  sale_amount: 199000,
  cancellation_fee: 0,
  refund_amount: 182400,
  penalty_amount: 0,
  inclusive_amount: 182400,
  exclusive_amount: 165818,
  value: 91200,
  base_rate: 82909,
  tax_and_service_fee: 8291,
  lowest_nightly_price: 91200,
  lowest_total_price: 182400,
  commission_rate: 10,
  balance: 5000000,
  url: 'https://partner.example.com/hooks/channel',
  description: 'Booking events for the reservation system',
  token: 'pct_eyJ2IjoxfQ.c2lnbmF0dXJl',
  price_check_token: 'pct_eyJ2IjoxfQ.c2lnbmF0dXJl',
  book_token: 'bkt_eyJ2IjoxfQ.c2lnbmF0dXJl',
  access_token: 'oat_2b7e1516a8f14c3e9d0a7b6c5d4e3f21',
  client_id: 'cli_4f3e2d1c0b9a8f7e',
  client_secret: 'cs_9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d',
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  scope: 'properties:read search:availability reservations:read reservations:write',
  token_type: 'Bearer',
  expires_in: 1800,
  city: 'Seoul',
  star_rating: 4,
  star_rating_min: 3,
  href: '/api/channel/v2/bookings/retrieve?token=rtk_eyJ2IjoxfQ.c2lnbmF0dXJl',
  status: 'confirmed',
  amenities: 'free_wifi',
  meal_plan: 'room_only',
  date: CHECKIN,
  hub_booking_number: 'HB20261127001',
  arrival_time: '22:00',
  room_ids: BOOKING_ID,
  to: 'minji.kim@example.com',
  disabled_reason: 'Every attempt failed for 24 hours',
  response_body: 'ok',
  room_id: 'rm_3a1f9c2e7b',
  rate_id: 'rt_8d2c4e6f1a',
  bed_group_id: 'bg_1',
  bed_group_description: '1 double bed',
  book_tokens: 'bkt_eyJ2IjoxfQ.c2lnbmF0dXJl',
  next_page_token: 'eyJhZnRlciI6MTJ9',
  message: 'Done',
  reason: 'guest request',
  page: 1,
  per_page: 20,
  total: 1,
  total_pages: 1,
  retry_after: 30,
  status_code: 204,
  attempt: 1,
  attempts: 1,
  duration_ms: 84,
};

const BY_FORMAT: Record<string, string> = {
  uuid: BOOKING_ID,
  date: CHECKIN,
  'date-time': AT,
  email: 'minji.kim@example.com',
  uri: 'https://partner.example.com/hooks/channel',
  url: 'https://partner.example.com/hooks/channel',
  ipv4: '203.0.113.10',
};

function resolve(doc: Json, node: Json): Json {
  let current = node;
  for (let hops = 0; current && typeof current === 'object' && typeof current.$ref === 'string' && hops < 20; hops++) {
    current = (current.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((at: Json, key) => at?.[key], doc);
  }
  return current;
}

const typesOf = (schema: Json): string[] => (Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []);

/** A value of `schema` within `doc` (its $refs followed); `name` is the field it is the value of. */
export function exampleOf(doc: Json, schema: Json, name?: string, depth = 0): unknown {
  const s = resolve(doc, schema);
  if (!s || typeof s !== 'object' || depth > 12) return null;
  // A field the examples leave empty (a booking's refund before any cancellation), where it may be.
  if (name !== undefined && Object.hasOwn(BY_NAME, name) && BY_NAME[name] === null && allowsNull(doc, s)) return null;
  if (s.example !== undefined) return s.example;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if (s.const !== undefined) return s.const;
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum) && s.enum.length) {
    const named = name !== undefined ? BY_NAME[name] : undefined;
    return s.enum.includes(named) ? named : s.enum.find((v: unknown) => v !== null) ?? s.enum[0];
  }
  const branches: Json[] | undefined = s.anyOf ?? s.oneOf;
  if (branches) {
    const branch = branches.find((b) => !typesOf(resolve(doc, b)).every((t) => t === 'null')) ?? branches[0];
    return exampleOf(doc, branch, name, depth + 1);
  }
  if (s.allOf) {
    const parts = (s.allOf as Json[]).map((part) => exampleOf(doc, part, name, depth + 1));
    return parts.every((p) => p && typeof p === 'object' && !Array.isArray(p)) ? Object.assign({}, ...parts) : parts[0];
  }
  const types = typesOf(s).filter((t) => t !== 'null');
  const type = types[0] ?? (s.properties ? 'object' : s.items ? 'array' : undefined);
  const named = name !== undefined && Object.hasOwn(BY_NAME, name) ? BY_NAME[name] : undefined;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, property] of Object.entries<Json>(s.properties ?? {})) out[key] = exampleOf(doc, property, key, depth + 1);
      return out;
    }
    case 'array': {
      const item = exampleOf(doc, s.items ?? {}, name, depth + 1);
      return Array.from({ length: s.maxItems === 0 ? 0 : Math.max(1, s.minItems ?? 1) }, () => item);
    }
    case 'string':
      if (typeof named === 'string' && fitsString(s, named)) return named;
      if (s.format && BY_FORMAT[s.format]) return BY_FORMAT[s.format];
      if (typeof s.pattern === 'string' && /\\d/.test(s.pattern) && /^\^?\\d[+*{]/.test(s.pattern)) return '182400';
      return fitLength(s, name ? name.replace(/_/g, ' ') : 'text');
    case 'integer':
    case 'number': {
      const value = typeof named === 'number' ? named : s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
      const low = s.minimum ?? -Infinity;
      const high = s.maximum ?? Infinity;
      return Math.min(Math.max(value, low), high);
    }
    case 'boolean':
      return typeof named === 'boolean' ? named : true;
    default:
      return named ?? null;
  }
}

function allowsNull(doc: Json, s: Json): boolean {
  if (typesOf(s).includes('null')) return true;
  return ((s.anyOf ?? s.oneOf ?? []) as Json[]).some((b) => typesOf(resolve(doc, b)).includes('null'));
}

function fitsString(s: Json, value: string): boolean {
  if (s.minLength !== undefined && value.length < s.minLength) return false;
  if (s.maxLength !== undefined && value.length > s.maxLength) return false;
  if (typeof s.pattern === 'string') {
    try {
      if (!new RegExp(s.pattern, 'u').test(value)) return false;
    } catch {
      return false;
    }
  }
  return true;
}

function fitLength(s: Json, value: string): string {
  let out = value;
  while (s.minLength !== undefined && out.length < s.minLength) out += ` ${value}`;
  return s.maxLength !== undefined ? out.slice(0, s.maxLength) : out;
}
