import { readFile } from 'node:fs/promises';
import PDFDocument from 'pdfkit';
import { voucherFooter, voucherSections } from './layout.js';
import type { Voucher } from './model.js';

/**
 * The voucher as an A4 PDF (pdfkit, pure JavaScript), drawn from the same model as the HTML.
 *
 * Without a font file the standard Helvetica is used, which covers the Windows-1252 repertoire
 * (Western European names); other characters (Hangul, kana, ...) are written without their
 * accents where that helps, else as "?", rather than as the garbage pdfkit would draw.
 * VOUCHER_PDF_FONT names a TrueType/OpenType font to embed instead (a subset of it is embedded).
 */

const fontCache = new Map<string, Promise<Buffer>>();

function fontData(file: string): Promise<Buffer> {
  let data = fontCache.get(file);
  if (!data) {
    data = readFile(file);
    // A failed read is not kept: the next voucher tries again (the file may be installed by then).
    data.catch(() => fontCache.delete(file));
    fontCache.set(file, data);
  }
  return data;
}

/** Windows-1252 characters beyond Latin-1 that Helvetica's encoding has. */
const CP1252_EXTRAS = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

function encodable(ch: string): boolean {
  const code = ch.codePointAt(0)!;
  return ch === '\n' || (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || CP1252_EXTRAS.has(ch);
}

/** Latin letters with a stroke, which Unicode does not decompose. */
const FOLDS: Record<string, string> = { Ł: 'L', ł: 'l', Đ: 'D', đ: 'd', Ħ: 'H', ħ: 'h', ı: 'i', Ŧ: 'T', ŧ: 't' };

/** Text Helvetica can draw: accents dropped where the letter alone is encodable, else "?". */
export function toWinAnsi(text: string): string {
  let out = '';
  for (const ch of text.normalize('NFC').replace(/\r\n?|\t/g, (m) => (m === '\t' ? ' ' : '\n'))) {
    if (encodable(ch)) {
      out += ch;
      continue;
    }
    const base = FOLDS[ch] ?? ch.normalize('NFD').replace(/\p{M}/gu, '');
    out += base && [...base].every(encodable) ? base : '?';
  }
  return out;
}

const MARGIN = 40;
const LABEL_WIDTH = 150;
const GAP = 12;

export async function renderVoucherPdf(v: Voucher, options: { fontFile?: string | undefined } = {}): Promise<Uint8Array> {
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    info: {
      Title: `Booking voucher ${v.reservationId}`,
      Subject: `${v.property.name}, ${v.checkin.date} to ${v.checkout.date}`,
      Creator: 'Channel API',
      CreationDate: v.issuedAt,
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const finished = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });

  let regular = 'Helvetica';
  let bold = 'Helvetica-Bold';
  let clean = toWinAnsi;
  if (options.fontFile) {
    doc.registerFont('voucher', await fontData(options.fontFile));
    regular = bold = 'voucher';
    clean = (text: string) => text.replace(/\r\n?/g, '\n');
  }

  const width = doc.page.width - 2 * MARGIN;
  const valueX = MARGIN + LABEL_WIDTH + GAP;
  const valueWidth = width - LABEL_WIDTH - GAP;
  const bottom = () => doc.page.height - MARGIN;

  const ensure = (height: number) => {
    if (doc.y + height > bottom()) doc.addPage();
  };

  // Header: title, property, status.
  doc.font(bold).fontSize(22).fillColor('#111827').text('Booking voucher', MARGIN, MARGIN, { width: width - 160 });
  doc.font(regular).fontSize(12).fillColor('#4b5563').text(clean(v.property.name), { width: width - 160 });
  const statusColor = !v.valid ? '#b91c1c' : v.status === 'pending' ? '#b45309' : '#047857';
  doc.font(bold).fontSize(14).fillColor(statusColor).text(clean(v.statusLabel), MARGIN + width - 150, MARGIN + 4, { width: 150, align: 'right' });
  doc.y = Math.max(doc.y, MARGIN + 52);
  doc.moveTo(MARGIN, doc.y).lineTo(MARGIN + width, doc.y).lineWidth(1.5).strokeColor('#111827').stroke();
  doc.y += 10;

  if (v.notice) {
    const text = clean(v.notice);
    doc.font(bold).fontSize(11);
    const h = doc.heightOfString(text, { width: width - 20 }) + 16;
    ensure(h);
    const top = doc.y;
    doc.rect(MARGIN, top, width, h).fill(v.valid ? '#fef3c7' : '#fee2e2');
    doc.fillColor(v.valid ? '#92400e' : '#991b1b').text(text, MARGIN + 10, top + 8, { width: width - 20 });
    doc.y = top + h + 6;
  }

  for (const section of voucherSections(v)) {
    ensure(40);
    doc.y += 8;
    doc.font(bold).fontSize(9).fillColor('#6b7280').text(clean(section.title.toUpperCase()), MARGIN, doc.y, { width, characterSpacing: 0.8 });
    doc.y += 2;
    const size = section.emphasis ? 13 : 10;
    for (const { label, value: raw } of section.rows) {
      const value = clean(raw);
      doc.font(regular).fontSize(size);
      const h = Math.max(doc.heightOfString(value, { width: valueWidth }), doc.font(bold).heightOfString(label, { width: LABEL_WIDTH }));
      ensure(h + 6);
      const top = doc.y;
      doc.font(bold).fontSize(size).fillColor('#374151').text(label, MARGIN, top, { width: LABEL_WIDTH });
      doc.font(section.emphasis ? bold : regular).fillColor('#111827').text(value, valueX, top, { width: valueWidth });
      const end = top + h + 3;
      doc.moveTo(MARGIN, end).lineTo(MARGIN + width, end).lineWidth(0.5).strokeColor('#e5e7eb').stroke();
      doc.y = end + 3;
    }
  }

  const footer = clean(voucherFooter(v));
  doc.font(regular).fontSize(8);
  ensure(doc.heightOfString(footer, { width }) + 12);
  doc.y += 12;
  doc.fillColor('#6b7280').text(footer, MARGIN, doc.y, { width });

  doc.end();
  await finished;
  return new Uint8Array(Buffer.concat(chunks));
}
