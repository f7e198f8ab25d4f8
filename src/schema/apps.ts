import { z } from 'zod';
import { appRules, getOwnApp, MAX_IP_ALLOW_LIST, operationScopes, replaceOwnIpAllowList, type AppView } from '../services/access/index.js';
import { builder } from './builder.js';
import { Channel } from './channel.js';
import { serviceEnum } from './enums.js';

/**
 * The app of the credential and its IP allow list: the GraphQL twins of GET /channel/v1/apps/me
 * and PUT /channel/v1/apps/me/ip-allow-list, over the same service and rule (appRules).
 *
 * Errors are top-level with `extensions.code`, as REST gives them: VALIDATION_ERROR (fields named
 * `input.ipAllowList.<index>`), IP_ALLOW_LIST_LOCKOUT (details.client_ip), INSUFFICIENT_SCOPE.
 */

const AppStatus = serviceEnum('AppStatus', ['active', 'suspended'] as const, 'SUSPENDED: every credential of the app is refused (set by the operator)');

const AppRef = builder.objectRef<AppView>('App').implement({
  description: 'The app of the credential (REST: GET /channel/v1/apps/me); never a secret',
  fields: (t) => ({
    appId: t.exposeID('appId'),
    userId: t.exposeID('userId', { description: 'The channel the app belongs to' }),
    name: t.exposeString('name'),
    clientId: t.exposeString('clientId', { description: 'The OAuth client_id of the app' }),
    scopes: t.exposeStringList('scopes', { description: 'The scopes of the app (an API key carries all of them)' }),
    status: t.field({ type: AppStatus, resolve: (a) => a.status }),
    ipAllowList: t.exposeStringList('ipAllowList', {
      description: 'Addresses and CIDR ranges the app may call from, in canonical form; empty: any address',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const SetIpAllowListInput = builder.inputType('SetIpAllowListInput', {
  description: 'The body of PUT /channel/v1/apps/me/ip-allow-list',
  fields: (t) => ({
    ipAllowList: t.stringList({
      required: true,
      description:
        `The new list, replacing the old one whole: at most ${MAX_IP_ALLOW_LIST} IPv4 or IPv6 addresses or CIDR ranges; ` +
        'empty allows any address. It must include the address of this request',
    }),
  }),
});

const setIpAllowListArgs = z.object({ input: z.object({ ipAllowList: appRules.ipAllowList }) });

builder.objectField(Channel, 'app', (t) =>
  t.field({
    type: AppRef,
    nullable: true,
    description: 'The app of the credential, with its IP allow list (scope channels:read)',
    authScopes: operationScopes('app.read'),
    resolve: (_channel, _args, ctx) => getOwnApp(ctx),
  }),
);

builder.queryField('app', (t) =>
  t.field({
    type: AppRef,
    description: 'The app of the credential, with its IP allow list (REST: GET /channel/v1/apps/me)',
    authScopes: operationScopes('app.read'),
    resolve: (_root, _args, ctx) => getOwnApp(ctx),
  }),
);

builder.mutationField('setIpAllowList', (t) =>
  t.field({
    type: AppRef,
    description:
      'Replaces the IP allow list of the app (REST: PUT /channel/v1/apps/me/ip-allow-list). A non-empty list without the ' +
      'address of this request is an IP_ALLOW_LIST_LOCKOUT error',
    authScopes: operationScopes('app.setIpAllowList'),
    args: { input: t.arg({ type: SetIpAllowListInput, required: true }) },
    validate: { schema: setIpAllowListArgs },
    resolve: (_root, args, ctx) => {
      const { ipAllowList } = (args as z.infer<typeof setIpAllowListArgs>).input;
      return replaceOwnIpAllowList(ctx, ipAllowList);
    },
  }),
);
