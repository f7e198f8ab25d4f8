import { z } from 'zod';
import { CURRENCIES, principalOf } from '../services/kernel/index.js';
import { channelRules, getChannel, updateChannel, type ChannelProfile } from '../services/channels/index.js';
import { builder } from './builder.js';
import { serviceEnum } from './enums.js';
import { operationScopes } from '../services/access/index.js';

/**
 * The channel of the credential: its profile, and the edges that fill a partner's dashboard in
 * one query (Channel.bookings, Channel.webhooks and Channel.app, defined beside their types).
 */

const Tier = serviceEnum('ChannelTier', ['sandbox', 'starter'] as const);

const RateLimit = builder.objectRef<ChannelProfile['rateLimit']>('RateLimit').implement({
  description: 'Requests per minute allowed to this channel in each environment',
  fields: (t) => ({
    sandbox: t.exposeInt('sandbox'),
    production: t.exposeInt('production'),
  }),
});

const BankAccount = builder.objectRef<NonNullable<ChannelProfile['bankAccount']>>('BankAccount').implement({
  description: 'Settlement account; the account number is masked',
  fields: (t) => ({
    bankName: t.exposeString('bankName'),
    bankCode: t.exposeString('bankCode'),
    accountNumber: t.exposeString('accountNumber', { description: 'Asterisks and the last digits' }),
    accountHolder: t.exposeString('accountHolder'),
  }),
});

export const Channel = builder.objectRef<ChannelProfile>('Channel').implement({
  description: 'The channel (partner) linked to the credential',
  fields: (t) => ({
    userId: t.exposeID('userId'),
    name: t.exposeString('name'),
    company: t.exposeString('company', { nullable: true }),
    tier: t.field({ type: Tier, resolve: (c) => c.tier }),
    commissionRate: t.exposeFloat('commissionRate', { description: 'Percent' }),
    rateLimit: t.field({ type: RateLimit, resolve: (c) => c.rateLimit }),
    bankAccount: t.field({ type: BankAccount, nullable: true, resolve: (c) => c.bankAccount }),
    defaultCurrency: t.exposeString('defaultCurrency'),
    tierUpdatedAt: t.expose('tierUpdatedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const Currency = builder.enumType('Currency', { values: CURRENCIES });

const BankAccountInput = builder.inputType('BankAccountInput', {
  fields: (t) => ({
    bankName: t.string({ required: true }),
    bankCode: t.string({ required: true }),
    accountNumber: t.string({ required: true }),
    accountHolder: t.string({ required: true }),
  }),
});

const UpdateChannelInput = builder.inputType('UpdateChannelInput', {
  description: 'Fields to change; omitted fields stay as they are. bankAccount: null removes the account.',
  fields: (t) => ({
    name: t.string(),
    company: t.string(),
    defaultCurrency: t.field({ type: Currency }),
    bankAccount: t.field({ type: BankAccountInput }),
  }),
});

const updateChannelArgs = z.object({
  input: z
    .object({
      name: channelRules.name.nullish().transform((v) => v ?? undefined),
      company: channelRules.company.optional(),
      defaultCurrency: channelRules.defaultCurrency.nullish().transform((v) => v ?? undefined),
      bankAccount: z
        .object({
          bankName: channelRules.bankName,
          bankCode: channelRules.bankCode,
          accountNumber: channelRules.accountNumber,
          accountHolder: channelRules.accountHolder,
        })
        .nullable()
        .optional(),
    })
    .refine((v) => Object.values(v).some((x) => x !== undefined), 'give at least one field to change'),
});

builder.queryField('channel', (t) =>
  t.field({
    type: Channel,
    description: 'The channel of the credential (REST: GET /channel/v1/channels/me)',
    authScopes: operationScopes('channel.read'),
    resolve: (_root, _args, ctx) => getChannel(ctx.deps.db.prisma, principalOf(ctx).channelId),
  }),
);

builder.mutationField('updateChannel', (t) =>
  t.field({
    type: Channel,
    description: 'Changes the channel profile and settlement account (REST: PUT /channel/v1/channels/me)',
    authScopes: operationScopes('channel.update'),
    args: { input: t.arg({ type: UpdateChannelInput, required: true }) },
    validate: { schema: updateChannelArgs },
    resolve: (_root, args, ctx) =>
      updateChannel(ctx.deps.db.prisma, principalOf(ctx).channelId, args.input as z.infer<typeof updateChannelArgs>['input']),
  }),
);
