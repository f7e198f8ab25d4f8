import { z } from '@hono/zod-openapi';
import { searchRules } from '../src/services/search/index.js';

/**
 * Query and path parameters arrive as strings (a repeated one as an array). These wrap the
 * service's field rules so a parameter is parsed, then checked by the same rule every surface uses.
 */

/**
 * A whole-number parameter checked by `rule`. The document says what a client may send: an integer
 * within the rule's bounds (`minimum`, `maximum` read from the rule, so the two cannot disagree),
 * not the string with a pattern that the parser reads first; a value outside them is still 400.
 */
export function intParam<T extends z.ZodType<unknown, number>>(rule: T) {
  return z
    .string()
    .regex(/^-?\d{1,16}$/, 'a whole number')
    .transform(Number)
    .pipe(rule)
    .openapi({ type: 'integer', ...boundsOf(rule) });
}

/** The same for a number (a star rating, a price): `type: number` with the rule's bounds. */
export function numberParam<T extends z.ZodType<unknown, number>>(rule: T) {
  return z
    .string()
    .regex(/^-?\d{1,16}(\.\d{1,6})?$/, 'a number')
    .transform(Number)
    .pipe(rule)
    .openapi({ type: 'number', ...boundsOf(rule) });
}

/** The inclusive bounds of a zod number rule, where it has ones worth saying (not the safe-integer range of z.int()). */
function boundsOf(rule: z.ZodType): { minimum?: number; maximum?: number } {
  const { minValue, maxValue } = rule as { minValue?: unknown; maxValue?: unknown };
  const said = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && Math.abs(v) < Number.MAX_SAFE_INTEGER;
  return { ...(said(minValue) && { minimum: minValue }), ...(said(maxValue) && { maximum: maxValue }) };
}

/** A path id: digits only, so `abc`, `1.5` and `-1` are 400 before any lookup. */
export const idParam = z
  .string()
  .regex(/^\d{1,10}$/, 'an integer id')
  .transform(Number)
  .pipe(searchRules.propertyId);

/** Repeatable `occupancy` (one per room, v1 search and v2 availability), checked by `rule`, documented once. */
export function occupancyListParam<T extends z.ZodType<unknown, string[]>>(rule: T, description: string) {
  return listParam(z.string(), { commas: false })
    .pipe(rule)
    .openapi({
      description: `${description} Example: occupancy=2&occupancy=1-5,9 (two rooms: two adults; one adult with children of 5 and 9).`,
      type: 'array',
      items: { type: 'string', pattern: '^\\d{1,2}(-\\d{1,2}(,\\d{1,2})*)?$' },
      param: { style: 'form', explode: true },
    });
}

/** Repeatable or comma-separated `property_id` (v1 search, v2 availability), documented once. */
export function propertyIdListParam(description: string) {
  return listParam(idParam, { commas: true })
    .pipe(searchRules.propertyIds)
    .openapi({
      description: `${description}. Example: property_id=12 or property_id=12,14.`,
      type: 'array',
      items: { type: 'string', pattern: '^\\d+(,\\d+)*$' },
      param: { style: 'form', explode: true },
    });
}

/** A parameter that may be repeated (`?a=1&a=2`) or comma-separated (`?a=1,2`). */
export function listParam<T extends z.ZodType<unknown, string>>(item: T, options: { commas: boolean }) {
  return z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => (options.commas ? s.split(',') : [s])))
    .pipe(z.array(item));
}
