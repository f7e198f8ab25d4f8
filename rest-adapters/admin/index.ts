import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppDeps } from '../../src/context.js';
import { currencySchema, positiveAmount } from '../../src/services/kernel/index.js';
import { appRules, SCOPES } from '../../src/services/access/index.js';
import * as operator from '../../src/services/channels/index.js';
import { ok } from '../envelope.js';
import type { HttpEnv } from '../env.js';
import { router } from '../routing.js';
import { operatorOnly } from './operator.js';
import { toWire as channelToWire } from '../v1/channels.js';
import { OPERATOR_REPORTABLE, reportStatus, toBookingRecord } from '../../src/services/bookings/index.js';
import { runBookingSync } from '../../src/services/reservations/index.js';

/**
 * The operator API under /admin/v1, used by `npm run admin`. Not part of the partner contract:
 * operator token only, loopback only unless ADMIN_ALLOW_REMOTE=true, partner credentials refused.
 */
export function adminRoutes(deps: AppDeps): OpenAPIHono<HttpEnv> {
  const app = router();
  app.use('*', operatorOnly(deps, { name: 'The operator API', allowRemote: deps.config.adminAllowRemote, remoteSetting: 'ADMIN_ALLOW_REMOTE' }));
  const prisma = deps.db.prisma;

  app.openapi(createChannel, async (c) => {
    const body = c.req.valid('json');
    return ok(c, await operator.createChannel(prisma, body), 201);
  });

  app.openapi(showChannel, async (c) => {
    const channel = await operator.showChannel(prisma, c.req.valid('param').id);
    return ok(c, {
      ...channelToWire(channel),
      balance: Number(channel.balance),
      apps: channel.apps,
    });
  });

  app.openapi(topUp, async (c) => {
    const { amount, reference } = c.req.valid('json');
    const result = await operator.topUp(prisma, c.req.valid('param').id, amount, reference ?? null);
    return ok(c, { user_id: result.user_id, amount: Number(result.amount), balance: Number(result.balance) });
  });

  // Applies on this instance at once, on others within RATE_LIMIT_CACHE_TTL_MS.
  app.openapi(rateLimit, async (c) => {
    const id = c.req.valid('param').id;
    const result = await operator.setRateLimit(prisma, id, c.req.valid('json'));
    deps.limiters.api.forget(id);
    return ok(c, result);
  });

  // Each change to an app's credentials is announced once committed: this instance drops the
  // app's cached credentials, so it refuses a suspended app, a revoked key or token or an address
  // off the allow list from the next request on; the others at once through Redis, else within
  // AUTH_CACHE_TTL_MS.
  const changed = (appId: string) => deps.credentialChanges.announce({ appId });
  app.openapi(appAction('suspend'), async (c) => {
    const result = await operator.setAppStatus(prisma, c.req.valid('param').id, 'suspended');
    await changed(result.app_id);
    return ok(c, result);
  });
  app.openapi(appAction('resume'), async (c) => {
    const result = await operator.setAppStatus(prisma, c.req.valid('param').id, 'active');
    await changed(result.app_id);
    return ok(c, result);
  });
  app.openapi(appAction('rotate-key'), async (c) => {
    const result = await operator.rotateKey(prisma, c.req.valid('param').id);
    await changed(result.app_id);
    return ok(c, result);
  });
  app.openapi(appAction('rotate-secret'), async (c) => {
    const result = await operator.rotateClientSecret(prisma, c.req.valid('param').id);
    await changed(result.app_id);
    return ok(c, result);
  });
  app.openapi(ipAllowList, async (c) => {
    const result = await operator.setIpAllowList(prisma, c.req.valid('param').id, c.req.valid('json').ip_allow_list);
    await changed(result.app_id);
    return ok(c, result);
  });

  // A status the property reports (booking:status), through the state machine, with its events.
  app.openapi(bookingStatus, async (c) => {
    const booking = await reportStatus(deps, c.req.valid('param').id, c.req.valid('json').status);
    return ok(c, toBookingRecord(booking));
  });

  // One pass of the provider sync and pending-deadline sweep (booking:sync).
  app.openapi(bookingSync, async (c) => ok(c, await runBookingSync(deps)));
  return app;
}

const json = <T extends z.ZodType>(schema: T) => ({
  body: { required: true, content: { 'application/json': { schema } } },
});
const anyJson = { description: 'Enveloped result', content: { 'application/json': { schema: z.unknown() } } };
const idParam = z.object({ id: z.uuid() });

const createChannel = createRoute({
  method: 'post',
  path: '/channels',
  request: json(
    z
      .object({
        name: z.string().trim().min(1).max(200),
        company: z.string().trim().max(200).nullish(),
        tier: z.enum(['sandbox', 'starter']).optional(),
        balance: z.union([positiveAmount, z.literal(0).transform(() => 0n)]).optional(),
        currency: currencySchema.optional(),
        scopes: z.array(z.enum(SCOPES)).min(1).optional(),
      })
      .strict(),
  ),
  responses: { 201: anyJson },
});

const showChannel = createRoute({
  method: 'get',
  path: '/channels/{id}',
  request: { params: idParam },
  responses: { 200: anyJson },
});

const topUp = createRoute({
  method: 'post',
  path: '/channels/{id}/topup',
  request: {
    params: idParam,
    ...json(z.object({ amount: positiveAmount, reference: z.string().trim().min(1).max(200).optional() }).strict()),
  },
  responses: { 200: anyJson },
});

const points = z.int().min(1).max(1_000_000);
const rateLimit = createRoute({
  method: 'put',
  path: '/channels/{id}/rate-limit',
  request: {
    params: idParam,
    ...json(
      z
        .object({ sandbox: points.optional(), production: points.optional() })
        .strict()
        .refine((v) => v.sandbox !== undefined || v.production !== undefined, { message: 'give sandbox, production or both' }),
    ),
  },
  responses: { 200: anyJson },
});

const bookingStatus = createRoute({
  method: 'post',
  path: '/bookings/{id}/status',
  request: { params: idParam, ...json(z.object({ status: z.enum(OPERATOR_REPORTABLE) }).strict()) },
  responses: { 200: anyJson },
});

const bookingSync = createRoute({
  method: 'post',
  path: '/bookings/sync',
  responses: { 200: anyJson },
});

// The partner's rule (appRules), without the partner's lock-out check.
const ipAllowList = createRoute({
  method: 'put',
  path: '/apps/{id}/ip-allow-list',
  request: { params: idParam, ...json(z.object({ ip_allow_list: appRules.ipAllowList }).strict()) },
  responses: { 200: anyJson },
});

function appAction(action: 'suspend' | 'resume' | 'rotate-key' | 'rotate-secret') {
  return createRoute({
    method: 'post',
    path: `/apps/{id}/${action}`,
    request: { params: idParam },
    responses: { 200: anyJson },
  });
}
