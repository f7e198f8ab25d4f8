import { z } from 'zod';
import { principalOf, ValidationError } from '../kernel/index.js';
import type { AppDeps, RequestContext } from '../../context.js';
import { bookingRules, getBooking } from '../bookings/index.js';
import { sendMail } from './mail.js';
import { createRateLimiter, type RateLimiter } from '../access/index.js';
import { leadRoom } from '../reservations/index.js';
import { VoucherMailLimitError, VoucherRecipientNotAllowedError, type MailLimitScope } from './errors.js';
import { renderVoucherHtml } from './html.js';
import { buildVoucher, reservationRooms, voucherOf, type Voucher } from './model.js';
import { renderVoucherPdf } from './pdf.js';

/**
 * Booking vouchers (docs/spec/channel-api.md §4.7): the formats, rendering a built voucher (model.ts) as PDF or HTML,
 * and e-mailing it. Choosing a format from Accept, the response headers and the REST paths are
 * the REST adapter's (rest-adapters/v1/voucherFormat.ts).
 */

export const VOUCHER_FORMATS = ['pdf', 'html'] as const;
export type VoucherFormat = (typeof VOUCHER_FORMATS)[number];

/** The media type of each rendered format: the response's Content-Type and the e-mail attachment's. */
export const VOUCHER_MEDIA_TYPES: Record<VoucherFormat, string> = {
  pdf: 'application/pdf',
  html: 'text/html; charset=utf-8',
};

/** A voucher rendered for a response or an e-mail attachment. */
export interface RenderedVoucher {
  format: VoucherFormat;
  body: Uint8Array;
  /** The Content-Type to send it with. */
  mediaType: string;
  filename: string;
}

// ---------------------------------------------------------------------------------------------
// Rendering

export async function renderVoucher(ctx: RequestContext, voucher: Voucher, format: VoucherFormat): Promise<RenderedVoucher> {
  const body =
    format === 'pdf'
      ? await renderVoucherPdf(voucher, { fontFile: ctx.deps.config.vouchers.pdfFont })
      : new TextEncoder().encode(renderVoucherHtml(voucher));
  return { format, body, mediaType: VOUCHER_MEDIA_TYPES[format], filename: `voucher-${voucher.reservationId}.${format}` };
}

/** The voucher of the reservation of a booking of the caller's channel, rendered. */
export async function getVoucher(ctx: RequestContext, id: string, format: VoucherFormat): Promise<RenderedVoucher> {
  const built = await buildVoucher(ctx, id);
  const rendered = await renderVoucher(ctx, built.voucher, format);
  // Named after the id asked for (the reservation's, or one of its rooms').
  return { ...rendered, filename: `voucher-${built.id}.${format}` };
}

// ---------------------------------------------------------------------------------------------
// Sending

/** Input rules of send-voucher, written once for REST and GraphQL. */
export const voucherRules = {
  format: z.enum(VOUCHER_FORMATS, { error: 'pdf or html' }),
  /** One plain address (no display name, no list, no line breaks): the booker e-mail's own rule. */
  to: bookingRules.email,
};

/** Voucher e-mails one reservation may send per hour, so a booking cannot be made a spam relay. */
export const VOUCHER_MAILS_PER_HOUR = 10;

/**
 * Voucher e-mails one channel may send, all its reservations together, per hour and per day: the
 * marketplace's domain is not a channel's mailing service (sandbox reservations cost nothing).
 * Deployment settings when config.vouchers carries them (see voucherMailLimits), else these.
 */
export const VOUCHER_MAILS_PER_CHANNEL_HOUR = 100;
export const VOUCHER_MAILS_PER_CHANNEL_DAY = 500;

export interface VoucherMailLimits {
  perReservationHour: number;
  perChannelHour: number;
  perChannelDay: number;
}

/**
 * The limits of this deployment: VOUCHER_MAILS_PER_CHANNEL_HOUR / _DAY (src/config.ts, whose
 * defaults are the constants above).
 */
export function voucherMailLimits(config: AppDeps['config']): VoucherMailLimits {
  return {
    perReservationHour: VOUCHER_MAILS_PER_HOUR,
    perChannelHour: config.vouchers.mailsPerChannelHour,
    perChannelDay: config.vouchers.mailsPerChannelDay,
  };
}

interface MailLimiters {
  reservation: RateLimiter;
  channelHour: RateLimiter;
  channelDay: RateLimiter;
}

/** Shared through Redis when the service has it, like the API's limit. */
const mailLimiters = new WeakMap<AppDeps, MailLimiters>();

/** The voucher e-mail limiters of a service (exported for tests, which fill a window directly). */
export function voucherMailLimiters(deps: AppDeps): MailLimiters {
  let limiters = mailLimiters.get(deps);
  if (!limiters) {
    const limits = voucherMailLimits(deps.config);
    const make = (name: string, points: number, durationSeconds: number) =>
      createRateLimiter({ name, points, durationSeconds, redis: deps.redis });
    limiters = {
      reservation: make('voucher-mail', limits.perReservationHour, 3_600),
      channelHour: make('voucher-mail-channel-hour', limits.perChannelHour, 3_600),
      channelDay: make('voucher-mail-channel-day', limits.perChannelDay, 86_400),
    };
    mailLimiters.set(deps, limiters);
  }
  return limiters;
}

/**
 * Charges one e-mail to the reservation, then to the channel's hour, then its day; the first
 * refusal is the answer (what an earlier limit already counted stays counted).
 */
async function chargeVoucherMail(deps: AppDeps, reservationId: string, channelId: string): Promise<void> {
  const limiters = voucherMailLimiters(deps);
  const checks: [RateLimiter, string, MailLimitScope, 'hour' | 'day'][] = [
    [limiters.reservation, reservationId, 'reservation', 'hour'],
    [limiters.channelHour, channelId, 'channel', 'hour'],
    [limiters.channelDay, channelId, 'channel', 'day'],
  ];
  for (const [limiter, key, scope, window] of checks) {
    const decision = await limiter.consume(key);
    if (!decision.allowed) throw new VoucherMailLimitError(scope, window, decision.limit, decision.resetSeconds);
  }
}

export interface SendVoucherInput {
  /** Default: the booking's booker e-mail. */
  to?: string | undefined;
  /** Default: pdf. */
  format?: VoucherFormat | undefined;
}

export interface SendVoucherOptions {
  /** How errors name the recipient field: `to` on REST, `input.to` on GraphQL. */
  toField?: string;
}

export interface VoucherDelivery {
  messageId: string;
  to: string;
  format: VoucherFormat;
  sentAt: Date;
}

/** Whether this deployment may mail a voucher to any address: not a sandbox sending through real SMTP. */
export function anyRecipientAllowed(config: AppDeps['config']): boolean {
  return config.env === 'production' || !config.mail.smtpUrl;
}

/**
 * E-mails the voucher of a booking of the caller's channel, attached in `format`, to `to` or the
 * booker's e-mail. A cancelled booking's voucher can be sent too: it says CANCELLED (the subject
 * as well), which is how a guest learns of it.
 *
 * Limits: VOUCHER_MAILS_PER_HOUR per reservation, and the channel's hourly and daily limits
 * (voucherMailLimits), 429 VOUCHER_MAIL_LIMIT_EXCEEDED. A sandbox with SMTP_URL mails only the
 * reservation's own booker/guest addresses (422 VOUCHER_RECIPIENT_NOT_ALLOWED); the file
 * transport writes to any address (nothing leaves the machine).
 */
export async function sendVoucher(
  ctx: RequestContext,
  id: string,
  input: SendVoucherInput,
  options: SendVoucherOptions = {},
): Promise<VoucherDelivery> {
  const toField = options.toField ?? 'to';
  const reservation = await reservationRooms(ctx, id);
  const { rooms } = reservation;
  const recipient = input.to ?? leadRoom(rooms).bookerEmail;
  if (!recipient) throw new ValidationError([{ field: toField, reason: 'required: the booking has no booker e-mail' }]);
  const checked = voucherRules.to.safeParse(recipient);
  if (!checked.success) throw new ValidationError([{ field: toField, reason: 'an e-mail address' }]);
  const format = input.format ?? 'pdf';

  if (!anyRecipientAllowed(ctx.deps.config)) {
    // The reservation's own addresses (a /reservations guest's e-mail is its rooms' booker e-mail).
    const own = new Set(rooms.flatMap((b) => (b.bookerEmail ? [b.bookerEmail.toLowerCase()] : [])));
    if (!own.has(checked.data.toLowerCase())) throw new VoucherRecipientNotAllowedError(toField);
  }

  // Per reservation, whichever of its ids is used; then per channel.
  await chargeVoucherMail(ctx.deps, rooms[0]!.itineraryId, principalOf(ctx).channelId);

  const property = await ctx.loaders.property.load(rooms[0]!.propertyId);
  const voucher = voucherOf(rooms, property, ctx.deps.clock());
  const rendered = { ...(await renderVoucher(ctx, voucher, format)), filename: `voucher-${reservation.id}.${format}` };
  const sent = await sendMail(ctx.deps, {
    to: checked.data,
    subject: `${voucher.valid ? 'Booking voucher' : `${voucher.statusLabel}: booking voucher`}: ${voucher.property.name}, ${voucher.checkin.date} to ${voucher.checkout.date}`,
    text: mailText(voucher, rendered.filename),
    attachments: [{ filename: rendered.filename, content: rendered.body, contentType: rendered.mediaType }],
  });
  return { messageId: sent.messageId, to: sent.to, format, sentAt: sent.sentAt };
}

function mailText(v: Voucher, attachment: string): string {
  const lines = [
    'Booking voucher',
    '',
    ...(v.notice ? [v.notice, ''] : []),
    `Status: ${v.statusLabel}`,
    `Booking number: ${v.reservationId}`,
    `Confirmation number: ${v.confirmationNumber}`,
    ...(v.rooms.length > 1 ? [`Rooms: ${v.rooms.map((r) => `${r.roomType ?? 'room'} (${r.statusLabel.toLowerCase()})`).join(', ')}`] : []),
    ...(v.partnerReference ? [`Reference: ${v.partnerReference}`] : []),
    `Property: ${v.property.name}${v.property.address ? `, ${v.property.address}` : ''}`,
    `Check-in: ${v.checkin.label}, from ${v.checkin.time} (${v.property.timezone})`,
    `Check-out: ${v.checkout.label}`,
    `Guests: ${v.party}`,
    ...(v.rooms.length === 1 ? [`Cancellation: ${v.rooms[0]!.cancellation.words}`] : []),
    '',
    `The voucher is attached (${attachment}). Please show it at check-in.`,
  ];
  return lines.join('\n');
}

/** The booking and reservation of a voucher: GraphQL's voucher field (the REST adapter spells its URLs). */
export interface VoucherBooking {
  bookingId: string;
  reservationId: string;
}

/** The voucher of a booking of the caller's channel (404 for any other id): GraphQL's voucher field. */
export async function voucherBooking(ctx: RequestContext, id: string): Promise<VoucherBooking> {
  const booking = await getBooking(ctx, id);
  return { bookingId: booking.id, reservationId: booking.itineraryId };
}
