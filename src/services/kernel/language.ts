import Negotiator from 'negotiator';
import { DEFAULT_LANGUAGE, LANGUAGES, type Language } from './enums.js';

// The default language (DEFAULT_LANGUAGE) is ko-KR, which every LocalizedText has.

/**
 * Languages of content (docs/decisions.md, "Content and languages"): which one a request gets, and
 * how one text is read in it. One place decides both, for every surface.
 */

/**
 * A text in the provider's languages: the default language always, the others where translated.
 * An empty translation counts as missing.
 */
export type LocalizedText = { readonly [L in Language]?: string } & { readonly 'ko-KR': string };

/** The text in `language`, or in the default language where it has no translation (never empty). */
export function textIn(text: LocalizedText, language: Language): string {
  return text[language] || text['ko-KR'];
}

/**
 * The language an `Accept-Language` header asks for (RFC 9110 §12.5.4, quality values honoured;
 * `en` matches `en-US`): the supported one it prefers most, or the default when it names none
 * (absent, malformed, `*` alone picks the default too, as the first supported).
 */
export function negotiateLanguage(acceptLanguage: string | undefined | null): Language {
  if (!acceptLanguage) return DEFAULT_LANGUAGE;
  const preferred = new Negotiator({ headers: { 'accept-language': acceptLanguage } }).language([...LANGUAGES]);
  return (preferred as Language | undefined) ?? DEFAULT_LANGUAGE;
}

/**
 * A language named by a parameter (v2's `language`, a GraphQL argument): the supported one it
 * names (case-insensitive; a bare `ja` is `ja-JP`), else the default, as an unknown tag falls back.
 */
export function languageOf(tag: string | undefined | null): Language {
  if (!tag) return DEFAULT_LANGUAGE;
  return negotiateLanguage(tag.replace(/[,;]/g, ''));
}

export function isLanguage(value: string): value is Language {
  return (LANGUAGES as readonly string[]).includes(value);
}
