import { z } from 'zod';

/**
 * Money is an integer count of the currency's smallest unit (KRW has none below the won), held as
 * bigint in code and BIGINT in the database. Floating point never touches an amount.
 */
export type Amount = bigint;

/** Largest amount accepted from outside: 10^15, far above any booking, far below 2^63. */
export const MAX_AMOUNT = 1_000_000_000_000_000n;

/** A positive whole amount given as a JSON integer or a string of digits. */
export const positiveAmount = z
  .union([z.number().int().safe(), z.string().regex(/^\d{1,16}$/, 'a whole number')])
  .transform((v) => BigInt(v))
  .refine((v) => v > 0n && v <= MAX_AMOUNT, `must be between 1 and ${MAX_AMOUNT}`);

/** How booking records and ledger outputs carry amounts: decimal strings (spec §2.2). */
export function amountToString(amount: Amount): string {
  return amount.toString();
}

/** ISO 4217 codes the service accepts for a channel's default currency. */
export const CURRENCIES = ['KRW', 'USD', 'JPY', 'EUR', 'CNY', 'HKD', 'SGD', 'THB', 'TWD', 'VND'] as const;
export type Currency = (typeof CURRENCIES)[number];
export const currencySchema = z.enum(CURRENCIES, { error: `one of ${CURRENCIES.join(', ')}` });
