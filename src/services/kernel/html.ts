/**
 * HTML text: the one escaping helper of the service's HTML pages (the voucher page in
 * services/vouchers/html.ts, the API docs page in rest-adapters/docs.ts).
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or a quoted attribute value: & < > " ' escaped, so it can never become markup. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}
