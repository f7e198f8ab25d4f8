import { z } from 'zod';
import type { Channel, PrismaClient } from '../../generated/prisma/client.js';
import { NotFoundError, currencySchema, type Currency, storableText } from '../kernel/index.js';

/** The channel profile a partner sees (docs/spec/channel-api.md §4.2); the account number is always masked. */
export interface ChannelProfile {
  userId: string;
  name: string;
  company: string | null;
  tier: 'sandbox' | 'starter';
  /** Percent, e.g. 10.5. Stored as basis points. */
  commissionRate: number;
  rateLimit: { sandbox: number; production: number };
  bankAccount: {
    bankName: string;
    bankCode: string;
    accountNumber: string;
    accountHolder: string;
  } | null;
  defaultCurrency: string;
  tierUpdatedAt: Date | null;
  createdAt: Date;
}

export interface BankAccountInput {
  bankName: string;
  bankCode: string;
  accountNumber: string;
  accountHolder: string;
}

export interface ChannelUpdate {
  name?: string | undefined;
  company?: string | null | undefined;
  defaultCurrency?: Currency | undefined;
  bankAccount?: BankAccountInput | null | undefined;
}

/**
 * The rule of each editable field, written once. REST (snake_case) and GraphQL (camelCase) build
 * their request schemas from these so both refuse the same values.
 */
export const channelRules = {
  name: storableText(z.string().trim().min(1, 'must not be empty').max(200)),
  company: storableText(z.string().trim().max(200)).nullable(),
  defaultCurrency: currencySchema,
  bankName: storableText(z.string().trim().min(1, 'must not be empty').max(100)),
  bankCode: z.string().trim().regex(/^[0-9A-Z]{2,11}$/, 'a bank code of 2 to 11 digits or capital letters'),
  accountNumber: z
    .string()
    .trim()
    .regex(/^[0-9][0-9-]{4,28}[0-9]$/, 'digits, optionally separated by dashes (6 to 30 characters)'),
  accountHolder: storableText(z.string().trim().min(1, 'must not be empty').max(100)),
};

export function maskAccountNumber(accountNumber: string): string {
  const shown = Math.min(4, Math.floor(accountNumber.length / 2));
  return '*'.repeat(accountNumber.length - shown) + accountNumber.slice(accountNumber.length - shown);
}

export function toProfile(channel: Channel): ChannelProfile {
  const hasAccount =
    channel.bankName !== null &&
    channel.bankCode !== null &&
    channel.bankAccountNumber !== null &&
    channel.bankAccountHolder !== null;
  return {
    userId: channel.id,
    name: channel.name,
    company: channel.company,
    tier: channel.tier,
    commissionRate: channel.commissionRateBps / 100,
    rateLimit: { sandbox: channel.rateLimitSandbox, production: channel.rateLimitProduction },
    bankAccount: hasAccount
      ? {
          bankName: channel.bankName!,
          bankCode: channel.bankCode!,
          accountNumber: maskAccountNumber(channel.bankAccountNumber!),
          accountHolder: channel.bankAccountHolder!,
        }
      : null,
    defaultCurrency: channel.defaultCurrency,
    tierUpdatedAt: channel.tierUpdatedAt,
    createdAt: channel.createdAt,
  };
}

export async function getChannel(prisma: PrismaClient, channelId: string): Promise<ChannelProfile> {
  const channel = await prisma.channel.findUnique({ where: { id: channelId } });
  if (!channel) throw new NotFoundError('Channel not found');
  return toProfile(channel);
}

export async function updateChannel(
  prisma: PrismaClient,
  channelId: string,
  update: ChannelUpdate,
): Promise<ChannelProfile> {
  const bank = update.bankAccount;
  const channel = await prisma.channel.update({
    where: { id: channelId },
    data: {
      name: update.name,
      company: update.company,
      defaultCurrency: update.defaultCurrency,
      ...(bank !== undefined && {
        bankName: bank?.bankName ?? null,
        bankCode: bank?.bankCode ?? null,
        bankAccountNumber: bank?.accountNumber ?? null,
        bankAccountHolder: bank?.accountHolder ?? null,
      }),
    },
  });
  return toProfile(channel);
}
