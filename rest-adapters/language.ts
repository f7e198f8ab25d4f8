import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { LANGUAGES, type Language } from '../src/services/kernel/index.js';
import type { HttpEnv } from './env.js';

/**
 * Says which language an answer is in (docs/decisions.md, "Content and languages"): every content
 * and search route calls it, so the answer carries `Content-Language` and `Vary: Accept-Language`
 * (caches keep one copy per language). The language is the request's, negotiated from
 * `Accept-Language` (ctx.language), unless the route takes its own (v2 availability's `language`).
 */
export function servedIn(c: Context<HttpEnv>, language: Language = c.get('ctx').language): Language {
  c.header('Content-Language', language);
  c.header('Vary', 'Accept-Language', { append: true });
  return language;
}

/** The OpenAPI headers of an answer servedIn sets: `{ 200: { ..., headers: SERVED_IN_HEADERS } }`. */
export const SERVED_IN_HEADERS = z.object({
  'Content-Language': z.enum(LANGUAGES).openapi({
    description: 'The language of the texts in the answer (Accept-Language negotiated; unsupported or absent: ko-KR)',
  }),
  Vary: z.string().regex(/Accept-Language/).openapi({ description: 'Accept-Language among others: caches keep one answer per language' }),
});

/**
 * The `Accept-Language` request header as the content routes document it (a header, so no
 * documented path gains a query parameter the specification does not list). Documented only: the
 * value is negotiated (never refused), so the route runs no validator for it.
 */
export const acceptLanguageParameter = {
  name: 'Accept-Language',
  in: 'header',
  required: false,
  description:
    `The language of the texts (descriptions, names, captions, policies): ${LANGUAGES.join(', ')}. Quality values are honoured ` +
    '(`zh-CN;q=0.9, en;q=0.5`), and a bare `en` or `ja` picks en-US or ja-JP. Absent or unsupported: ko-KR. A text not translated into ' +
    'the language is served in ko-KR, field by field. The answer names its language in Content-Language and carries Vary: Accept-Language. ' +
    'Example: `en-US`.',
  schema: { type: 'string' },
} as const;
