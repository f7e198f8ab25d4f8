import type { z } from 'zod';

/**
 * Text the database can store, as a rule on a string schema. PostgreSQL text cannot hold NUL
 * (U+0000): the write (or lookup) fails. A lone UTF-16 surrogate is not Unicode at all: PostgreSQL
 * stores U+FFFD for it, and the embedded database (PGlite) refuses some sequences of them outright.
 * Both are refused as a bad field (400 naming it) instead of failing the request.
 */
export function storableText<T extends z.ZodString>(rule: T): T {
  return rule
    .refine((text) => !text.includes('\u0000'), 'must not contain a NUL character (\\u0000)')
    .refine((text) => !LONE_SURROGATE.test(text), 'must be well-formed Unicode (no lone surrogate)');
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
