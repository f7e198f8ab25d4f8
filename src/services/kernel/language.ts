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
 * The characters of an `Accept-Language` value that are read: a browser's is well under 100, and
 * negotiation costs grow with the value (a 1 MiB one held the event loop for most of a second).
 * docs/decisions.md, "Hardening: subscriptions and refused work".
 */
export const ACCEPT_LANGUAGE_MAX_CHARS = 256;

/**
 * The language an `Accept-Language` header asks for (RFC 9110 §12.5.4, quality values honoured;
 * `en` matches `en-US`): the supported one it prefers most, or the default when it names none
 * (absent, malformed, `*` alone picks the default too, as the first supported). Only the entries
 * that end within the first ACCEPT_LANGUAGE_MAX_CHARS characters count; what follows is ignored.
 */
export function negotiateLanguage(acceptLanguage: string | undefined | null): Language {
  if (!acceptLanguage) return DEFAULT_LANGUAGE;
  const preferred = new Negotiator({ headers: { 'accept-language': leadingEntries(acceptLanguage) } }).language([...LANGUAGES]);
  return (preferred as Language | undefined) ?? DEFAULT_LANGUAGE;
}

/** The entries of a list header that end within its first ACCEPT_LANGUAGE_MAX_CHARS characters. */
function leadingEntries(value: string): string {
  if (value.length <= ACCEPT_LANGUAGE_MAX_CHARS) return value;
  const head = value.slice(0, ACCEPT_LANGUAGE_MAX_CHARS + 1);
  const end = head.lastIndexOf(',');
  return end > 0 ? head.slice(0, end) : '';
}

/**
 * A language named by a parameter (v2's `language`, a GraphQL argument): the supported one it
 * names (case-insensitive; a bare `ja` is `ja-JP`), else the default, as an unknown tag falls back.
 */
export function languageOf(tag: string | undefined | null): Language {
  if (!tag) return DEFAULT_LANGUAGE;
  return negotiateLanguage(tag.slice(0, ACCEPT_LANGUAGE_MAX_CHARS).replace(/[,;]/g, ''));
}

export function isLanguage(value: string): value is Language {
  return (LANGUAGES as readonly string[]).includes(value);
}
