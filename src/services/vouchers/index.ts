/** The public face of vouchers: what other modules may use. */
export { MAIL_OUTBOX_PURGE_EVERY_MS, purgeMailOutbox, smtpTransportOptions } from './mail.js';
export { renderVoucherPdf, toWinAnsi } from './pdf.js';
export {
  VOUCHER_FORMATS,
  VOUCHER_HTML_CSP,
  VOUCHER_MAILS_PER_CHANNEL_DAY,
  VOUCHER_MAILS_PER_CHANNEL_HOUR,
  VOUCHER_MAILS_PER_HOUR,
  anyRecipientAllowed,
  chooseVoucherFormat,
  getVoucher,
  sendVoucher,
  voucherLinks,
  voucherMailLimiters,
  voucherMailLimits,
  voucherOf,
  voucherRules,
  type VoucherDelivery,
  type VoucherLinks,
} from './vouchers.js';
