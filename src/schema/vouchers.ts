import { z } from 'zod';
import {
  sendVoucher,
  VOUCHER_FORMATS,
  VOUCHER_MAILS_PER_CHANNEL_DAY,
  VOUCHER_MAILS_PER_CHANNEL_HOUR,
  VOUCHER_MAILS_PER_HOUR,
  voucherBooking,
  voucherRules,
  type VoucherBooking,
  type VoucherDelivery,
} from '../services/vouchers/index.js';
import { voucherPaths } from '../../rest-adapters/v1/voucherFormat.js';
import { builder } from './builder.js';
import { serviceEnum } from './enums.js';
import { idArgument } from './node.js';
import { orNull } from './orNull.js';
import { operationScopes } from '../services/access/index.js';

/**
 * Vouchers: the GraphQL twins of GET /channel/v1/reservations/{id}/voucher (where to fetch it)
 * and POST /channel/v1/reservations/{id}/send-voucher, over the same services and input rules.
 */

const VoucherFormat = serviceEnum('VoucherFormat', VOUCHER_FORMATS, 'PDF (A4) or HTML (one self-contained page)');

const VoucherRef = builder.objectRef<VoucherBooking>('Voucher').implement({
  description:
    "Where a booking's voucher is. The URLs are relative to the service (like v2's links): fetch them with the same " +
    'credential (voucher:read). The voucher covers every room of the reservation the booking belongs to',
  fields: (t) => ({
    bookingId: t.exposeID('bookingId'),
    reservationId: t.exposeID('reservationId', { description: 'The id of the reservation (its first room)' }),
    pdfUrl: t.string({ description: '/channel/v1/reservations/{id}/voucher?format=pdf', resolve: (v) => voucherPaths(v.bookingId).pdf }),
    htmlUrl: t.string({ description: '/channel/v1/reservations/{id}/voucher?format=html', resolve: (v) => voucherPaths(v.bookingId).html }),
  }),
});

const VoucherDeliveryRef = builder.objectRef<VoucherDelivery>('VoucherDelivery').implement({
  description: 'A voucher e-mail handed to the mail server (or written to the outbox without one)',
  fields: (t) => ({
    messageId: t.exposeString('messageId', { description: 'The Message-ID header of the e-mail' }),
    to: t.exposeString('to'),
    format: t.field({ type: VoucherFormat, resolve: (d) => d.format }),
    sentAt: t.expose('sentAt', { type: 'DateTime' }),
  }),
});

const SendVoucherInput = builder.inputType('SendVoucherInput', {
  description: 'The body of POST /channel/v1/reservations/{id}/send-voucher',
  fields: (t) => ({
    to: t.string({ description: "One plain address. Default: the booking's booker e-mail (required when it has none)" }),
    format: t.field({ type: VoucherFormat, description: 'The attachment; default pdf' }),
  }),
});

/** A booking id argument: the bookingId (REST) or the Booking's global id. */
const voucherId = idArgument('Booking');

const sendArgs = z.object({
  id: voucherId,
  input: z.object({ to: voucherRules.to.nullish(), format: voucherRules.format.nullish() }).nullish(),
});

builder.queryField('voucher', (t) =>
  t.field({
    type: VoucherRef,
    nullable: true,
    description: "Where a booking's voucher is, or null when the channel has no such booking (REST: GET /channel/v1/reservations/{id}/voucher)",
    authScopes: operationScopes('voucher.read'),
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id: voucherId }) },
    resolve: (_root, args, ctx) => orNull(voucherBooking(ctx, args.id)),
  }),
);

builder.mutationField('sendVoucher', (t) =>
  t.field({
    type: VoucherDeliveryRef,
    description:
      "E-mails a booking's voucher (REST: POST /channel/v1/reservations/{id}/send-voucher). An unknown booking is NOT_FOUND; " +
      `too many e-mails for one reservation (${VOUCHER_MAILS_PER_HOUR} per hour) or for the channel (${VOUCHER_MAILS_PER_CHANNEL_HOUR} per hour, ` +
      `${VOUCHER_MAILS_PER_CHANNEL_DAY} per day by default) ` +
      'VOUCHER_MAIL_LIMIT_EXCEEDED (details.scope "reservation" or "channel", details.retry_after); in a sandbox that sends ' +
      "real e-mail, an address other than the reservation's booker/guest e-mail VOUCHER_RECIPIENT_NOT_ALLOWED; " +
      'a mail server failure MAIL_DELIVERY_FAILED. Errors about the address name the field input.to',
    authScopes: operationScopes('voucher.send'),
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: SendVoucherInput }) },
    validate: { schema: sendArgs },
    resolve: (_root, args, ctx) =>
      sendVoucher(
        ctx,
        args.id,
        { to: args.input?.to ?? undefined, format: args.input?.format ?? undefined },
        { toField: 'input.to' },
      ),
  }),
);
