import { randomUUID } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.js';
import { AppError, rowForSql, type Environment, type Amount } from '../kernel/index.js';

/**
 * Why the balance moved. With `reference` (a booking id for the booking kinds) unique per kind,
 * a booking is charged, given back and refunded at most once each.
 */
export type LedgerKind = AccountKind | BookingMoneyKind;

/** Money an operator puts on an account: not booking money, it moves in every environment. */
export type AccountKind = 'opening_balance' | 'top_up';

/** Booking money: it moves only through postBookingMoney, so only in production. */
export type BookingMoneyKind =
  /** A booking's price, debited when it is made (production). */
  | 'booking_charge'
  /** The charge given back because the provider booked nothing. */
  | 'booking_void'
  /** The refund of a cancelled (or failed) booking: total minus the cancellation fee. */
  | 'booking_refund'
  /** A date change to a dearer stay: the difference, debited before the provider is told (reference: the change). */
  | 'modification_charge'
  /** That difference given back because the change did not happen. */
  | 'modification_void'
  /** A date change to a cheaper stay: the difference, credited once it is made. */
  | 'modification_refund';

export class InsufficientBalanceError extends AppError {
  static readonly status = 402;
  constructor(required: Amount, available: Amount) {
    super(InsufficientBalanceError.status, 'INSUFFICIENT_BALANCE', 'The channel balance is too low for this booking', {
      required: Number(required),
      available: Number(available),
    });
  }
}

/**
 * The one rule of booking money (docs/decisions.md, "Environments"): it moves only on a
 * production instance, and only for a booking (or date change) made charged, i.e. made by a
 * production instance. A sandbox instance never debits or credits a channel for a booking,
 * whatever a row's stored `charged` flag says (a sandbox pointed at the production database
 * refunds nothing). `'new'` asks for a booking being made now: charged where money moves.
 */
export function movesBookingMoney(env: Environment, row: { charged: boolean } | 'new'): boolean {
  return env === 'production' && (row === 'new' || row.charged);
}

/**
 * Posts booking money of `row` (a booking or a date change; its id is the entry's reference)
 * when movesBookingMoney allows it; otherwise nothing moves. The booking flows call only this.
 */
export async function postBookingMoney(
  tx: Prisma.TransactionClient,
  env: Environment,
  row: { id: string; channelId: string; charged: boolean },
  amount: Amount,
  kind: BookingMoneyKind,
): Promise<void> {
  if (!movesBookingMoney(env, row)) return;
  await moveBalance(tx, row.channelId, amount, kind, row.id);
}

/**
 * Inserts `row` into `table` (a booking being made, its id the entry's reference) and charges
 * `amount` for it where movesBookingMoney allows, in one statement: the conditional debit of the
 * balance (as moveBalance), the row, and the ledger entry. One round trip and no interactive
 * transaction, so the channel's row, which every booking of the channel debits, stays locked
 * only while that statement runs and commits (issue 18, item 7). The row is written only when the
 * debit is: a short balance writes nothing and throws InsufficientBalanceError, unless the row
 * could not have been written anyway (`conflict`: e.g. its book token already made a booking),
 * whose error is thrown instead. A unique violation of the row throws as an insert would.
 * Where no money moves, the row is inserted alone.
 */
export async function insertCharged(
  db: Prisma.TransactionClient,
  env: Environment,
  table: 'bookings',
  row: { id: string; channelId: string; charged: boolean } & Record<string, unknown>,
  amount: Amount,
  kind: BookingMoneyKind,
  conflict: () => Promise<Error | null>,
): Promise<void> {
  const { columns, json } = rowForSql(row);
  const into = Prisma.raw(`"${table}"`);
  if (!movesBookingMoney(env, row)) {
    await db.$executeRaw`INSERT INTO ${into} (${columns}) SELECT ${columns} FROM json_populate_record(NULL::${into}, ${json}::json)`;
    return;
  }
  const floor = amount < 0n ? -amount : 0n;
  const rows = await db.$queryRaw<{ balance_after: bigint }[]>`
    WITH moved AS (
      UPDATE "channels" SET "balance" = "balance" + ${amount}, "updated_at" = CURRENT_TIMESTAMP
      WHERE "id" = ${row.channelId}::uuid AND "balance" >= ${floor}
      RETURNING "balance"
    ), made AS (
      INSERT INTO ${into} (${columns})
      SELECT ${columns} FROM json_populate_record(NULL::${into}, ${json}::json) WHERE EXISTS (SELECT 1 FROM moved)
      RETURNING "id"
    )
    INSERT INTO "ledger_entries" ("id", "channel_id", "amount", "balance_after", "kind", "reference")
    SELECT ${randomUUID()}::uuid, ${row.channelId}::uuid, ${amount}, "balance", ${kind}, ${row.id} FROM moved, made
    RETURNING "balance_after"`;
  if (rows[0]) return;
  const refused = await conflict();
  if (refused) throw refused;
  const channel = await db.channel.findUniqueOrThrow({ where: { id: row.channelId }, select: { balance: true } });
  throw new InsufficientBalanceError(-amount, channel.balance);
}

/** An operator's credit of a channel (opening balance, top-up), inside the caller's transaction. */
export function post(tx: Prisma.TransactionClient, channelId: string, amount: Amount, kind: AccountKind, reference: string | null = null): Promise<Amount> {
  return moveBalance(tx, channelId, amount, kind, reference);
}

/**
 * Moves a channel's balance by `amount` (credit > 0, debit < 0) and records it, inside the
 * caller's transaction. The balance check, the change and the ledger row are one statement: a
 * conditional UPDATE (so two concurrent debits can never take the balance below zero; the CHECK
 * constraint backs this up) feeding the INSERT. One round trip while the channel row is locked,
 * which matters because every booking of a channel takes that lock: callers post last, just
 * before their commit.
 */
async function moveBalance(tx: Prisma.TransactionClient, channelId: string, amount: Amount, kind: LedgerKind, reference: string | null): Promise<Amount> {
  const floor = amount < 0n ? -amount : 0n;
  const rows = await tx.$queryRaw<{ balance_after: bigint }[]>`
    WITH moved AS (
      UPDATE "channels" SET "balance" = "balance" + ${amount}, "updated_at" = CURRENT_TIMESTAMP
      WHERE "id" = ${channelId}::uuid AND "balance" >= ${floor}
      RETURNING "balance"
    )
    INSERT INTO "ledger_entries" ("id", "channel_id", "amount", "balance_after", "kind", "reference")
    SELECT ${randomUUID()}::uuid, ${channelId}::uuid, ${amount}, "balance", ${kind}, ${reference} FROM moved
    RETURNING "balance_after"`;
  if (rows[0]) return BigInt(rows[0].balance_after);
  const channel = await tx.channel.findUniqueOrThrow({ where: { id: channelId }, select: { balance: true } });
  throw new InsufficientBalanceError(-amount, channel.balance);
}
