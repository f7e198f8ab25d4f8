import { VoucherNotAcceptableError, type VoucherFormat } from '../../src/services/vouchers/index.js';

/**
 * The wire side of vouchers: choosing the format of GET /reservations/{id}/voucher from Accept,
 * the HTML answer's Content-Security-Policy, and where the REST voucher of a booking is.
 */

/**
 * What the voucher response sends as Content-Security-Policy: the page is self-contained (one
 * inline <style>, no script, no external resource), so nothing else may load or run.
 */
export const VOUCHER_HTML_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The format of a GET: `format` when given (it wins over Accept), else the Accept header's
 * preference between application/pdf and text/html (q-values; a more specific range wins over
 * a wildcard); PDF when Accept is absent, `*\/*`, or likes both equally. An Accept that allows
 * neither: 406 NOT_ACCEPTABLE.
 */
export function chooseVoucherFormat(format: VoucherFormat | undefined, accept: string | undefined): VoucherFormat {
  if (format) return format;
  if (!accept?.trim()) return 'pdf';
  const ranges = accept.split(',').flatMap((entry) => {
    const [range = '', ...params] = entry.split(';').map((s) => s.trim().toLowerCase());
    if (!range) return [];
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    return Number.isFinite(q) ? [{ range, q: Math.min(1, Math.max(0, q)) }] : [];
  });
  const quality = (media: string) => {
    const [type] = media.split('/');
    const match =
      ranges.find((r) => r.range === media) ?? ranges.find((r) => r.range === `${type}/*`) ?? ranges.find((r) => r.range === '*/*' || r.range === '*');
    return match?.q ?? 0;
  };
  const pdf = quality('application/pdf');
  const html = quality('text/html');
  if (pdf === 0 && html === 0) throw new VoucherNotAcceptableError();
  return html > pdf ? 'html' : 'pdf';
}

/** Where the REST voucher of a booking is (relative, like v2's links): GraphQL gives these. */
export function voucherPaths(bookingId: string): Record<VoucherFormat, string> {
  const base = `/channel/v1/reservations/${encodeURIComponent(bookingId)}/voucher`;
  return { pdf: `${base}?format=pdf`, html: `${base}?format=html` };
}
