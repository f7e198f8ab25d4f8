import { OpenAPIHono, z } from '@hono/zod-openapi';
import { getVoucher, sendVoucher, VOUCHER_MAILS_PER_CHANNEL_DAY, VOUCHER_MAILS_PER_CHANNEL_HOUR, VOUCHER_MAILS_PER_HOUR, voucherRules } from '../../src/services/vouchers/index.js';
import { dataEnvelope, errorResponses, ok } from '../envelope.js';
import type { HttpEnv } from '../env.js';
import { scopedRoute } from '../routing.js';
import { idempotency, idempotencyHeader } from '../idempotency.js';
import { chooseVoucherFormat, VOUCHER_HTML_CSP } from './voucherFormat.js';
import { BAD_ID_REASON as BAD_ID, NO_RESERVATION, ReservationId } from './reservations/params.js';
import { ConflictError, NotAcceptableError, RateLimitError, UnprocessableError, UpstreamError, ValidationError } from '../../src/services/kernel/index.js';

/**
 * Vouchers of the reservation endpoints the guides name (docs/spec/channel-api.md §4.7): GET /reservations/{id}/voucher
 * as PDF or HTML, and POST /reservations/{id}/send-voucher by e-mail. {id} is a booking id (a
 * reservation's id is the id of its first room); the voucher covers every room of the
 * reservation. GET /bookings/{id}/voucher stays 501, as the v1 contract says.
 */

const VoucherQuery = z.object({
  format: voucherRules.format.optional().openapi({
    description: 'pdf or html; wins over the Accept header. Without it: Accept decides, and PDF when Accept is absent or */*',
  }),
});

const SendVoucherWire = z
  .object({
    to: voucherRules.to.optional().openapi({
      description: "One plain address (no display name, no list). Default: the booking's booker e-mail; without one, `to` is required",
      example: 'guest@example.com',
    }),
    format: voucherRules.format.optional().openapi({ description: 'The attachment: pdf (default) or html' }),
  })
  .strict()
  .openapi('SendVoucher');

const VoucherDeliveryWire = z
  .object({
    message_id: z.string().openapi({ description: 'The Message-ID header of the e-mail', example: '<0b6c0f6e-…@example.com>' }),
    to: z.string(),
    format: voucherRules.format,
    sent_at: z.iso.datetime(),
  })
  .openapi('VoucherDelivery');

const getRoute = scopedRoute('voucher.read', {
  method: 'get',
  path: '/reservations/{id}/voucher',
  operationId: 'getReservationVoucher',
  tags: ['Bookings'],
  summary: 'The booking voucher, as PDF or HTML',
  description:
    'The voucher of the reservation the booking belongs to (every room of a multi-room reservation): booking and ' +
    "confirmation numbers, the partner's reference, property, dates with the check-in time, guests, price, cancellation " +
    'policy in words and special requests. `?format=pdf|html`, else content negotiation on Accept (application/pdf or ' +
    'text/html; PDF for a missing Accept or */*); an Accept allowing neither: 406 NOT_ACCEPTABLE. A cancelled booking\'s ' +
    'voucher is served and says CANCELLED. Sent inline (Content-Disposition: inline; filename="voucher-<id>.pdf"), not cached. ' +
    "The HTML page is self-contained (no script, no external resource) under its own Content-Security-Policy. " +
    'GET /bookings/{id}/voucher stays 501 as the v1 contract says.',
  request: { params: ReservationId, query: VoucherQuery },
  responses: {
    200: {
      description: 'The voucher',
      headers: {
        'Content-Disposition': { description: 'inline; filename="voucher-<id>.pdf" (or .html)', schema: { type: 'string' }, required: true },
        Vary: { description: 'Accept', schema: { type: 'string' } },
      },
      content: {
        'application/pdf': { schema: z.string().openapi({ format: 'binary', description: 'A4 PDF' }) },
        'text/html': { schema: z.string().openapi({ description: 'One self-contained HTML page' }) },
      },
    },
    ...errorResponses(
      [ValidationError, `VALIDATION_ERROR: format is not pdf or html, or ${BAD_ID} (details.fields)`],
      NO_RESERVATION,
      [NotAcceptableError, 'NOT_ACCEPTABLE: Accept allows neither application/pdf nor text/html (and no format was given); details.available'],
      UpstreamError,
    ),
  },
});

const sendRoute = scopedRoute('voucher.send', {
  method: 'post',
  path: '/reservations/{id}/send-voucher',
  operationId: 'sendReservationVoucher',
  tags: ['Bookings'],
  summary: 'E-mail the booking voucher',
  description:
    "Sends the voucher (attached as PDF, or HTML) to `to`, or to the booking's booker e-mail. The body may be omitted. " +
    `At most ${VOUCHER_MAILS_PER_HOUR} e-mails per reservation per hour, and per channel (all its reservations) ` +
    `${VOUCHER_MAILS_PER_CHANNEL_HOUR} per hour and ${VOUCHER_MAILS_PER_CHANNEL_DAY} per day unless the deployment sets other limits ` +
    '(429 VOUCHER_MAIL_LIMIT_EXCEEDED, details.scope "reservation" or "channel", Retry-After). ' +
    'The service sends through its SMTP server (SMTP_URL) or, without one, writes the message to its mail outbox ' +
    "(sandbox). A sandbox that sends real e-mail (SMTP_URL) mails a voucher only to the reservation's own booker/guest " +
    'e-mail address (422 VOUCHER_RECIPIENT_NOT_ALLOWED otherwise). 202: the mail server accepted the message. ' +
    'Takes an Idempotency-Key: a repeat with the same key and body sends nothing again and answers the first response.',
  request: {
    params: ReservationId,
    headers: idempotencyHeader,
    body: { required: false, content: { 'application/json': { schema: SendVoucherWire } } },
  },
  responses: {
    202: { description: 'Handed to the mail server (or written to the outbox)', content: { 'application/json': { schema: dataEnvelope(VoucherDeliveryWire) } } },
    ...errorResponses(
      [
        ValidationError,
        "VALIDATION_ERROR: a bad field (`to` must be one plain address; unknown fields are refused), `to` missing while the booking has no booker e-mail, " +
          `${BAD_ID}, a malformed JSON body or Idempotency-Key (details.fields)`,
      ],
      NO_RESERVATION,
      [ConflictError, 'IDEMPOTENCY_KEY_REUSED, or IDEMPOTENCY_KEY_IN_PROGRESS (with Retry-After)'],
      [
        UnprocessableError,
        'MESSAGE_TOO_LARGE: the e-mail would exceed its size limit (details.limit_bytes); VOUCHER_RECIPIENT_NOT_ALLOWED: a sandbox ' +
          "sending real e-mail mails only the reservation's own booker/guest address (details.field)",
      ],
      [
        RateLimitError,
        "RATE_LIMIT_EXCEEDED: too many requests for the channel's tier; or VOUCHER_MAIL_LIMIT_EXCEEDED: this reservation's voucher " +
          `was e-mailed ${VOUCHER_MAILS_PER_HOUR} times within the hour (details.scope "reservation"), or the channel's vouchers ` +
          'as often as its hourly or daily limit allows (details.scope "channel", details.window "hour" or "day"). ' +
          'Retry after Retry-After seconds (details.retry_after)',
      ],
      [UpstreamError, 'MAIL_DELIVERY_FAILED: the mail server refused or did not answer; nothing was sent. UPSTREAM_ERROR: the inventory provider failed'],
    ),
  },
}, [idempotency()]);

export function reservationVoucherRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(getRoute, async (c) => {
    const format = chooseVoucherFormat(c.req.valid('query').format, c.req.header('accept'));
    const voucher = await getVoucher(c.get('ctx'), c.req.valid('param').id, format);
    const headers: Record<string, string> = {
      'Content-Type': voucher.mediaType,
      'Content-Disposition': `inline; filename="${voucher.filename}"`,
      // Personal data: not kept by browsers or proxies.
      'Cache-Control': 'private, no-store',
      Vary: 'Accept',
    };
    // Kept by the security headers middleware: an HTML answer's own policy wins over the docs page's.
    if (format === 'html') headers['Content-Security-Policy'] = VOUCHER_HTML_CSP;
    return c.body(voucher.body as Uint8Array<ArrayBuffer>, 200, headers) as never;
  });

  app.openapi(sendRoute, async (c) => {
    const body = c.req.valid('json');
    const sent = await sendVoucher(c.get('ctx'), c.req.valid('param').id, { to: body.to, format: body.format });
    return ok(c, { message_id: sent.messageId, to: sent.to, format: sent.format, sent_at: sent.sentAt.toISOString() }, 202);
  });
}
