import { z } from 'zod';

/**
 * Money is an integer count of the currency's smallest unit (KRW has none below the won), held as
 * bigint in code and BIGINT in the database. Floating point never touches an amount.
 */
export type Amount = bigint;

/** Largest amount accepted from outside: 10^15, far above any booking, far below 2^63. */
const MAX_AMOUNT = 1_000_000_000_000_000n;

/** A positive whole amount given as a JSON integer or a string of digits. */
export const positiveAmount = z
  .union([z.number().int().safe(), z.string().regex(/^\d{1,16}$/, 'a whole number')])
  .transform((v) => BigInt(v))
  .refine((v) => v > 0n && v <= MAX_AMOUNT, `must be between 1 and ${MAX_AMOUNT}`);

/** ISO 4217 codes the service accepts for a channel's default currency. */
export const CURRENCIES = ['KRW', 'USD', 'JPY', 'EUR', 'CNY', 'HKD', 'SGD', 'THB', 'TWD', 'VND'] as const;
export type Currency = (typeof CURRENCIES)[number];
export const currencySchema = z.enum(CURRENCIES, { error: `one of ${CURRENCIES.join(', ')}` });

/** Digits after the decimal point of each currency (ISO 4217); amounts count these minor units. */
export const MINOR_DIGITS: Record<Currency, number> = {
  KRW: 0, USD: 2, JPY: 0, EUR: 2, CNY: 2, HKD: 2, SGD: 2, THB: 2, TWD: 2, VND: 0,
};

/**
 * Reference rates: won per one major unit of each currency, scaled by 10,000 so the arithmetic is
 * exact in bigint. Prices are shown in the request currency with these; the channel is always
 * billed in KRW, the provider's currency (docs/decisions.md).
 */
const KRW_PER_UNIT_E4: Record<Currency, bigint> = {
  KRW: 10_000n,
  USD: 13_800_000n,
  JPY: 92_000n,
  EUR: 15_000_000n,
  CNY: 1_900_000n,
  HKD: 1_770_000n,
  SGD: 10_300_000n,
  THB: 390_000n,
  TWD: 430_000n,
  VND: 550n,
};

/** A KRW amount in `currency`'s minor units, rounded half up. */
export function convertFromKrw(krw: Amount, currency: Currency): Amount {
  if (currency === 'KRW') return krw;
  const numerator = krw * 10n ** BigInt(MINOR_DIGITS[currency]) * 10_000n;
  const denominator = KRW_PER_UNIT_E4[currency];
  return (2n * numerator + denominator) / (2n * denominator);
}

/** An amount as a JSON number; amounts of this service stay far below 2^53. */
export function amountToNumber(amount: Amount): number {
  if (amount > BigInt(Number.MAX_SAFE_INTEGER) || amount < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`amount ${amount} is too large for a JSON number`);
  }
  return Number(amount);
}
