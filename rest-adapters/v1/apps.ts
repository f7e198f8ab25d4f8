import { OpenAPIHono, z } from '@hono/zod-openapi';
import { appRules, getOwnApp, MAX_IP_ALLOW_LIST, replaceOwnIpAllowList, SCOPES, type AppView } from '../../src/services/access/index.js';
import { dataEnvelope, errorResponses, ok } from '../envelope.js';
import type { HttpEnv } from '../env.js';
import { scopedRoute } from '../routing.js';
import { UnprocessableError, ValidationError } from '../../src/services/kernel/index.js';

/**
 * GET /apps/me and PUT /apps/me/ip-allow-list: the app of the credential and the addresses it may
 * call from (docs/spec/channel-api.md §5.7). The rule of the list lives in src/services/access/apps.ts, shared with GraphQL
 * and the operator command.
 */

const AppWire = z
  .object({
    app_id: z.uuid(),
    user_id: z.uuid().openapi({ description: 'The channel the app belongs to' }),
    name: z.string(),
    client_id: z.string().openapi({ description: 'The OAuth client_id of the app' }),
    scopes: z.array(z.enum(SCOPES)).openapi({ description: 'The scopes of the app (an API key carries all of them)' }),
    status: z.enum(['active', 'suspended']),
    ip_allow_list: z.array(z.string()).openapi({
      description: 'Addresses and CIDR ranges the app may call from, in canonical form; empty: any address',
      example: ['203.0.113.7', '198.51.100.0/24'],
    }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('App');

const IpAllowListWire = z
  .object({
    ip_allow_list: appRules.ipAllowList.openapi({
      description:
        `The new list, replacing the old one whole: at most ${MAX_IP_ALLOW_LIST} IPv4 or IPv6 addresses or CIDR ranges. ` +
        'An empty list allows any address. Entries are stored in canonical form, IPv4-mapped IPv6 as IPv4, /32 and /128 as ' +
        'the address, duplicates once. Refused: a range with host bits set (198.51.100.7/24), a /0 range, the ' +
        'unspecified address.',
      example: ['203.0.113.7', '198.51.100.0/24'],
    }),
  })
  .strict()
  .openapi('IpAllowListUpdate');

export function toWire(a: AppView): z.infer<typeof AppWire> {
  return {
    app_id: a.appId,
    user_id: a.userId,
    name: a.name,
    client_id: a.clientId,
    scopes: a.scopes as z.infer<typeof AppWire>['scopes'],
    status: a.status,
    ip_allow_list: a.ipAllowList,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

const getMe = scopedRoute('app.read', {
  method: 'get',
  path: '/apps/me',
  operationId: 'getApp',
  tags: ['Channel'],
  summary: 'The app of the credential, with its IP allow list',
  responses: {
    200: { description: 'The app', content: { 'application/json': { schema: dataEnvelope(AppWire) } } },
  },
});

const putIpAllowList = scopedRoute('app.setIpAllowList', {
  method: 'put',
  path: '/apps/me/ip-allow-list',
  operationId: 'replaceIpAllowList',
  tags: ['Channel'],
  summary: 'Replace the IP allow list of the app',
  description:
    'Requests with any credential of the app (its API key and its access tokens) from an address outside a non-empty ' +
    'list are refused with 403 IP_NOT_ALLOWED. The list must include the address of this request (422 ' +
    'IP_ALLOW_LIST_LOCKOUT otherwise, details.client_ip naming it), so a partner cannot lock itself out; the operator ' +
    'can set any list. It applies at once on the instance that answered and on every instance within a few seconds.',
  request: { body: { required: true, content: { 'application/json': { schema: IpAllowListWire } } } },
  responses: {
    200: { description: 'The updated app', content: { 'application/json': { schema: dataEnvelope(AppWire) } } },
    ...errorResponses(
      [ValidationError, 'VALIDATION_ERROR: an entry that is not an address or CIDR range, or too many (details.fields), or a malformed JSON body'],
      [UnprocessableError, 'IP_ALLOW_LIST_LOCKOUT: the list does not include the address of this request (details.client_ip)'],
    ),
  },
});

export function appRoutes(app: OpenAPIHono<HttpEnv>) {
  app.openapi(getMe, async (c) => ok(c, toWire(await getOwnApp(c.get('ctx')))));

  app.openapi(putIpAllowList, async (c) => {
    const { ip_allow_list } = c.req.valid('json');
    return ok(c, toWire(await replaceOwnIpAllowList(c.get('ctx'), ip_allow_list)));
  });
}
