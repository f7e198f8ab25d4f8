import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { AppDeps } from '../context.js';
import { AppError } from './errors.js';

/**
 * Outgoing e-mail (voucher e-mails), through a pluggable transport:
 * - SMTP (nodemailer) when SMTP_URL is set;
 * - otherwise a file transport: each message is written as an .eml file under
 *   DATA_DIR/outbox-mail and logged, so a newcomer sees it work without a mail server.
 * A message is built once (nodemailer's MIME composer), its size checked, and those same bytes
 * are written or sent.
 */

/** The largest message sent (a voucher PDF is some tens of kilobytes). */
export const MAX_MESSAGE_BYTES = 2 * 1024 * 1024;

/** SMTP deadlines, well inside the request deadline. */
const SMTP_TIMEOUT_MS = 10_000;

export interface MailAttachment {
  filename: string;
  content: Uint8Array;
  contentType: string;
}

export interface MailMessage {
  /** One address, already validated. */
  to: string;
  subject: string;
  text: string;
  attachments: MailAttachment[];
}

export interface SentMail {
  messageId: string;
  to: string;
  sentAt: Date;
  transport: 'smtp' | 'file';
  /** The .eml file of the file transport. */
  file: string | null;
  bytes: number;
}

export interface MailTransport {
  readonly kind: 'smtp' | 'file';
  /** Delivers a built message; resolves once the relay accepted it or the file is written. */
  deliver(raw: Buffer, envelope: { from: string; to: string }, messageId: string, at: Date): Promise<string | null>;
}

/** 502: the SMTP server refused the message or could not be reached. Nothing was sent. */
export class MailDeliveryError extends AppError {
  constructor() {
    super(502, 'MAIL_DELIVERY_FAILED', 'The mail server did not accept the message; nothing was sent. Retry later');
  }
}

/** 422: the message would be larger than MAX_MESSAGE_BYTES. */
export class MessageTooLargeError extends AppError {
  constructor(bytes: number) {
    super(422, 'MESSAGE_TOO_LARGE', `The message would be ${bytes} bytes; at most ${MAX_MESSAGE_BYTES} are sent`, {
      limit_bytes: MAX_MESSAGE_BYTES,
    });
  }
}

function smtpTransport(deps: AppDeps, url: string): MailTransport {
  const transporter: Transporter = nodemailer.createTransport({
    url,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    kind: 'smtp',
    async deliver(raw, envelope, messageId) {
      try {
        await transporter.sendMail({ envelope: { from: envelope.from, to: [envelope.to] }, raw });
      } catch (error) {
        deps.logger.error({ err: error, messageId }, 'SMTP delivery failed');
        throw new MailDeliveryError();
      }
      deps.logger.info({ messageId, transport: 'smtp', toDomain: envelope.to.split('@')[1] }, 'mail sent');
      return null;
    },
  };
}

function fileTransport(deps: AppDeps): MailTransport {
  const dir = join(deps.config.dataDir, 'outbox-mail');
  return {
    kind: 'file',
    async deliver(raw, envelope, messageId, at) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const stamp = at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
      const file = join(dir, `${stamp}-${randomUUID()}.eml`);
      // Personal data: readable by the service's user only; `wx` never overwrites.
      await writeFile(file, raw, { flag: 'wx', mode: 0o600 });
      deps.logger.info({ messageId, transport: 'file', to: envelope.to, file }, 'mail written (no SMTP_URL: file transport)');
      return file;
    },
  };
}

/** One transport per service (per config): SMTP connections are opened per message, nothing to close. */
const transports = new WeakMap<AppDeps, MailTransport>();

export function mailTransport(deps: AppDeps): MailTransport {
  let transport = transports.get(deps);
  if (!transport) {
    const url = deps.config.mail.smtpUrl;
    transport = url ? smtpTransport(deps, url) : fileTransport(deps);
    transports.set(deps, transport);
  }
  return transport;
}

/** Builds the MIME message (CRLF line ends, as .eml files and SMTP expect); never sends it. */
const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });

/** Header text without line breaks or other control characters (no header injection). */
function headerText(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

export async function sendMail(deps: AppDeps, message: MailMessage): Promise<SentMail> {
  const from = deps.config.mail.from;
  const domain = from.split('@')[1] ?? 'localhost';
  const messageId = `<${randomUUID()}@${domain}>`;
  const sentAt = deps.clock();
  const built = await composer.sendMail({
    from,
    to: message.to,
    subject: headerText(message.subject),
    text: message.text,
    messageId,
    date: sentAt,
    attachments: message.attachments.map((a) => ({
      filename: headerText(a.filename),
      content: Buffer.from(a.content),
      contentType: a.contentType,
    })),
  });
  const raw = built.message as Buffer;
  if (raw.length > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(raw.length);
  const transport = mailTransport(deps);
  const file = await transport.deliver(raw, { from, to: message.to }, messageId, sentAt);
  return { messageId, to: message.to, sentAt, transport: transport.kind, file, bytes: raw.length };
}
