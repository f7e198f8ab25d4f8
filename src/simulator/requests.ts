import type { Context } from 'hono';
import { z } from 'zod';
import { PROVIDER_BOOKING_STATUSES } from '../services/kernel/index.js';
import {
  AVAILABILITY_BATCH_LIMIT,
  type AvailabilityRequest,
  type BookRequest,
  type ChangeQuoteRequest,
  type ModifyRequest,
  type PriceCheckRequest,
} from '../upstream/protocol.js';

/** The simulator's errors and request validation (strict: an unknown key is a caller bug, e.g. camelCase, not something to ignore). */

// ---------------------------------------------------------------------------------------------
// Errors

export class SimulatorError extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 413 | 500,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const invalid = (message: string) => new SimulatorError(400, 'invalid_request', message);
export const notFound = (message: string) => new SimulatorError(404, 'not_found', message);

export function errorResponse(c: Context, error: SimulatorError): Response {
  return c.json({ error: { code: error.code, message: error.message } }, error.status);
}

// ---------------------------------------------------------------------------------------------
// Request validation (strict: an unknown key is a caller bug, e.g. camelCase, not something to ignore)

const MAX_NIGHTS = 30;
export const MAX_IDS = 1000;

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD')
  .refine(isCalendarDate, 'not a calendar date');

/** Rejects dates such as 2027-02-30, which Date would roll over into March. */
function isCalendarDate(d: string): boolean {
  const t = Date.parse(`${d}T00:00:00Z`);
  return !Number.isNaN(t) && new Date(t).toISOString().startsWith(d);
}

export const occupancy = z
  .array(
    z.strictObject({
      adults: z.number().int().min(1).max(8),
      children_ages: z.array(z.number().int().min(0).max(17)).max(8),
    }),
  )
  .min(1)
  .max(8);

export const propertyId = z.number().int().positive();

const stayFields = { checkin: day, checkout: day, occupancy };

/** Checkout after checkin, at most MAX_NIGHTS nights; skipped when a date is already invalid. */
function checkStay(stay: { checkin: string; checkout: string }, ctx: z.RefinementCtx): void {
  if (!isCalendarDate(stay.checkin) || !isCalendarDate(stay.checkout)) return;
  const nights = (Date.parse(stay.checkout) - Date.parse(stay.checkin)) / 86_400_000;
  if (nights < 1) ctx.addIssue({ code: 'custom', path: ['checkout'], message: 'must be after checkin' });
  else if (nights > MAX_NIGHTS) ctx.addIssue({ code: 'custom', path: ['checkout'], message: `a stay is at most ${MAX_NIGHTS} nights` });
}

/** Amenity codes a property must all have: snake_case codes (no commas), at most MAX_AMENITIES. */
export const MAX_AMENITIES = 50;
const amenityCodes = z.array(z.string().regex(/^[a-z0-9_]{1,64}$/, 'expected an amenity code (a-z, 0-9, _)')).max(MAX_AMENITIES);

export const availabilitySchema = z
  .strictObject({
    ...stayFields,
    property_ids: z.array(propertyId).max(MAX_IDS).optional(),
    city: z.string().min(1).max(100).optional(),
    star_rating_min: z.number().min(0).max(5).optional(),
    amenities: amenityCodes.optional(),
    detail: z.enum(['lowest', 'rates']),
  })
  .superRefine(checkStay) satisfies z.ZodType<AvailabilityRequest>;

/** A batch item always names its properties, so a batch never scans the catalog. */
export const batchItemSchema = z
  .strictObject({
    ...stayFields,
    property_ids: z.array(propertyId).min(1).max(MAX_IDS),
    city: z.string().min(1).max(100).optional(),
    star_rating_min: z.number().min(0).max(5).optional(),
    amenities: amenityCodes.optional(),
    detail: z.enum(['lowest', 'rates']),
  })
  .superRefine(checkStay) satisfies z.ZodType<AvailabilityRequest>;

/** The envelope only: each item is checked on its own, and a bad one is answered in its slot. */
export const availabilityBatchSchema = z.strictObject({ items: z.array(z.unknown()).min(1).max(AVAILABILITY_BATCH_LIMIT) });

const rateFields = {
  property_id: propertyId,
  roomtype_id: z.string().min(1).max(100),
  rateplan_id: z.string().min(1).max(100),
  ...stayFields,
};

export const priceCheckSchema = z
  .strictObject({ ...rateFields, expected_total: z.number().int().nonnegative() })
  .superRefine(checkStay) satisfies z.ZodType<PriceCheckRequest>;

export const bookSchema = z
  .strictObject({
    reference: z.string().min(1).max(200),
    ...rateFields,
    total: z.number().int().nonnegative(),
    guest: z.strictObject({
      first_name: z.string().max(200).nullable(),
      last_name: z.string().max(200).nullable(),
      name: z.string().min(1).max(400),
    }),
  })
  .superRefine(checkStay) satisfies z.ZodType<BookRequest>;

export const batchSchema = z.strictObject({ ids: z.array(propertyId).min(1).max(MAX_IDS) });

export const changeQuoteSchema = z.strictObject({ checkin: day, checkout: day }).superRefine(checkStay) satisfies z.ZodType<ChangeQuoteRequest>;

export const modifySchema = z
  .strictObject({ modification_id: z.string().min(1).max(200), checkin: day, checkout: day, total: z.number().int().nonnegative() })
  .superRefine(checkStay) satisfies z.ZodType<ModifyRequest>;

export const listQuerySchema = z.object({
  cursor: z.string().max(100).optional(),
  limit: z
    .string()
    .regex(/^\d+$/, 'expected an integer')
    .transform(Number)
    .pipe(z.number().int().min(1).max(1000))
    .default(100),
  updated_since: z.iso.datetime({ offset: true }).optional(),
  include: z.literal('rooms').optional(),
});

/** POST /_control/properties/{id}/content: to this revision, or (empty body) the next one. */
export const controlContentSchema = z.strictObject({ revision: z.number().int().min(0).max(1_000_000).optional() });

export const controlStatusSchema = z.strictObject({
  // The statuses the property may report through the control route: the provider's, but cancelled.
  status: z.enum(PROVIDER_BOOKING_STATUSES).exclude(['cancelled']),
});

export function parse<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw invalid(result.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; '));
}

export async function body<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  let json: unknown;
  try {
    json = JSON.parse(await c.req.text());
  } catch {
    throw invalid('the body must be JSON');
  }
  return parse(schema, json);
}

export function pathId(raw: string): number {
  if (!/^[1-9]\d{0,8}$/.test(raw)) throw invalid('a property id is a positive integer');
  return Number(raw);
}

/** Cursors are the last id of the page, base64url-encoded so callers treat them as opaque. */
export const encodeCursor = (id: number) => Buffer.from(String(id)).toString('base64url');

export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString();
  if (!/^\d{1,9}$/.test(text)) throw invalid('cursor: not a cursor from this server');
  return Number(text);
}
