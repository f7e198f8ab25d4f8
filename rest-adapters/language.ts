import type { Context } from 'hono';
import type { Language } from '../src/services/kernel/index.js';
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
