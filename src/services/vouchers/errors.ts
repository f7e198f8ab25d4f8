import { AppError } from '../kernel/index.js';

/** The errors of vouchers and their e-mail, each with its status. */

/** 406: the Accept header names neither voucher format, and no `format` was given. */
export class VoucherNotAcceptableError extends AppError {
  constructor() {
    super(406, 'NOT_ACCEPTABLE', 'The voucher is available as application/pdf or text/html: send one of them in Accept, or ?format=pdf|html', {
      available: ['application/pdf', 'text/html'],
    });
  }
}

export type MailLimitScope = 'reservation' | 'channel';

/**
 * 429: the voucher of this reservation (scope "reservation"), or this channel's vouchers all
 * together (scope "channel", per hour or per day), were e-mailed as often as allowed; retry later.
 */
export class VoucherMailLimitError extends AppError {
  constructor(scope: MailLimitScope, window: 'hour' | 'day', limit: number, retryAfterSeconds: number) {
    super(
      429,
      'VOUCHER_MAIL_LIMIT_EXCEEDED',
      scope === 'reservation'
        ? `This reservation's voucher was e-mailed ${limit} times within the ${window}; retry later`
        : `This channel's vouchers were e-mailed ${limit} times within the ${window}; retry later`,
      { scope, window, limit, retry_after: retryAfterSeconds },
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}

/** 422: a sandbox sending through real SMTP mails a reservation's voucher to its own booker/guest addresses only. */
export class VoucherRecipientNotAllowedError extends AppError {
  constructor(field: string) {
    super(
      422,
      'VOUCHER_RECIPIENT_NOT_ALLOWED',
      "This sandbox sends real e-mail: a voucher goes only to the reservation's own booker or guest e-mail address",
      { field, allowed: 'booker_or_guest_email' },
    );
  }
}

/** 502: the SMTP server refused the message or could not be reached. Nothing was sent. */
export class MailDeliveryError extends AppError {
  constructor() {
    super(502, 'MAIL_DELIVERY_FAILED', 'The mail server did not accept the message; nothing was sent. Retry later');
  }
}

/** 422: the message would be larger than MAX_MESSAGE_BYTES (mail.ts), given as `limitBytes`. */
export class MessageTooLargeError extends AppError {
  constructor(bytes: number, limitBytes: number) {
    super(422, 'MESSAGE_TOO_LARGE', `The message would be ${bytes} bytes; at most ${limitBytes} are sent`, {
      limit_bytes: limitBytes,
    });
  }
}
