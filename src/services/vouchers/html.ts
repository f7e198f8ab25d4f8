import { escapeHtml } from '../kernel/index.js';
import { voucherFooter, voucherSections, type VoucherSection } from './layout.js';
import type { Voucher } from './model.js';

/**
 * The voucher as one self-contained HTML page: an inline <style>, no script, no external
 * resource (the response's Content-Security-Policy allows nothing else). Every value is escaped,
 * so whatever a partner or guest typed (names, special requests) is shown as text.
 */

/** A tagged template whose interpolations are escaped, unless they are Html already. */
class Html {
  constructor(readonly text: string) {}
}

type Part = string | number | Html | null | undefined | Part[];

function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  const out = (value: Part): string =>
    value === null || value === undefined
      ? ''
      : value instanceof Html
        ? value.text
        : Array.isArray(value)
          ? value.map(out).join('')
          : escapeHtml(String(value));
  return new Html(strings.reduce((acc, s, i) => acc + s + (i < values.length ? out(values[i]) : ''), ''));
}

function sectionHtml(section: VoucherSection): Html {
  const rows = section.rows.map(
    (r) => html`<tr><th scope="row">${r.label}</th><td${r.field ? new Html(` data-field="${escapeHtml(r.field)}"`) : null}>${r.value}</td></tr>`,
  );
  return html`<section${section.emphasis ? new Html(' class="price"') : null}><h2>${section.title}</h2><table>${rows}</table></section>
`;
}

const STYLE = `
*{box-sizing:border-box}
body{margin:0;padding:32px 16px;background:#f3f4f6;color:#111827;font:15px/1.5 "Helvetica Neue",Arial,"Noto Sans",sans-serif}
main{max-width:760px;margin:0 auto;background:#fff;border:1px solid #d1d5db;border-radius:8px;padding:32px}
header{display:flex;justify-content:space-between;align-items:flex-start;gap:16px;border-bottom:2px solid #111827;padding-bottom:16px}
h1{margin:0;font-size:26px}
.sub{margin:4px 0 0;color:#4b5563}
.status{font-weight:700;letter-spacing:.06em;padding:6px 12px;border-radius:4px;border:2px solid currentColor;white-space:nowrap}
.status.valid{color:#047857}
.status.pending{color:#b45309}
.status.invalid{color:#b91c1c}
.notice{margin:20px 0 0;padding:12px 16px;border-radius:4px;font-weight:700}
.notice.invalid{background:#fee2e2;color:#991b1b;border:1px solid #fca5a5}
.notice.pending{background:#fef3c7;color:#92400e;border:1px solid #fcd34d}
section{margin-top:24px}
h2{font-size:13px;text-transform:uppercase;letter-spacing:.08em;color:#6b7280;margin:0 0 8px}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;vertical-align:top;padding:6px 0;border-bottom:1px solid #e5e7eb}
th{width:38%;font-weight:600;color:#374151;padding-right:16px}
td{white-space:pre-wrap;overflow-wrap:anywhere}
.price td{font-size:18px;font-weight:700}
footer{margin-top:28px;color:#6b7280;font-size:12px}
@media print{body{background:#fff;padding:0}main{border:0}}
`;

export function renderVoucherHtml(v: Voucher): string {
  const tone = !v.valid ? 'invalid' : v.status === 'pending' ? 'pending' : 'valid';
  const page = html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Booking voucher ${v.reservationId}</title>
<style>${new Html(STYLE)}</style>
</head>
<body>
<main>
<header>
<div>
<h1>Booking voucher</h1>
<p class="sub">${v.property.name}</p>
</div>
<div class="status ${tone}" id="status">${v.statusLabel}</div>
</header>
${v.notice ? html`<p class="notice ${tone}" role="alert">${v.notice}</p>` : null}
${voucherSections(v).map(sectionHtml)}<footer>${voucherFooter(v)}</footer>
</main>
</body>
</html>
`;
  return page.text;
}
