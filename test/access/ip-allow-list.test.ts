import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeIpEntry } from '../../src/services/kernel/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { SCOPES } from '../../src/services/access/index.js';
import { apiKey, startTestService, type GraphQLResult, type TestService } from '../helpers/service.js';
import { graphqlResponse } from '../helpers/graphql.js';

/**
 * The IP allow list of an app (docs/spec/channel-api.md §5.7), as partners and the operator register it: REST
 * GET /channel/v1/apps/me and PUT /channel/v1/apps/me/ip-allow-list, GraphQL `app` and
 * `setIpAllowList`, the operator route behind `app:ip-allow-list`. One rule (normalized entries,
 * at most 50, no /0); a partner cannot register a list that leaves out its own address; a change
 * applies from the next request on this instance. Requests carry a simulated client address.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let t: TestService;
let owner: IssuedCredentials;
let stranger: IssuedCredentials;
let readOnly: IssuedCredentials;

/** The owner's office address, and one outside every list of this file. */
const HOME = '203.0.113.7';
const OUTSIDE = '192.0.2.99';

beforeAll(async () => {
  t = await startTestService();
  [owner, stranger, readOnly] = await Promise.all([
    t.channel({ name: 'Allow List Owner' }),
    t.channel({ name: 'Allow List Stranger' }),
    t.channel({ name: 'Allow List Reader', scopes: ['channels:read'] }),
  ]);
}, 60_000);
afterAll(() => t?.close());

async function rest(
  method: string,
  path: string,
  options: { ip?: string; as?: Record<string, string>; body?: unknown; raw?: string } = {},
): Promise<{ status: number; body: Json }> {
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const res = await t.request(`/channel/v1${path}`, {
    method,
    ip: options.ip ?? HOME,
    headers: { ...(options.as ?? apiKey(owner)), ...(body !== undefined && { 'content-type': 'application/json' }) },
    body,
  });
  return { status: res.status, body: await res.json() };
}

const putList = (list: unknown, options: { ip?: string; as?: Record<string, string> } = {}) =>
  rest('PUT', '/apps/me/ip-allow-list', { ...options, body: { ip_allow_list: list } });

async function gql(
  query: string,
  variables: Record<string, unknown> = {},
  options: { ip?: string; as?: Record<string, string> } = {},
): Promise<GraphQLResult> {
  const res = await graphqlResponse(t, query, variables, { ip: options.ip ?? HOME, headers: options.as ?? apiKey(owner) });
  return { status: res.status, ...((await res.json()) as object) };
}

const APP_FIELDS = 'appId userId name clientId scopes status ipAllowList createdAt updatedAt';
const SET = `mutation($list: [String!]!) { setIpAllowList(input: { ipAllowList: $list }) { ${APP_FIELDS} } }`;

const operator = () => ({ authorization: `Bearer ${t.service.adminToken.token}` });
function admin(appId: string, body: unknown, headers: Record<string, string> = operator()) {
  return t.request(`/admin/v1/apps/${appId}/ip-allow-list`, {
    method: 'PUT',
    ip: '127.0.0.1',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function storedList(appId: string): Promise<string[]> {
  return (await t.service.deps.db.prisma.app.findUniqueOrThrow({ where: { id: appId } })).ipAllowList;
}

async function setStored(appId: string, list: string[]) {
  await t.service.deps.db.prisma.app.update({ where: { id: appId }, data: { ipAllowList: list } });
  t.service.deps.credentials?.clear();
}

describe('the rule of an entry', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    [' 198.51.100.0/24 ', '198.51.100.0/24'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['2001:db8::/32', '2001:db8::/32'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['::ffff:192.0.2.0/120', '192.0.2.0/24'],
    ['203.0.113.7/32', '203.0.113.7'],
    ['2001:db8::1/128', '2001:db8::1'],
    ['10.0.0.0/8', '10.0.0.0/8'],
  ])('%s is stored as %s', (entry, stored) => {
    expect(normalizeIpEntry(entry)).toEqual({ value: stored });
  });

  it.each([
    ['not-an-ip', /not an IPv4 or IPv6 address/],
    ['256.1.1.1', /not an IPv4 or IPv6 address/],
    ['127.1', /not an IPv4 or IPv6 address/],
    ['010.0.0.1', /not an IPv4 or IPv6 address/],
    ['0x7f.0.0.1', /not an IPv4 or IPv6 address/],
    ['fe80::1%eth0', /not an IPv4 or IPv6 address/],
    ['', /not an IPv4 or IPv6 address/],
    ['198.51.100.7/24', /host bits are set; the network of this range is 198\.51\.100\.0\/24/],
    ['2001:db8::1/32', /host bits are set; the network of this range is 2001:db8::\/32/],
    ['198.51.100.0/33', /prefix length must be a whole number from 1 to 32/],
    ['198.51.100.0/024', /prefix length/],
    ['198.51.100.0/', /prefix length/],
    ['198.51.100.0/24/8', /prefix length/],
    ['2001:db8::/129', /from 1 to 128/],
    ['0.0.0.0/0', /every address is not allowed; an empty list already allows any address/],
    ['::/0', /every address/],
    ['::ffff:0.0.0.0/96', /every address/],
    ['0.0.0.0', /unspecified address/],
    ['::', /unspecified address/],
  ])('%s is refused', (entry, reason) => {
    const result = normalizeIpEntry(entry);
    expect(result).toEqual({ error: expect.stringMatching(reason) });
  });
});

describe('REST /channel/v1/apps/me', () => {
  it('GET reads the app of the credential', async () => {
    const { status, body } = await rest('GET', '/apps/me');
    expect(status).toBe(200);
    expect(body.data).toEqual({
      app_id: owner.app_id,
      user_id: owner.user_id,
      name: 'Allow List Owner app',
      client_id: owner.client_id,
      scopes: [...SCOPES],
      status: 'active',
      ip_allow_list: [],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(body.meta.request_id).toEqual(expect.any(String));
  });

  it('PUT replaces the list, normalized and without duplicates, and it applies from the next request', async () => {
    // The credential is in this instance's cache, with its empty list, before the change.
    expect((await rest('GET', '/channels/me', { ip: OUTSIDE })).status).toBe(200);
    const { status, body } = await putList(['203.0.113.7', '198.51.100.0/24', ' 2001:DB8::/32', '::ffff:192.0.2.1', '203.0.113.7/32', HOME]);
    expect(status).toBe(200);
    expect(body.data.ip_allow_list).toEqual(['203.0.113.7', '198.51.100.0/24', '2001:db8::/32', '192.0.2.1']);
    expect(body.data.app_id).toBe(owner.app_id);
    expect(await storedList(owner.app_id)).toEqual(['203.0.113.7', '198.51.100.0/24', '2001:db8::/32', '192.0.2.1']);
    expect((await rest('GET', '/apps/me')).body.data.ip_allow_list).toEqual(body.data.ip_allow_list);

    // Enforced at once on this instance: outside is refused, every listed address and range is served.
    const refused = await rest('GET', '/channels/me', { ip: OUTSIDE });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('IP_NOT_ALLOWED');
    for (const ip of [HOME, '198.51.100.200', '2001:db8:1::5', '192.0.2.1', '::ffff:192.0.2.1']) {
      expect((await rest('GET', '/channels/me', { ip })).status, ip).toBe(200);
    }
  });

  it.each([
    ['an address that is not one', ['203.0.113.7', 'not-an-ip'], 'ip_allow_list.1'],
    ['a range with host bits set', ['198.51.100.7/24'], 'ip_allow_list.0'],
    ['a prefix too long', [HOME, '198.51.100.0/40'], 'ip_allow_list.1'],
    ['a range of every address', ['0.0.0.0/0'], 'ip_allow_list.0'],
    ['more than 50 entries', Array.from({ length: 51 }, (_, i) => `198.51.${i}.1`), 'ip_allow_list'],
    ['a string instead of a list', HOME, 'ip_allow_list'],
    ['a number in the list', [HOME, 7], 'ip_allow_list.1'],
    ['null', null, 'ip_allow_list'],
  ])('PUT with %s is 400 VALIDATION_ERROR naming the entry, and changes nothing', async (_name, list, field) => {
    const before = await storedList(owner.app_id);
    const { status, body } = await putList(list);
    expect(status).toBe(400);
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.details.fields).toContainEqual({ field, reason: expect.any(String) });
    expect(await storedList(owner.app_id)).toEqual(before);
  });

  it('PUT without the field, with another field, or with malformed JSON is 400 and changes nothing', async () => {
    const before = await storedList(owner.app_id);
    for (const request of [{ body: {} }, { body: { ip_allow_list: [HOME], ips: [] } }, { raw: '{"ip_allow_list": [' }]) {
      const { status, body } = await rest('PUT', '/apps/me/ip-allow-list', request);
      expect(status, JSON.stringify(request)).toBe(400);
      expect(body.error.code).toBe('VALIDATION_ERROR');
    }
    expect(await storedList(owner.app_id)).toEqual(before);
  });

  it('PUT of a list without the address of the request is 422 IP_ALLOW_LIST_LOCKOUT naming it, and changes nothing', async () => {
    const before = await storedList(owner.app_id);
    const { status, body } = await putList(['198.51.100.0/24', '2001:db8::/32']);
    expect(status).toBe(422);
    expect(body.error).toMatchObject({ code: 'IP_ALLOW_LIST_LOCKOUT', details: { client_ip: HOME } });
    expect(body.error.message).toContain(HOME);
    expect(await storedList(owner.app_id)).toEqual(before);
    // From an address the current list allows, a list holding that address (through a range) is fine.
    const fromRange = await putList(['198.51.100.0/24'], { ip: '198.51.100.9' });
    expect(fromRange.status).toBe(200);
    expect(fromRange.body.data.ip_allow_list).toEqual(['198.51.100.0/24']);
    // An IPv4-mapped socket address is the IPv4 caller.
    const mapped = await putList([HOME], { ip: '::ffff:198.51.100.9' });
    expect(mapped.status).toBe(422);
    expect(mapped.body.error.details).toEqual({ client_ip: '198.51.100.9' });
    expect((await putList([HOME, '198.51.100.9'], { ip: '::ffff:198.51.100.9' })).status).toBe(200);
  });

  it('PUT of an empty list allows any address again', async () => {
    const { status, body } = await putList([]);
    expect(status).toBe(200);
    expect(body.data.ip_allow_list).toEqual([]);
    expect(await storedList(owner.app_id)).toEqual([]);
    expect((await rest('GET', '/channels/me', { ip: OUTSIDE })).status).toBe(200);
  });

  it('channels:read may read the app but not change the list: 403 INSUFFICIENT_SCOPE, nothing changed', async () => {
    const as = apiKey(readOnly);
    const read = await rest('GET', '/apps/me', { as });
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ app_id: readOnly.app_id, scopes: ['channels:read'] });
    const { status, body } = await putList([HOME], { as });
    expect(status).toBe(403);
    expect(body.error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'channels:write' } });
    expect(await storedList(readOnly.app_id)).toEqual([]);

    // A token of the full app issued with channels:read only is refused the same way.
    const tokenRes = await t.request('/channel/v1/oauth/token', {
      method: 'POST',
      ip: HOME,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: owner.client_id, client_secret: owner.client_secret, scope: 'channels:read' }),
    });
    const bearer = { authorization: `Bearer ${(await tokenRes.json()).access_token}` };
    expect((await rest('GET', '/apps/me', { as: bearer })).body.data.app_id).toBe(owner.app_id);
    expect((await putList([HOME], { as: bearer })).body.error.code).toBe('INSUFFICIENT_SCOPE');
    expect(await storedList(owner.app_id)).toEqual([]);
  });

  it("a change touches only the credential's own app", async () => {
    expect((await putList([HOME])).status).toBe(200);
    expect(await storedList(owner.app_id)).toEqual([HOME]);
    expect(await storedList(stranger.app_id)).toEqual([]);
    const theirs = await rest('GET', '/apps/me', { as: apiKey(stranger), ip: OUTSIDE });
    expect(theirs.body.data).toMatchObject({ app_id: stranger.app_id, ip_allow_list: [] });
    expect((await putList([], { ip: HOME })).status).toBe(200);
  });

  it('without a credential: 401', async () => {
    expect((await rest('GET', '/apps/me', { as: {} })).status).toBe(401);
    expect((await putList([], { as: {} })).status).toBe(401);
  });
});

describe('GraphQL app and setIpAllowList', () => {
  it('app reads the app of the credential', async () => {
    const res = await gql(`{ app { ${APP_FIELDS} } }`);
    expect(res.errors).toBeUndefined();
    expect(res.data!.app).toEqual({
      appId: owner.app_id,
      userId: owner.user_id,
      name: 'Allow List Owner app',
      clientId: owner.client_id,
      scopes: [...SCOPES],
      status: 'ACTIVE',
      ipAllowList: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  it('setIpAllowList replaces the list with the same rule as REST, and it applies at once', async () => {
    expect((await gql('{ channel { userId } }', {}, { ip: OUTSIDE })).errors).toBeUndefined();
    const res = await gql(SET, { list: ['2001:DB8::/32', HOME, `${HOME}/32`, '::ffff:192.0.2.1'] });
    expect(res.errors).toBeUndefined();
    expect((res.data!.setIpAllowList as Json).ipAllowList).toEqual(['2001:db8::/32', HOME, '192.0.2.1']);
    expect(await storedList(owner.app_id)).toEqual(['2001:db8::/32', HOME, '192.0.2.1']);
    const refused = await gql('{ channel { userId } }', {}, { ip: OUTSIDE });
    expect(refused.errors?.[0]?.extensions?.code).toBe('IP_NOT_ALLOWED');
    expect((await gql('{ app { ipAllowList } }', {}, { ip: '2001:db8::7' })).data).toEqual({
      app: { ipAllowList: ['2001:db8::/32', HOME, '192.0.2.1'] },
    });
  });

  it.each([
    ['an address that is not one', [HOME, 'nope'], 'input.ipAllowList.1'],
    ['a range with host bits set', ['2001:db8::1/32'], 'input.ipAllowList.0'],
    ['a range of every address', ['::/0'], 'input.ipAllowList.0'],
    ['more than 50 entries', Array.from({ length: 51 }, (_, i) => `2001:db8::${i + 1}`), 'input.ipAllowList'],
  ])('setIpAllowList with %s is a VALIDATION_ERROR naming the entry, and changes nothing', async (_name, list, field) => {
    const before = await storedList(owner.app_id);
    const res = await gql(SET, { list });
    expect(res.data ?? null).toBeNull();
    expect(res.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    expect(res.errors?.[0]?.extensions?.details?.fields).toContainEqual({ field, reason: expect.any(String) });
    expect(await storedList(owner.app_id)).toEqual(before);
  });

  it('a list of the wrong type is refused by GraphQL itself, and changes nothing', async () => {
    const before = await storedList(owner.app_id);
    for (const list of [[7], null, { a: 1 }]) {
      const res = await gql(SET, { list });
      expect(res.errors?.length, JSON.stringify(list)).toBeGreaterThan(0);
      expect(res.data ?? null).toBeNull();
    }
    expect(await storedList(owner.app_id)).toEqual(before);
  });

  it('a list without the address of the request is an IP_ALLOW_LIST_LOCKOUT error naming it, and changes nothing', async () => {
    const before = await storedList(owner.app_id);
    const res = await gql(SET, { list: ['2001:db8::/32'] });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'IP_ALLOW_LIST_LOCKOUT', details: { client_ip: HOME } });
    expect(await storedList(owner.app_id)).toEqual(before);
  });

  it('channels:read may query app but not setIpAllowList (INSUFFICIENT_SCOPE); an empty list clears', async () => {
    const as = apiKey(readOnly);
    expect(((await gql('{ app { appId } }', {}, { as })).data as Json).app.appId).toBe(readOnly.app_id);
    const res = await gql(SET, { list: [] }, { as });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'channels:write' } });

    const cleared = await gql(SET, { list: [] });
    expect((cleared.data!.setIpAllowList as Json).ipAllowList).toEqual([]);
    expect(await storedList(owner.app_id)).toEqual([]);
    expect(await storedList(stranger.app_id)).toEqual([]);
  });
});

describe('the operator route (npm run admin -- app:ip-allow-list)', () => {
  it('sets any valid list, without the lock-out check, and it applies at once; an empty list clears', async () => {
    expect((await rest('GET', '/channels/me', { as: apiKey(stranger), ip: OUTSIDE })).status).toBe(200);
    const res = await admin(stranger.app_id, { ip_allow_list: ['198.51.100.0/24', '::ffff:192.0.2.1', '198.51.100.0/24'] });
    expect(res.status).toBe(200);
    expect((await res.json()).data).toMatchObject({ app_id: stranger.app_id, ip_allow_list: ['198.51.100.0/24', '192.0.2.1'] });
    expect(await storedList(stranger.app_id)).toEqual(['198.51.100.0/24', '192.0.2.1']);
    expect((await rest('GET', '/channels/me', { as: apiKey(stranger), ip: OUTSIDE })).body.error.code).toBe('IP_NOT_ALLOWED');
    expect((await rest('GET', '/channels/me', { as: apiKey(stranger), ip: '198.51.100.1' })).status).toBe(200);

    // channel:show reports the same list.
    const shown = await t.request(`/admin/v1/channels/${stranger.user_id}`, { ip: '127.0.0.1', headers: operator() });
    expect((await shown.json()).data.apps[0].ip_allow_list).toEqual(['198.51.100.0/24', '192.0.2.1']);

    const cleared = await admin(stranger.app_id, { ip_allow_list: [] });
    expect((await cleared.json()).data.ip_allow_list).toEqual([]);
    expect((await rest('GET', '/channels/me', { as: apiKey(stranger), ip: OUTSIDE })).status).toBe(200);
  });

  it('refuses what partners are refused (400), an unknown app (404) and partner credentials (403), changing nothing', async () => {
    await setStored(stranger.app_id, [HOME]);
    for (const body of [{ ip_allow_list: ['10.0.0.1/8'] }, { ip_allow_list: ['0.0.0.0/0'] }, { ip_allow_list: 'x' }, {}]) {
      const res = await admin(stranger.app_id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).error.code).toBe('VALIDATION_ERROR');
    }
    const unknown = await admin('00000000-0000-4000-8000-000000000000', { ip_allow_list: [] });
    expect(unknown.status).toBe(404);
    const asPartner = await admin(stranger.app_id, { ip_allow_list: [] }, apiKey(stranger));
    expect(asPartner.status).toBe(403);
    expect(await storedList(stranger.app_id)).toEqual([HOME]);
    await setStored(stranger.app_id, []);
  });
});
