/**
 * The public face of vouchers: the model (model.ts), the layout both formats draw (layout.ts),
 * rendering (html.ts, pdf.ts), e-mail (mail.ts) and the voucher services (vouchers.ts). Other
 * modules import only this file.
 */
export { VoucherNotAcceptableError } from './errors.js';
export { MAIL_OUTBOX_PURGE_EVERY_MS, purgeMailOutbox, smtpTransportOptions } from './mail.js';
export { voucherOf } from './model.js';
export { renderVoucherPdf, toWinAnsi } from './pdf.js';
export {
  VOUCHER_FORMATS,
  VOUCHER_MAILS_PER_CHANNEL_DAY,
  VOUCHER_MAILS_PER_CHANNEL_HOUR,
  VOUCHER_MAILS_PER_HOUR,
  anyRecipientAllowed,
  getVoucher,
  sendVoucher,
  voucherBooking,
  voucherMailLimiters,
  voucherMailLimits,
  voucherRules,
  type VoucherBooking,
  type VoucherDelivery,
  type VoucherFormat,
} from './vouchers.js';
