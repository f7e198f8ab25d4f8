import { randomUUID } from 'node:crypto';
import { mkdir, readdir, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { AppDeps } from '../../context.js';
import { isLoopback } from '../kernel/index.js';
import { MailDeliveryError, MessageTooLargeError } from './errors.js';

/**
 * Outgoing e-mail (voucher e-mails), through a pluggable transport:
 * - SMTP (nodemailer) when SMTP_URL is set;
 * - otherwise a file transport: each message is written as an .eml file under
 *   DATA_DIR/outbox-mail and logged, so a newcomer sees it work without a mail server. Files
 *   older than MAIL_OUTBOX_RETENTION_MS are deleted as new ones are written (at most one pass
 *   per MAIL_OUTBOX_PURGE_EVERY_MS), or by purgeMailOutbox.
 * Logs name the recipient's domain only (personal data).
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

/**
 * The nodemailer options of an SMTP_URL. smtps:// speaks TLS from the start. smtp:// must upgrade
 * with STARTTLS (requireTLS): a server that does not offer it, or a failed upgrade, fails the
 * delivery (502) instead of sending credentials and personal data in clear. The one exception is a
 * relay on the same host (localhost, 127.0.0.0/8, ::1), which is often plain. Parameters in the URL
 * (`?tls.servername=...`) are nodemailer's own and still apply.
 */
export function smtpTransportOptions(url: string) {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const local = host.toLowerCase() === 'localhost' || isLoopback(host);
  return {
    url,
    ...(parsed.protocol === 'smtp:' && !local ? { requireTLS: true } : {}),
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  };
}

/** The domain of an address: what logs say of a recipient. */
export function recipientDomain(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/** An SMTP error as logged: its codes, and its text with any address reduced to its domain. */
function smtpFailure(error: unknown) {
  const e = (error ?? {}) as { code?: unknown; responseCode?: unknown; command?: unknown; message?: unknown };
  return {
    code: e.code,
    responseCode: e.responseCode,
    command: e.command,
    message: String(e.message ?? error).replace(/[^\s<>@"',;:]+@([^\s<>@"',;:]+)/g, '…@$1'),
  };
}

function smtpTransport(deps: AppDeps, url: string): MailTransport {
  const transporter: Transporter = nodemailer.createTransport(smtpTransportOptions(url) as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    kind: 'smtp',
    async deliver(raw, envelope, messageId) {
      try {
        await transporter.sendMail({ envelope: { from: envelope.from, to: [envelope.to] }, raw });
      } catch (error) {
        deps.logger.error({ failure: smtpFailure(error), messageId, toDomain: recipientDomain(envelope.to) }, 'SMTP delivery failed');
        throw new MailDeliveryError();
      }
      deps.logger.info({ messageId, transport: 'smtp', toDomain: recipientDomain(envelope.to) }, 'mail sent');
      return null;
    },
  };
}

/** How long the file transport keeps its .eml files. */
export const MAIL_OUTBOX_RETENTION_MS = 7 * 24 * 3_600_000;

/** The file transport looks for expired files at most this often (on a write). */
export const MAIL_OUTBOX_PURGE_EVERY_MS = 3_600_000;

export function mailOutboxDir(deps: AppDeps): string {
  return join(deps.config.dataDir, 'outbox-mail');
}

/** "20261122T101500Z-<uuid>.eml": the file transport's names, which start with the time written. */
const EML_NAME = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-.*\.eml$/;

/**
 * Deletes the outbox's .eml files older than MAIL_OUTBOX_RETENTION_MS at `now` (by the time in
 * their name; by modification time for a name of another form) and returns how many. Other files
 * are left alone; a missing directory is nothing to do. One directory listing: cheap, as the
 * directory holds at most a retention period of mail.
 */
export async function purgeMailOutbox(deps: AppDeps, now: Date = deps.clock()): Promise<number> {
  const dir = mailOutboxDir(deps);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  const before = now.getTime() - MAIL_OUTBOX_RETENTION_MS;
  let deleted = 0;
  for (const name of names) {
    if (!name.endsWith('.eml')) continue;
    const file = join(dir, name);
    const m = EML_NAME.exec(name);
    const written = m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : (await stat(file).catch(() => null))?.mtimeMs;
    if (written === undefined || written >= before) continue;
    try {
      await unlink(file);
      deleted++;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  if (deleted > 0) deps.logger.info({ deleted, dir }, 'expired mail outbox files deleted');
  return deleted;
}

function fileTransport(deps: AppDeps): MailTransport {
  const dir = mailOutboxDir(deps);
  let lastPurge = Number.NEGATIVE_INFINITY;
  return {
    kind: 'file',
    async deliver(raw, envelope, messageId, at) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const stamp = at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
      const file = join(dir, `${stamp}-${randomUUID()}.eml`);
      // Personal data: readable by the service's user only; `wx` never overwrites.
      await writeFile(file, raw, { flag: 'wx', mode: 0o600 });
      deps.logger.info(
        { messageId, transport: 'file', toDomain: recipientDomain(envelope.to), file },
        'mail written (no SMTP_URL: file transport)',
      );
      // Expired files go as new ones come, at most once per MAIL_OUTBOX_PURGE_EVERY_MS, without
      // holding up this request.
      if (at.getTime() - lastPurge >= MAIL_OUTBOX_PURGE_EVERY_MS) {
        lastPurge = at.getTime();
        purgeMailOutbox(deps, at).catch((error: unknown) => deps.logger.warn({ err: error, dir }, 'mail outbox purge failed'));
      }
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
  if (raw.length > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(raw.length, MAX_MESSAGE_BYTES);
  const transport = mailTransport(deps);
  const file = await transport.deliver(raw, { from, to: message.to }, messageId, sentAt);
  return { messageId, to: message.to, sentAt, transport: transport.kind, file, bytes: raw.length };
}
