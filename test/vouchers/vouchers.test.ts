import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { escapeHtml } from '../../src/services/kernel/index.js';
import {
  MAIL_OUTBOX_PURGE_EVERY_MS,
  purgeMailOutbox,
  smtpTransportOptions,
  toWinAnsi,
  renderVoucherPdf,
  anyRecipientAllowed,
  VOUCHER_MAILS_PER_CHANNEL_DAY,
  VOUCHER_MAILS_PER_CHANNEL_HOUR,
  VOUCHER_MAILS_PER_HOUR,
  voucherMailLimiters,
  voucherMailLimits,
  voucherOf,
} from '../../src/services/vouchers/index.js';
import { chooseVoucherFormat, VOUCHER_HTML_CSP } from '../../rest-adapters/v1/voucherFormat.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { channelState } from '../helpers/bookingInvariants.js';
import { launchChromium } from '../helpers/browser.js';
import { day, v1 } from '../helpers/flow.js';
import { expectError } from '../helpers/http.js';
import { apiKey, startTestService, testEnv, type TestService } from '../helpers/service.js';

/**
 * Vouchers (docs/spec/channel-api.md §4.7; docs/decisions.md "Vouchers"): GET /reservations/{id}/voucher as PDF
 * (parsed with pdf.js) and HTML (rendered in headless Chromium, screenshotted), e-mailed by
 * POST /reservations/{id}/send-voucher through the file transport (the .eml parsed) and through
 * SMTP (a local server receives it), and the GraphQL twins; validation, scope and tenant rules.
 */

const require = createRequire(import.meta.url);
const STANDARD_FONTS = join(dirname(require.resolve('pdfjs-dist/package.json')), 'standard_fonts') + '/';

let t: TestService;
let production: TestService;
let owner: IssuedCredentials;
let other: IssuedCredentials;
let api: ReturnType<typeof v1>;

beforeAll(async () => {
  [t, production] = await Promise.all([startTestService(), startTestService({ CHANNEL_ENV: 'production' })]);
  [owner, other] = await Promise.all([t.channel({ name: 'Voucher Owner' }), t.channel({ name: 'Someone Else' })]);
  api = v1(t, owner);
});
afterAll(async () => {
  await Promise.all([t?.close(), production?.close()]);
});

interface BookingRecord {
  id: string;
  hubBookingNumber: string | null;
  propertyId: string;
  propertyName: string;
  checkin: string;
  checkout: string;
  totalAmount: string;
  bookerEmail: string | null;
  [key: string]: unknown;
}

let nextProperty = 1;

/** A fresh confirmed v1 booking of `who` (by default the owner), at a property of its own. */
async function book(extra: Record<string, unknown> = {}, on: ReturnType<typeof v1> = api, policy?: 'flexible'): Promise<BookingRecord> {
  const offer = await on.offer({ from: nextProperty, ...(policy ? { policy } : {}) });
  nextProperty = offer.propertyId + 1;
  const res = await on.book({ book_token: offer.bookToken, booker_name: 'Kim Minji', booker_email: 'minji@example.com', ...extra });
  expect(res.status).toBe(201);
  return (await res.json()).data;
}

function voucher(id: string, query = '', headers: Record<string, string> = {}, who: IssuedCredentials = owner, on: TestService = t) {
  return on.request(`/channel/v1/reservations/${id}/voucher${query}`, { headers: { ...apiKey(who), ...headers } });
}

function sendVoucher(id: string, body?: unknown, headers: Record<string, string> = {}, who: IssuedCredentials = owner, on: TestService = t) {
  return on.request(`/channel/v1/reservations/${id}/send-voucher`, {
    method: 'POST',
    headers: { ...apiKey(who), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

/** The text of every page of a PDF, by a real parser (Mozilla's pdf.js). */
async function pdfText(bytes: Uint8Array): Promise<string> {
  const pdf = await getDocument({ data: new Uint8Array(bytes), standardFontDataUrl: STANDARD_FONTS, isEvalSupported: false }).promise;
  const pages: string[] = [];
  for (let n = 1; n <= pdf.numPages; n++) {
    const content = await (await pdf.getPage(n)).getTextContent();
    pages.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
  }
  await pdf.destroy();
  return pages.join('\n').replace(/\s+/g, ' ');
}

async function propertyOf(id: string) {
  const res = await t.request(`/channel/v1/properties/${id}`, { headers: apiKey(owner) });
  return (await res.json()).data as { name: string; address: string; timezone: string };
}

function outbox(service: TestService): string[] {
  const dir = join(service.config.dataDir, 'outbox-mail');
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.eml')).sort() : [];
}

describe('GET /reservations/{id}/voucher', () => {
  let booking: BookingRecord;
  beforeAll(async () => {
    booking = await book(
      {
        guest_first_name: 'Minji',
        guest_last_name: 'Kim',
        guests_adult: 2,
        channel_booking_number: 'OTA-7731',
        special_requests: 'High floor, <b>quiet</b> room & "late" check-in',
        sale_amount: 999_000,
      },
      api,
      'flexible',
    );
  });

  it('is a PDF by default: inline, named after the booking, not cached, with the booking, property, dates, guests, price and policy', async () => {
    const res = await voucher(booking.id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(`inline; filename="voucher-${booking.id}.pdf"`);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('vary')).toContain('Accept');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(Buffer.from(bytes.subarray(0, 5)).toString('latin1')).toBe('%PDF-');

    const text = await pdfText(bytes);
    const property = await propertyOf(booking.propertyId);
    const row = await t.service.deps.db.prisma.booking.findUniqueOrThrow({ where: { id: booking.id } });
    expect(booking.hubBookingNumber).toBeTruthy();
    for (const expected of [
      `Booking number ${booking.id}`,
      `Confirmation number ${row.confirmationNumber}`,
      `Provider confirmation ${booking.hubBookingNumber}`,
      'OTA-7731',
      'CONFIRMED',
      property.name,
      property.address,
      property.timezone,
      booking.checkin,
      booking.checkout,
      'from 15:00',
      'Kim Minji',
      'Minji Kim',
      '2 adults',
      // The partner's customer price, not what the channel paid.
      'KRW 999,000',
      'Flexible: free cancellation until',
      '100% of the total',
      'High floor, <b>quiet</b> room & "late" check-in',
    ]) {
      expect(text, expected).toContain(expected);
    }
    expect(text).not.toContain(`KRW ${Number(booking.totalAmount).toLocaleString('en-US')}`);
  });

  it('?format=pdf|html wins over Accept; otherwise Accept decides (PDF for */* or a tie); neither: 406; a bad format: 400', async () => {
    const type = async (query: string, accept?: string) => {
      const res = await voucher(booking.id, query, accept === undefined ? {} : { accept });
      await res.arrayBuffer();
      return res.status === 200 ? res.headers.get('content-type') : res.status;
    };
    expect(await type('?format=pdf', 'text/html')).toBe('application/pdf');
    expect(await type('?format=html', 'application/json')).toBe('text/html; charset=utf-8');
    expect(await type('', 'text/html')).toBe('text/html; charset=utf-8');
    expect(await type('', 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8')).toBe('text/html; charset=utf-8');
    expect(await type('', '*/*')).toBe('application/pdf');
    expect(await type('', 'application/*')).toBe('application/pdf');
    expect(await type('', 'application/pdf;q=0.5, text/html;q=0.4')).toBe('application/pdf');
    expect(await type('', 'application/pdf;q=0, text/*')).toBe('text/html; charset=utf-8');

    const refused = await voucher(booking.id, '', { accept: 'application/json' });
    const error = await expectError(refused, 406, 'NOT_ACCEPTABLE');
    expect(error.details).toEqual({ available: ['application/pdf', 'text/html'] });
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/);

    const bad = await expectError(await voucher(booking.id, '?format=docx'), 400, 'VALIDATION_ERROR');
    expect(bad.details!.fields).toEqual([{ field: 'format', reason: 'pdf or html' }]);
  });

  it('the HTML escapes every value, runs no script and sends its own strict Content-Security-Policy', async () => {
    const res = await voucher(booking.id, '?format=html');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`inline; filename="voucher-${booking.id}.html"`);
    expect(res.headers.get('content-security-policy')).toBe(VOUCHER_HTML_CSP);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).toContain('High floor, &lt;b&gt;quiet&lt;/b&gt; room &amp; &quot;late&quot; check-in');
    expect(html).not.toContain('<b>quiet</b>');
    expect(html).not.toMatch(/<script|<link|<img|src=|href=/i);
    expect(html).toContain(`data-field="booking-number">${booking.id}<`);
  });

  it('the HTML renders in headless Chromium under its policy: the text is there, the inline style applies, a screenshot is taken', async () => {
    const browser = await launchChromium({ name: 'voucher', viewport: { width: 900, height: 1200 } });
    const { context } = browser;
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      const problems: string[] = [];
      page.on('console', (msg) => {
        if (msg.type() === 'error' || /Content Security Policy/i.test(msg.text())) problems.push(msg.text());
      });
      page.on('pageerror', (error) => problems.push(String(error)));
      // The page is served as the service serves it, headers (its CSP) included; nothing reaches a network.
      await page.route('**/*', async (route) => {
        const url = new URL(route.request().url());
        if (url.host !== 'voucher.test') return route.abort();
        const res = await voucher(booking.id, url.search, { accept: 'text/html' });
        await route.fulfill({ status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) });
      });
      const response = await page.goto('https://voucher.test/voucher');
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toBe(VOUCHER_HTML_CSP);

      const text = (await page.textContent('body')) ?? '';
      expect(text).toContain(booking.id);
      expect(text).toContain(booking.hubBookingNumber!);
      expect(text).toContain(booking.propertyName);
      expect(text).toContain('High floor, <b>quiet</b> room & "late" check-in');
      expect(await page.textContent('[data-field="checkin"]')).toContain(booking.checkin);
      expect(await page.title()).toBe(`Booking voucher ${booking.id}`);
      // The inline <style> applied (a CSP that refused it would leave the default black text).
      const color = await page.$eval('#status', (el) => getComputedStyle(el).color);
      expect(color).toBe('rgb(4, 120, 87)');
      expect(problems).toEqual([]);

      const png = await page.screenshot({ fullPage: true });
      const file = join(tmpdir(), `voucher-${booking.id}.png`);
      writeFileSync(file, png);
      expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
      const width = png.readUInt32BE(16);
      const height = png.readUInt32BE(20);
      expect(width).toBe(900);
      expect(height).toBeGreaterThan(800);
      expect(png.length).toBeGreaterThan(20_000);
    } finally {
      await browser.close();
    }
  });

  it("a cancelled booking's voucher is served and says CANCELLED, with the fee and the refund", async () => {
    const cancelled = await book({}, api, 'flexible');
    expect((await api.cancel(cancelled.id)).status).toBe(200);
    const text = await pdfText(new Uint8Array(await (await voucher(cancelled.id)).arrayBuffer()));
    expect(text).toContain('This booking is CANCELLED. This voucher is not valid for a stay.');
    expect(text).toContain('Cancellation fee KRW 0');
    expect(text).toContain(`Refund KRW ${Number(cancelled.totalAmount).toLocaleString('en-US')}`);
    // Nothing is paid for a stay any more: the price is what it was booked for, not a "total paid".
    expect(text).toContain(`Paid when booked KRW ${Number(cancelled.totalAmount).toLocaleString('en-US')}`);
    expect(text).not.toContain('Total paid');
    const html = await (await voucher(cancelled.id, '?format=html')).text();
    expect(html).toContain('<div class="status invalid" id="status">CANCELLED</div>');
  });

  it('a multi-room reservation (v2, two rooms): one voucher lists every room, by the reservation id or any room id', async () => {
    const query = [`checkin=${day(35)}`, `checkout=${day(37)}`, 'occupancy=2', 'occupancy=1'];
    let bookHref: string | undefined;
    for (let id = 40; id < 80 && !bookHref; id++) {
      const res = await t.request(`/api/channel/v2/properties/availability?${[...query, `property_id=${id}`].join('&')}`, { headers: apiKey(owner) });
      const [property] = await res.json();
      for (const room of property?.rooms ?? []) {
        for (const rate of room.rates) {
          const link = (Object.values(rate.bed_groups)[0] as { links: { price_check?: { href: string } } } | undefined)?.links.price_check;
          if (!link || bookHref) continue;
          const checked = await (await t.request(link.href, { headers: apiKey(owner) })).json();
          bookHref = checked.links?.book?.href;
        }
      }
    }
    expect(bookHref).toBeTruthy();
    const created = await t.request(bookHref!, {
      method: 'POST',
      headers: { ...apiKey(owner), 'content-type': 'application/json' },
      body: JSON.stringify({ rooms: [{ given_name: 'Minji', family_name: 'Kim' }, { given_name: 'Jisoo', family_name: 'Park' }], affiliate_reference_id: 'OTA-2R' }),
    });
    expect(created.status).toBe(201);
    const { itinerary_id: reservationId } = await created.json();
    const rooms = await t.service.deps.db.prisma.booking.findMany({ where: { itineraryId: reservationId } });
    expect(rooms).toHaveLength(2);
    const second = rooms.find((r) => r.id !== reservationId)!;

    for (const id of [reservationId, second.id]) {
      const text = await pdfText(new Uint8Array(await (await voucher(id)).arrayBuffer()));
      expect(text).toContain(`Reservation number ${reservationId}`);
      // One confirmation number for the reservation; the provider's, per room.
      expect(new Set(rooms.map((r) => r.confirmationNumber)).size).toBe(1);
      expect(text).toContain(`Confirmation number ${rooms[0]!.confirmationNumber}`);
      for (const room of rooms) expect(text).toContain(`Provider confirmation ${room.hubBookingNumber}`);
      // Section titles are drawn in capitals.
      expect(text).toContain('ROOM 1 OF 2');
      expect(text).toContain('ROOM 2 OF 2');
      for (const room of rooms) expect(text).toContain(room.id);
      expect(text).toContain('Minji Kim');
      expect(text).toContain('Jisoo Park');
      expect(text).toContain('3 adults');
      const total = rooms.reduce((sum, r) => sum + r.totalAmount, 0n);
      expect(text).toContain(`Total paid KRW ${Number(total).toLocaleString('en-US')}`);
      expect(text).not.toContain('Not included');
    }

    // One room cancelled: the total is what the live room costs; the cancelled one shows its fee and refund.
    const cancelled = await t.request(`/channel/v1/reservations/${reservationId}/rooms/${second.id}`, { method: 'DELETE', headers: apiKey(owner) });
    expect(cancelled.status).toBe(200);
    const after = await t.service.deps.db.prisma.booking.findUniqueOrThrow({ where: { id: second.id } });
    expect(after.status).toBe('cancelled');
    const live = rooms.find((r) => r.id === reservationId)!;
    const krw = (n: bigint) => `KRW ${Number(n).toLocaleString('en-US')}`;
    const text = await pdfText(new Uint8Array(await (await voucher(reservationId)).arrayBuffer()));
    expect(text).toContain(`Total paid ${krw(live.totalAmount)}`);
    expect(text).toContain('Not included 1 cancelled room (fee and refund shown with each room)');
    expect(text).toContain(`Cancellation fee ${krw(after.cancellationFee!)}`);
    expect(text).toContain(`Refund ${krw(after.refundAmount!)}`);
    const html = await (await voucher(reservationId, '?format=html')).text();
    expect(html).toContain(`data-field="price">${krw(live.totalAmount)}<`);
    expect(html).toContain(`data-field="room-2-refund">${krw(after.refundAmount!)}<`);
  });

  it("a customer price cleared after a date change (saleAmount null): the voucher prints the total paid, not the old price", async () => {
    const changed = await book({ sale_amount: 777_000 });
    const before = await (await voucher(changed.id, '?format=html')).text();
    expect(before).toContain('<th scope="row">Total price</th><td data-field="price">KRW 777,000<');
    // What a date change that re-priced the stay without a new sale_amount leaves (modify-dates clears it).
    await t.service.deps.db.prisma.booking.update({ where: { id: changed.id }, data: { saleAmount: null } });
    const html = await (await voucher(changed.id, '?format=html')).text();
    const paid = `KRW ${Number(changed.totalAmount).toLocaleString('en-US')}`;
    expect(html).toContain(`<th scope="row">Total paid</th><td data-field="price">${paid}<`);
    expect(html).not.toContain('777,000');
    expect(await pdfText(new Uint8Array(await (await voucher(changed.id)).arrayBuffer()))).toContain(`Total paid ${paid}`);
  });

  it("another channel's booking, an unknown id or a malformed one: 404; an id over 64 characters: 400; no credential: 401", async () => {
    await expectError(await voucher(booking.id, '', {}, other), 404, 'NOT_FOUND');
    await expectError(await voucher('00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
    await expectError(await voucher('not-a-uuid'), 404, 'NOT_FOUND');
    await expectError(await voucher('x'.repeat(65)), 400, 'VALIDATION_ERROR');
    await expectError(await t.request(`/channel/v1/reservations/${booking.id}/voucher`), 401, 'UNAUTHORIZED');
  });

  it('needs voucher:read (403 naming it), and needs nothing more; GET /bookings/{id}/voucher stays 501', async () => {
    const noVoucher = await t.channel({ name: 'No voucher', scopes: ['reservations:read', 'reservations:write', 'search:availability'] });
    const mine = await book({}, v1(t, noVoucher));
    const refused = await expectError(await voucher(mine.id, '', {}, noVoucher), 403, 'INSUFFICIENT_SCOPE');
    expect(refused.details).toEqual({ required_scope: 'voucher:read' });

    const onlyVoucher = await t.channel({ name: 'Only voucher', scopes: ['voucher:read'] });
    await t.service.deps.db.prisma.booking.update({ where: { id: mine.id }, data: { channelId: onlyVoucher.user_id } });
    expect((await voucher(mine.id, '', {}, onlyVoucher)).status).toBe(200);

    await expectError(await t.request(`/channel/v1/bookings/${booking.id}/voucher`, { headers: apiKey(owner) }), 501, 'NOT_IMPLEMENTED');
  });
});

describe('POST /reservations/{id}/send-voucher (file transport, the default)', () => {
  let booking: BookingRecord;
  beforeAll(async () => {
    booking = await book({ guest_first_name: 'Minji', guest_last_name: 'Kim' });
  });

  it("without a body: the PDF to the booker's e-mail, written as an .eml under DATA_DIR/outbox-mail; 202", async () => {
    const before = outbox(t);
    const res = await sendVoucher(booking.id);
    expect(res.status).toBe(202);
    const { data } = await res.json();
    expect(data).toEqual({ message_id: expect.stringMatching(/^<[0-9a-f-]{36}@channel\.invalid>$/), to: 'minji@example.com', format: 'pdf', sent_at: expect.any(String) });
    const written = outbox(t).filter((f) => !before.includes(f));
    expect(written).toHaveLength(1);

    const raw = readFileSync(join(t.config.dataDir, 'outbox-mail', written[0]!));
    expect(raw.toString('latin1')).toContain('\r\n');
    const mail = await PostalMime.parse(raw);
    expect(mail.to?.map((a) => a.address)).toEqual(['minji@example.com']);
    expect(mail.from?.address).toBe('vouchers@channel.invalid');
    expect(mail.messageId).toBe(data.message_id);
    expect(mail.subject).toBe(`Booking voucher: ${booking.propertyName}, ${booking.checkin} to ${booking.checkout}`);
    expect(mail.text).toContain(booking.id);
    expect(mail.attachments).toHaveLength(1);
    const [attachment] = mail.attachments;
    expect(attachment).toMatchObject({ filename: `voucher-${booking.id}.pdf`, mimeType: 'application/pdf' });
    const text = await pdfText(new Uint8Array(attachment!.content as ArrayBuffer));
    expect(text).toContain(booking.id);
    expect(text).toContain(booking.propertyName);
  });

  it('to and format: the HTML voucher to the address given', async () => {
    const before = outbox(t);
    const res = await sendVoucher(booking.id, { to: 'front-desk@example.org', format: 'html' });
    expect(res.status).toBe(202);
    expect((await res.json()).data).toMatchObject({ to: 'front-desk@example.org', format: 'html' });
    const [file] = outbox(t).filter((f) => !before.includes(f));
    const mail = await PostalMime.parse(readFileSync(join(t.config.dataDir, 'outbox-mail', file!)));
    expect(mail.to?.map((a) => a.address)).toEqual(['front-desk@example.org']);
    expect(mail.attachments[0]).toMatchObject({ filename: `voucher-${booking.id}.html`, mimeType: 'text/html' });
    const html = new TextDecoder().decode(mail.attachments[0]!.content as ArrayBuffer);
    expect(html).toContain(`data-field="booking-number">${booking.id}<`);
  });

  it('refuses a bad address (a list, a display name, a line break), an unknown field or format, and malformed JSON: 400, nothing sent', async () => {
    const before = outbox(t);
    for (const body of [
      { to: 'not-an-address' },
      { to: 'a@example.com,b@example.com' },
      { to: 'a@example.com b@example.com' },
      { to: 'Guest <a@example.com>' },
      { to: 'a@example.com\r\nBcc: victim@example.com' },
      { to: 'a@example.com\nSubject: spam' },
      { to: ['a@example.com'] },
      { to: `${'a'.repeat(250)}@example.com` },
      { format: 'docx' },
      { email: 'a@example.com' },
    ]) {
      const res = await sendVoucher(booking.id, body);
      const error = await expectError(res, 400, 'VALIDATION_ERROR');
      expect(error.details!.fields.length, JSON.stringify(body)).toBeGreaterThan(0);
    }
    await expectError(await sendVoucher(booking.id, '{"to":'), 400, 'VALIDATION_ERROR');
    await expectError(await sendVoucher(booking.id, '{}', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(outbox(t)).toEqual(before);
  });

  it('a booking without a booker e-mail needs `to` (400 naming it)', async () => {
    const anonymous = await book({ booker_email: undefined });
    expect(anonymous.bookerEmail).toBeNull();
    const error = await expectError(await sendVoucher(anonymous.id, {}), 400, 'VALIDATION_ERROR');
    expect(error.details!.fields).toEqual([{ field: 'to', reason: 'required: the booking has no booker e-mail' }]);
    expect((await sendVoucher(anonymous.id, { to: 'guest@example.com' })).status).toBe(202);
  });

  it('Idempotency-Key: a repeat sends nothing again and answers the first response; another body with the key: 409', async () => {
    const before = outbox(t);
    const key = { 'idempotency-key': `send-${booking.id}` };
    const first = await sendVoucher(booking.id, { format: 'pdf' }, key);
    expect(first.status).toBe(202);
    const again = await sendVoucher(booking.id, { format: 'pdf' }, key);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await again.json()).data).toEqual((await first.json()).data);
    expect(outbox(t).length).toBe(before.length + 1);
    await expectError(await sendVoucher(booking.id, { format: 'html' }, key), 409, 'IDEMPOTENCY_KEY_REUSED');
  });

  it(`at most ${VOUCHER_MAILS_PER_HOUR} e-mails per reservation per hour: then 429 VOUCHER_MAIL_LIMIT_EXCEEDED with Retry-After`, async () => {
    const busy = await book();
    for (let i = 0; i < VOUCHER_MAILS_PER_HOUR; i++) expect((await sendVoucher(busy.id)).status).toBe(202);
    const refused = await sendVoucher(busy.id);
    const error = await expectError(refused, 429, 'VOUCHER_MAIL_LIMIT_EXCEEDED');
    expect(error.details).toMatchObject({ scope: 'reservation', window: 'hour', limit: VOUCHER_MAILS_PER_HOUR, retry_after: expect.any(Number) });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3_000);
    // Another reservation is not affected.
    expect((await sendVoucher(booking.id)).status).toBe(202);
  });

  it(`per channel, all its reservations together: ${VOUCHER_MAILS_PER_CHANNEL_HOUR} per hour, then 429 (scope "channel"); other channels unaffected`, async () => {
    expect(voucherMailLimits(t.config)).toEqual({ perReservationHour: 10, perChannelHour: 100, perChannelDay: 500 });
    const spammer = await t.channel({ name: 'Many mails' });
    const on = v1(t, spammer);
    const [first, second] = [await book({}, on), await book({}, on)];
    // The channel's earlier e-mails of this hour (each reservation's own limit is 10: many reservations sent them).
    await voucherMailLimiters(t.service.deps).channelHour.consume(spammer.user_id, VOUCHER_MAILS_PER_CHANNEL_HOUR - 1);
    const before = outbox(t);
    expect((await sendVoucher(first.id, { to: 'someone@example.net' }, {}, spammer)).status).toBe(202);
    // The next one, to any reservation of the channel, by REST or GraphQL: refused, nothing written.
    for (const id of [first.id, second.id]) {
      const refused = await sendVoucher(id, { to: 'someone@example.net' }, {}, spammer);
      const error = await expectError(refused, 429, 'VOUCHER_MAIL_LIMIT_EXCEEDED');
      expect(error.details).toEqual({ scope: 'channel', window: 'hour', limit: VOUCHER_MAILS_PER_CHANNEL_HOUR, retry_after: expect.any(Number) });
      expect(Number(refused.headers.get('retry-after'))).toBe(error.details!.retry_after);
      expect(error.details!.retry_after).toBeGreaterThan(3_000);
    }
    const mutation = 'mutation($id: ID!) { sendVoucher(id: $id) { messageId } }';
    const graphql = await t.graphql(mutation, { id: second.id }, apiKey(spammer));
    expect(graphql.errors?.[0]?.extensions).toMatchObject({ code: 'VOUCHER_MAIL_LIMIT_EXCEEDED', details: { scope: 'channel', window: 'hour' } });
    expect(outbox(t).length).toBe(before.length + 1);
    // Another channel sends.
    expect((await sendVoucher(booking.id)).status).toBe(202);
  });

  it(`per channel: ${VOUCHER_MAILS_PER_CHANNEL_DAY} per day, then 429 (scope "channel", window "day") with a Retry-After of hours`, async () => {
    const daily = await t.channel({ name: 'Daily mails' });
    const mine = await book({}, v1(t, daily));
    await voucherMailLimiters(t.service.deps).channelDay.consume(daily.user_id, VOUCHER_MAILS_PER_CHANNEL_DAY);
    const before = outbox(t);
    const refused = await sendVoucher(mine.id, {}, {}, daily);
    const error = await expectError(refused, 429, 'VOUCHER_MAIL_LIMIT_EXCEEDED');
    expect(error.details).toEqual({ scope: 'channel', window: 'day', limit: VOUCHER_MAILS_PER_CHANNEL_DAY, retry_after: expect.any(Number) });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(23 * 3_600);
    expect(outbox(t)).toEqual(before);
  });

  it('the log names the recipient domain only, never the address', async () => {
    const logger = t.service.deps.logger;
    const info = vi.spyOn(logger, 'info');
    try {
      expect((await sendVoucher(booking.id, { to: 'Private.Person@Example.ORG' })).status).toBe(202);
      const logged = JSON.stringify(info.mock.calls);
      expect(logged).toContain('"toDomain":"example.org"');
      expect(logged.toLowerCase()).not.toContain('private.person');
    } finally {
      info.mockRestore();
    }
  });

  it("another channel's booking: 404; without voucher:read: 403; nothing sent", async () => {
    const before = outbox(t);
    await expectError(await sendVoucher(booking.id, {}, {}, other), 404, 'NOT_FOUND');
    await expectError(await sendVoucher('00000000-0000-4000-8000-000000000000', {}), 404, 'NOT_FOUND');
    const noVoucher = await t.channel({ name: 'No voucher 2', scopes: ['reservations:read'] });
    const error = await expectError(await sendVoucher(booking.id, {}, {}, noVoucher), 403, 'INSUFFICIENT_SCOPE');
    expect(error.details).toEqual({ required_scope: 'voucher:read' });
    expect(outbox(t)).toEqual(before);
  });
});

describe('money and events (production)', () => {
  it('a voucher shows what was charged; reading and e-mailing it moves no money and writes no event', async () => {
    const who = await production.channel({ name: 'Paying', balance: 5_000_000n });
    const paying = v1(production, who);
    const offer = await paying.offer({ from: 20 });
    const created = await paying.book({ book_token: offer.bookToken, booker_name: 'Lee Seo', booker_email: 'seo@example.com' });
    expect(created.status).toBe(201);
    const booking = (await created.json()).data as BookingRecord;
    const before = await channelState(production, who.user_id);
    expect(before.balance).toBe(5_000_000n - BigInt(booking.totalAmount));

    const text = await pdfText(new Uint8Array(await (await voucher(booking.id, '', {}, who, production)).arrayBuffer()));
    expect(text).toContain(`Total paid KRW ${Number(booking.totalAmount).toLocaleString('en-US')}`);
    expect((await sendVoucher(booking.id, undefined, {}, who, production)).status).toBe(202);

    const after = await channelState(production, who.user_id);
    expect(after.balance).toBe(before.balance);
    expect(after.ledger).toEqual(before.ledger);
    // The same events (the dispatcher may have published them meanwhile).
    const events = (list: typeof before.events) => list.map((e) => `${e.id} ${e.type}`);
    expect(events(after.events)).toEqual(events(before.events));
    expect(after.bookings).toEqual(before.bookings);
  });
});

describe('SMTP transport (SMTP_URL)', () => {
  let smtp: SMTPServer;
  let received: { from: string; to: string[]; raw: Buffer }[];
  let mailer: TestService;
  let who: IssuedCredentials;
  let smtpClosed = false;

  beforeAll(async () => {
    received = [];
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    const port = (smtp.server.address() as AddressInfo).port;
    mailer = await startTestService({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'vouchers@channel.example' });
    who = await mailer.channel({ name: 'SMTP' });
  });
  afterAll(async () => {
    await mailer?.close();
    if (!smtpClosed) await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  // The next test closes the server: this one runs first.
  it('the message arrives at the SMTP server: the envelope, the headers and the attached PDF; no .eml is written', async () => {
    const on = v1(mailer, who);
    const offer = await on.offer({ from: 30 });
    const booking = (await (await on.book({ book_token: offer.bookToken, booker_name: 'Park Jisoo', booker_email: 'jisoo@example.com' })).json()).data;
    const res = await sendVoucher(booking.id, undefined, {}, who, mailer);
    expect(res.status).toBe(202);
    const { data } = await res.json();
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ from: 'vouchers@channel.example', to: ['jisoo@example.com'] });
    const mail = await PostalMime.parse(received[0]!.raw);
    expect(mail.messageId).toBe(data.message_id);
    expect(mail.from?.address).toBe('vouchers@channel.example');
    expect(mail.attachments[0]).toMatchObject({ filename: `voucher-${booking.id}.pdf`, mimeType: 'application/pdf' });
    expect(await pdfText(new Uint8Array(mail.attachments[0]!.content as ArrayBuffer))).toContain(booking.id);
    expect(outbox(mailer)).toEqual([]);
  });

  it("a sandbox that sends real e-mail mails only the reservation's own booker/guest address: another is 422 VOUCHER_RECIPIENT_NOT_ALLOWED", async () => {
    expect(mailer.config.env).toBe('sandbox');
    const on = v1(mailer, who);
    const offer = await on.offer({ from: 30 });
    const booking = (await (await on.book({ book_token: offer.bookToken, booker_name: 'Park Jisoo', booker_email: 'jisoo@example.com' })).json()).data;
    const count = received.length;
    const error = await expectError(await sendVoucher(booking.id, { to: 'victim@example.net' }, {}, who, mailer), 422, 'VOUCHER_RECIPIENT_NOT_ALLOWED');
    expect(error.details).toEqual({ field: 'to', allowed: 'booker_or_guest_email' });
    const mutation = 'mutation($id: ID!, $input: SendVoucherInput) { sendVoucher(id: $id, input: $input) { to } }';
    const graphql = await mailer.graphql(mutation, { id: booking.id, input: { to: 'victim@example.net' } }, apiKey(who));
    expect(graphql.errors?.[0]?.extensions).toMatchObject({ code: 'VOUCHER_RECIPIENT_NOT_ALLOWED', details: { field: 'input.to' } });
    expect(received.length).toBe(count);
    // The booker's own address, however it is capitalised, and the default recipient: sent.
    expect((await sendVoucher(booking.id, { to: 'JISOO@example.com' }, {}, who, mailer)).status).toBe(202);
    expect((await sendVoucher(booking.id, undefined, {}, who, mailer)).status).toBe(202);
    expect(received.slice(count).map((m) => m.to)).toEqual([['JISOO@example.com'], ['jisoo@example.com']]);
  });

  it('the rule: any recipient in production, or without SMTP_URL (the file transport sends nothing out)', () => {
    const env = testEnv();
    try {
      const smtp = { SMTP_URL: 'smtp://127.0.0.1:2525', MAIL_FROM: 'a@example.com' };
      expect(anyRecipientAllowed(loadConfig(env))).toBe(true);
      expect(anyRecipientAllowed(loadConfig({ ...env, ...smtp }))).toBe(false);
      expect(anyRecipientAllowed(loadConfig({ ...env, ...smtp, CHANNEL_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com' }))).toBe(true);
    } finally {
      rmSync(env.DATA_DIR!, { recursive: true, force: true });
    }
  });

  it('a mail server that cannot be reached: 502 MAIL_DELIVERY_FAILED, nothing sent', async () => {
    const on = v1(mailer, who);
    const offer = await on.offer({ from: 30 });
    const booking = (await (await on.book({ book_token: offer.bookToken, booker_name: 'Park Jisoo', booker_email: 'jisoo@example.com' })).json()).data;
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    smtpClosed = true;
    const count = received.length;
    await expectError(await sendVoucher(booking.id, undefined, {}, who, mailer), 502, 'MAIL_DELIVERY_FAILED');
    expect(received).toHaveLength(count);
    expect(outbox(mailer)).toEqual([]);
  });

  it('SMTP_URL must be smtp:// or smtps://, and needs MAIL_FROM', () => {
    const env = testEnv();
    try {
      expect(() => loadConfig({ ...env, SMTP_URL: 'smtp://127.0.0.1:2525' })).toThrow(ConfigError);
      expect(() => loadConfig({ ...env, SMTP_URL: 'http://127.0.0.1:2525', MAIL_FROM: 'a@example.com' })).toThrow(/SMTP_URL/);
      expect(() => loadConfig({ ...env, MAIL_FROM: 'not an address' })).toThrow(/MAIL_FROM/);
      expect(loadConfig({ ...env, SMTP_URL: 'smtps://u:p@mail.example.com:465', MAIL_FROM: 'a@example.com' }).mail).toEqual({
        smtpUrl: 'smtps://u:p@mail.example.com:465',
        from: 'a@example.com',
      });
    } finally {
      rmSync(env.DATA_DIR!, { recursive: true, force: true });
    }
  });
});

/** A non-loopback IPv4 address of this machine, to reach a local SMTP server as a remote host. */
const LAN_ADDRESS = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

describe('SMTP to a remote host: STARTTLS is required', () => {
  let service: TestService | undefined;
  let smtp: SMTPServer | undefined;
  afterAll(async () => {
    await service?.close();
    if (smtp) await new Promise<void>((resolve) => smtp!.close(() => resolve()));
  });

  /** An SMTP server on every interface, with or without STARTTLS (smtp-server's own self-signed certificate). */
  async function listen(starttls: boolean, port = 0) {
    if (smtp) await new Promise<void>((resolve) => smtp!.close(() => resolve()));
    const got: { secure: boolean; to: string[] }[] = [];
    smtp = new SMTPServer({
      authOptional: true,
      ...(starttls ? {} : { disabledCommands: ['STARTTLS'] }),
      disableReverseLookup: true,
      logger: false,
      onData(stream, session, callback) {
        stream.resume();
        stream.on('end', () => {
          got.push({ secure: session.secure, to: session.envelope.rcptTo.map((r) => r.address) });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp!.listen(port, '0.0.0.0', () => resolve()));
    return { got, port: (smtp.server.address() as AddressInfo).port };
  }

  it.skipIf(!LAN_ADDRESS)('a server that does not offer STARTTLS: 502 MAIL_DELIVERY_FAILED, nothing sent in clear; one that offers it: sent over TLS', async () => {
    const plain = await listen(false);
    // The test server's certificate is self-signed: the URL's own nodemailer parameter accepts it.
    service = await startTestService({
      SMTP_URL: `smtp://${LAN_ADDRESS}:${plain.port}?tls.rejectUnauthorized=false`,
      MAIL_FROM: 'vouchers@channel.example',
    });
    const who = await service.channel({ name: 'TLS' });
    const on = v1(service, who);
    const offer = await on.offer({ from: 30 });
    const booking = (await (await on.book({ book_token: offer.bookToken, booker_name: 'Park Jisoo', booker_email: 'jisoo@example.com' })).json()).data;

    await expectError(await sendVoucher(booking.id, undefined, {}, who, service), 502, 'MAIL_DELIVERY_FAILED');
    expect(plain.got).toEqual([]);

    // The same address, now offering STARTTLS.
    const tls = await listen(true, plain.port);
    expect((await sendVoucher(booking.id, undefined, {}, who, service)).status).toBe(202);
    expect(tls.got).toEqual([{ secure: true, to: ['jisoo@example.com'] }]);
  });

  it('the transport options: requireTLS for smtp:// to any host but this one; smtps:// is TLS from the start', () => {
    const timeouts = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 10_000 };
    for (const url of ['smtp://user:pass@mail.example.com:587', 'smtp://10.0.0.5:25', 'smtp://[2001:db8::1]:25', 'smtp://localhost.example.com']) {
      expect(smtpTransportOptions(url), url).toEqual({ url, requireTLS: true, ...timeouts });
    }
    for (const url of ['smtp://127.0.0.1:2525', 'smtp://127.8.9.10', 'smtp://localhost:25', 'smtp://LOCALHOST', 'smtp://[::1]:25', 'smtps://u:p@mail.example.com:465']) {
      expect(smtpTransportOptions(url), url).toEqual({ url, ...timeouts });
    }
    // As nodemailer reads them: the URL's host, port and credentials, with requireTLS kept.
    const transport = nodemailer.createTransport(smtpTransportOptions('smtp://user:pass@mail.example.com:587') as Parameters<typeof nodemailer.createTransport>[0]);
    expect((transport as unknown as { options: Record<string, unknown> }).options).toMatchObject({
      host: 'mail.example.com',
      port: 587,
      secure: false,
      requireTLS: true,
      auth: { user: 'user', pass: 'pass' },
    });
    transport.close();
  });
});

describe('the file transport keeps its .eml files 7 days', () => {
  let service: TestService;
  let offset = 0;
  beforeAll(async () => {
    service = await startTestService({}, { clock: () => new Date(Date.now() + offset) });
  });
  afterAll(async () => {
    await service?.close();
  });

  const stamp = (at: Date) => at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');

  it('older files are deleted when a new one is written (at most once an hour), newer ones and other files stay', async () => {
    const who = await service.channel({ name: 'Outbox' });
    const booking = await book({}, v1(service, who));
    const dir = join(service.config.dataDir, 'outbox-mail');
    mkdirSync(dir, { recursive: true });
    const ago = (days: number) => new Date(Date.now() + offset - days * 86_400_000);
    const old = `${stamp(ago(8))}-00000000-0000-4000-8000-000000000001.eml`;
    const recent = `${stamp(ago(6))}-00000000-0000-4000-8000-000000000002.eml`;
    const foreignOld = 'copied-by-hand.eml';
    const notMail = 'notes.txt';
    for (const name of [old, recent, foreignOld, notMail]) writeFileSync(join(dir, name), 'x');
    utimesSync(join(dir, foreignOld), ago(9), ago(9));
    utimesSync(join(dir, notMail), ago(30), ago(30));

    expect((await sendVoucher(booking.id, undefined, {}, who, service)).status).toBe(202);
    await vi.waitFor(() => expect(readdirSync(dir).filter((f) => f === old || f === foreignOld)).toEqual([]));
    const left = readdirSync(dir);
    expect(left).toEqual(expect.arrayContaining([recent, notMail]));
    expect(left.filter((f) => f.endsWith('.eml'))).toHaveLength(2);

    // Within the hour: no second pass. An hour later: the next write purges again.
    const older = `${stamp(ago(10))}-00000000-0000-4000-8000-000000000003.eml`;
    writeFileSync(join(dir, older), 'x');
    expect((await sendVoucher(booking.id, undefined, {}, who, service)).status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(readdirSync(dir)).toContain(older);
    offset += MAIL_OUTBOX_PURGE_EVERY_MS;
    expect((await sendVoucher(booking.id, undefined, {}, who, service)).status).toBe(202);
    await vi.waitFor(() => expect(readdirSync(dir)).not.toContain(older));
    expect(readdirSync(dir)).toContain(recent);
  });

  it('purgeMailOutbox: the same rule on demand; a missing directory is nothing to do', async () => {
    const dir = join(service.config.dataDir, 'outbox-mail');
    const name = `${stamp(new Date(Date.now() + offset - 8 * 86_400_000))}-00000000-0000-4000-8000-000000000004.eml`;
    writeFileSync(join(dir, name), 'x');
    expect(await purgeMailOutbox(service.service.deps)).toBe(1);
    expect(readdirSync(dir)).not.toContain(name);
    // A week on, every file written so far is expired.
    const written = readdirSync(dir).filter((f) => f.endsWith('.eml')).length;
    expect(written).toBeGreaterThan(0);
    expect(await purgeMailOutbox(service.service.deps, new Date(Date.now() + offset + 8 * 86_400_000))).toBe(written);
    rmSync(dir, { recursive: true, force: true });
    expect(await purgeMailOutbox(service.service.deps)).toBe(0);
  });
});

describe('GraphQL: voucher and sendVoucher', () => {
  let booking: BookingRecord;
  beforeAll(async () => {
    booking = await book();
  });

  it('voucher(id) gives the URLs of both formats, which serve the voucher; null for an unknown or foreign booking', async () => {
    const query = 'query($id: ID!) { voucher(id: $id) { bookingId reservationId pdfUrl htmlUrl } }';
    const res = await t.graphql(query, { id: booking.id }, apiKey(owner));
    expect(res.errors).toBeUndefined();
    expect(res.data?.voucher).toEqual({
      bookingId: booking.id,
      reservationId: booking.id,
      pdfUrl: `/channel/v1/reservations/${booking.id}/voucher?format=pdf`,
      htmlUrl: `/channel/v1/reservations/${booking.id}/voucher?format=html`,
    });
    const { pdfUrl, htmlUrl } = res.data!.voucher as { pdfUrl: string; htmlUrl: string };
    const pdf = await t.request(pdfUrl, { headers: apiKey(owner) });
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(await pdfText(new Uint8Array(await pdf.arrayBuffer()))).toContain(booking.id);
    const html = await t.request(htmlUrl, { headers: apiKey(owner) });
    expect(await html.text()).toContain(booking.id);

    expect((await t.graphql(query, { id: booking.id }, apiKey(other))).data?.voucher).toBeNull();
    expect((await t.graphql(query, { id: '00000000-0000-4000-8000-000000000000' }, apiKey(owner))).data?.voucher).toBeNull();
  });

  it('sendVoucher e-mails it like the REST route; bad input, another channel and a missing scope are top-level errors', async () => {
    const mutation = 'mutation($id: ID!, $input: SendVoucherInput) { sendVoucher(id: $id, input: $input) { messageId to format sentAt } }';
    const before = outbox(t);
    const res = await t.graphql(mutation, { id: booking.id, input: { format: 'HTML' } }, apiKey(owner));
    expect(res.errors).toBeUndefined();
    expect(res.data?.sendVoucher).toMatchObject({ to: 'minji@example.com', format: 'HTML', messageId: expect.stringMatching(/^</) });
    expect(outbox(t).length).toBe(before.length + 1);

    const bad = await t.graphql(mutation, { id: booking.id, input: { to: 'a@example.com\r\nBcc: b@example.com' } }, apiKey(owner));
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect((bad.errors?.[0]?.extensions?.details as { fields: { field: string }[] }).fields.map((f) => f.field)).toEqual(['input.to']);
    // A missing address is named the same way as a bad one.
    const anonymous = await book({ booker_email: undefined });
    const missing = await t.graphql(mutation, { id: anonymous.id }, apiKey(owner));
    expect(missing.errors?.[0]?.extensions).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'input.to', reason: 'required: the booking has no booker e-mail' }] },
    });
    const foreign = await t.graphql(mutation, { id: booking.id }, apiKey(other));
    expect(foreign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const noScope = await t.channel({ name: 'GraphQL no voucher', scopes: ['reservations:read'] });
    for (const [document, variables] of [
      [mutation, { id: booking.id }],
      ['query($id: ID!) { voucher(id: $id) { pdfUrl } }', { id: booking.id }],
    ] as const) {
      const refused = await t.graphql(document, variables, apiKey(noScope));
      expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'voucher:read' } });
    }
    expect(outbox(t).length).toBe(before.length + 1);
  });
});

describe('the voucher model and its PDF text', () => {
  it('escapeHtml (one helper for the voucher page and the docs page): & < > " \' become entities', () => {
    expect(escapeHtml(`<a href="x" title='y'>&amp;</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;');
    expect(escapeHtml('plain text, 100%')).toBe('plain text, 100%');
  });

  it('chooseVoucherFormat: format first, then Accept by q-value and specificity', () => {
    expect(chooseVoucherFormat(undefined, undefined)).toBe('pdf');
    expect(chooseVoucherFormat(undefined, '')).toBe('pdf');
    expect(chooseVoucherFormat('html', 'application/pdf')).toBe('html');
    expect(chooseVoucherFormat(undefined, 'text/html;q=0.9, application/pdf;q=0.8')).toBe('html');
    expect(chooseVoucherFormat(undefined, 'TEXT/HTML')).toBe('html');
    expect(chooseVoucherFormat(undefined, '*/*;q=0.1, text/html;q=0')).toBe('pdf');
    expect(() => chooseVoucherFormat(undefined, 'image/png, application/json')).toThrow(/application\/pdf or text\/html/);
  });

  it('Helvetica draws Western names as they are; other scripts become "?" (no garbage); VOUCHER_PDF_FONT embeds a font that has them', async () => {
    expect(toWinAnsi('Zoë Łódź “quoted” – €5')).toBe('Zoë Lódz “quoted” – €5');
    expect(toWinAnsi('김민수 Иван')).toBe('??? ????');
    const booking = await book({ booker_name: 'Иван Петров', guest_first_name: '민수' });
    const row = await t.service.deps.db.prisma.booking.findUniqueOrThrow({ where: { id: booking.id } });
    const model = voucherOf([row], null, new Date());
    const plain = await pdfText(await renderVoucherPdf(model));
    expect(plain).toContain('???? ??????');
    expect(plain).toContain(booking.id);
    const dejavu = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
    if (existsSync(dejavu)) {
      const embedded = await pdfText(await renderVoucherPdf(model, { fontFile: dejavu }));
      expect(embedded).toContain('Иван Петров');
      expect(embedded).toContain(booking.id);
    }
  });
});
