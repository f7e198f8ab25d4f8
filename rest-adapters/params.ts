import { z } from '@hono/zod-openapi';
import { searchRules } from '../src/services/search/index.js';

/**
 * Query and path parameters arrive as strings (a repeated one as an array). These wrap the
 * service's field rules so a parameter is parsed, then checked by the same rule every surface uses.
 */

export function intParam<T extends z.ZodType<unknown, number>>(rule: T) {
  return z.string().regex(/^-?\d{1,16}$/, 'a whole number').transform(Number).pipe(rule);
}

export function numberParam<T extends z.ZodType<unknown, number>>(rule: T) {
  return z.string().regex(/^-?\d{1,16}(\.\d{1,6})?$/, 'a number').transform(Number).pipe(rule);
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
      description,
      type: 'array',
      items: { type: 'string', pattern: '^\\d{1,2}(-\\d{1,2}(,\\d{1,2})*)?$' },
      param: { style: 'form', explode: true },
      example: ['2', '1-5,9'],
    });
}

/** Repeatable or comma-separated `property_id` (v1 search, v2 availability), documented once. */
export function propertyIdListParam(description: string) {
  return listParam(idParam, { commas: true })
    .pipe(searchRules.propertyIds)
    .openapi({
      description,
      type: 'array',
      items: { type: 'string', pattern: '^\\d+(,\\d+)*$' },
      param: { style: 'form', explode: true },
      example: ['12'],
    });
}

/** A parameter that may be repeated (`?a=1&a=2`) or comma-separated (`?a=1,2`). */
export function listParam<T extends z.ZodType<unknown, string>>(item: T, options: { commas: boolean }) {
  return z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => (options.commas ? s.split(',') : [s])))
    .pipe(z.array(item));
}
