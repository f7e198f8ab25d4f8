import type { Prisma } from '../generated/prisma/client.js';
import { AppError } from './errors.js';
import type { Amount } from './money.js';

/**
 * Why the balance moved. With `reference` (a booking id for the booking kinds) unique per kind,
 * a booking is charged, given back and refunded at most once each.
 */
export type LedgerKind =
  | 'opening_balance'
  | 'top_up'
  /** A booking's price, debited when it is made (production). */
  | 'booking_charge'
  /** The charge given back because the provider booked nothing. */
  | 'booking_void'
  /** The refund of a cancelled (or failed) booking: total minus the cancellation fee. */
  | 'booking_refund';

export class InsufficientBalanceError extends AppError {
  constructor(required: Amount, available: Amount) {
    super(402, 'INSUFFICIENT_BALANCE', 'The channel balance is too low for this booking', {
      required: Number(required),
      available: Number(available),
    });
  }
}

/**
 * Moves a channel's balance by `amount` (credit > 0, debit < 0) and records it, inside the
 * caller's transaction. The balance check and the change are one conditional UPDATE, so two
 * concurrent debits can never take the balance below zero (the CHECK constraint backs this up).
 */
export async function post(
  tx: Prisma.TransactionClient,
  channelId: string,
  amount: Amount,
  kind: LedgerKind,
  reference: string | null = null,
): Promise<Amount> {
  const updated = await tx.channel.updateMany({
    where: { id: channelId, balance: { gte: amount < 0n ? -amount : 0n } },
    data: { balance: { increment: amount } },
  });
  const channel = await tx.channel.findUniqueOrThrow({ where: { id: channelId }, select: { balance: true } });
  if (updated.count === 0) throw new InsufficientBalanceError(-amount, channel.balance);
  await tx.ledgerEntry.create({
    data: { channelId, amount, balanceAfter: channel.balance, kind, reference },
  });
  return channel.balance;
}
