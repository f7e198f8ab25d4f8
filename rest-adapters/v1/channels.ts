import { OpenAPIHono, z } from '@hono/zod-openapi';
import { channelRules, getChannel, updateChannel, type ChannelProfile } from '../../src/services/channels/index.js';
import { CURRENCIES, principalOf, ValidationError } from '../../src/services/kernel/index.js';
import { dataEnvelope, errorResponses, ok } from '../envelope.js';
import type { HttpEnv } from '../env.js';
import { scopedRoute } from '../routing.js';

/** GET and PUT /channels/me (docs/spec/channel-api.md §4.2): the channel of the credential. */

const ChannelWire = z
  .object({
    user_id: z.uuid(),
    name: z.string(),
    company: z.string().nullable(),
    tier: z.enum(['sandbox', 'starter']),
    commission_rate: z.number().openapi({ description: 'Percent', example: 10.5 }),
    rate_limit: z.object({ sandbox: z.int(), production: z.int() }).openapi({
      description: 'Requests per minute in each environment',
    }),
    bank_account: z
      .object({
        bank_name: z.string(),
        bank_code: z.string(),
        account_number: z.string().openapi({ example: '********6789' }),
        account_holder: z.string(),
      })
      .nullable(),
    default_currency: z.string(),
    tier_updated_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
  })
  .openapi('Channel');

const ChannelUpdateWire = z
  .object({
    name: channelRules.name.optional(),
    company: channelRules.company.optional(),
    default_currency: channelRules.defaultCurrency.optional().openapi({ enum: [...CURRENCIES] }),
    bank_account: z
      .object({
        bank_name: channelRules.bankName,
        bank_code: channelRules.bankCode,
        account_number: channelRules.accountNumber,
        account_holder: channelRules.accountHolder,
      })
      .strict()
      .nullable()
      .optional()
      .openapi({ description: 'The settlement account, replaced whole; null removes it' }),
  })
  .strict()
  .refine((body) => Object.values(body).some((v) => v !== undefined), {
    message: 'give at least one field to change',
  })
  .openapi('ChannelUpdate');

export function toWire(p: ChannelProfile): z.infer<typeof ChannelWire> {
  return {
    user_id: p.userId,
    name: p.name,
    company: p.company,
    tier: p.tier,
    commission_rate: p.commissionRate,
    rate_limit: p.rateLimit,
    bank_account: p.bankAccount && {
      bank_name: p.bankAccount.bankName,
      bank_code: p.bankAccount.bankCode,
      account_number: p.bankAccount.accountNumber,
      account_holder: p.bankAccount.accountHolder,
    },
    default_currency: p.defaultCurrency,
    tier_updated_at: p.tierUpdatedAt?.toISOString() ?? null,
    created_at: p.createdAt.toISOString(),
  };
}

const getMe = scopedRoute('channel.read', {
  method: 'get',
  path: '/channels/me',
  operationId: 'getChannel',
  tags: ['Channel'],
  summary: 'The channel linked to the credential',
  responses: {
    200: { description: 'The channel', content: { 'application/json': { schema: dataEnvelope(ChannelWire) } } },
  },
});

const putMe = scopedRoute('channel.update', {
  method: 'put',
  path: '/channels/me',
  operationId: 'updateChannel',
  tags: ['Channel'],
  summary: 'Update channel information and the settlement account',
  description: 'Omitted fields stay as they are. Tier, commission and rate limits are set by the operator.',
  request: { body: { required: true, content: { 'application/json': { schema: ChannelUpdateWire } } } },
  responses: {
    200: { description: 'The updated channel', content: { 'application/json': { schema: dataEnvelope(ChannelWire) } } },
    ...errorResponses(ValidationError),
  },
});

export function channelRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(getMe, async (c) => {
    const ctx = c.get('ctx');
    return ok(c, toWire(await getChannel(ctx.deps.db.prisma, principalOf(ctx).channelId)));
  });

  app.openapi(putMe, async (c) => {
    const ctx = c.get('ctx');
    const body = c.req.valid('json');
    const profile = await updateChannel(ctx.deps.db.prisma, principalOf(ctx).channelId, {
      name: body.name,
      company: body.company,
      defaultCurrency: body.default_currency,
      bankAccount:
        body.bank_account &&
        {
          bankName: body.bank_account.bank_name,
          bankCode: body.bank_account.bank_code,
          accountNumber: body.bank_account.account_number,
          accountHolder: body.bank_account.account_holder,
        },
    });
    return ok(c, toWire(profile));
  });
}
