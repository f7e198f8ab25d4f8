import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { Dataset } from '../../src/simulator/dataset.js';
import { PAGE_TOKEN_TTL_SECONDS } from '../../src/services/catalog/index.js';
import { expectError } from '../helpers/http.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/** v2 content (docs/spec/channel-api.md §4.6, §9; docs/spec/DECISIONS.md "v2 property list", "v2 details"). */

let t: TestService;
let creds: IssuedCredentials;
let other: IssuedCredentials;
const data = new Dataset(42, 500);
let offsetMs = 0;

beforeAll(async () => {
  t = await startTestService({}, { clock: () => new Date(Date.now() + offsetMs) });
  creds = await t.channel();
  other = await t.channel({ name: 'Other Channel' });
});
afterAll(() => t.close());

function get(path: string, headers: Record<string, string> = apiKey(creds)) {
  return t.request(`/api/channel/v2${path}`, { headers });
}

interface ListBody {
  properties: { id: string; updated_at: string }[];
  next_page_token: string | null;
}

async function list(query: string, headers?: Record<string, string>): Promise<ListBody> {
  const res = await get(`/properties${query}`, headers);
  expect(res.status).toBe(200);
  return (await res.json()) as ListBody;
}

/** Every page from the first, following next_page_token; `query` is sent on the first page only. */
async function walk(query: string, perPage: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let pages = 0;
  let token: string | null = null;
  do {
    const qs: string = token ? `?per_page=${perPage}&page_token=${encodeURIComponent(token)}` : `?per_page=${perPage}${query}`;
    const body = await list(qs);
    expect(body.properties.length).toBeLessThanOrEqual(perPage);
    ids.push(...body.properties.map((p) => p.id));
    token = body.next_page_token;
    pages++;
  } while (token !== null && pages < 1000);
  return { ids, pages };
}

/** The fields of a property on REST (rest-adapters/wire/properties.ts). */
const PROPERTY_FIELDS = [
  'id', 'name', 'city', 'country', 'address', 'star_rating', 'latitude', 'longitude', 'timezone', 'updated_at',
  'descriptions', 'amenities', 'images', 'checkin', 'checkout', 'policies', 'phone', 'chain', 'brand', 'spoken_languages', 'review',
].sort();

const allIds = Array.from({ length: 500 }, (_, i) => String(i + 1));

describe('GET /api/channel/v2/properties', () => {
  it('is {properties, next_page_token}, 20 by default, with string ids in the v1 shape', async () => {
    const body = await list('');
    expect(Object.keys(body).sort()).toEqual(['next_page_token', 'properties']);
    expect(body.properties.map((p) => p.id)).toEqual(allIds.slice(0, 20));
    expect(typeof body.next_page_token).toBe('string');
    const p = data.property(1)!;
    expect(body.properties[0] as Record<string, unknown>).toMatchObject({
      id: '1',
      name: p.name,
      city: p.city,
      country: p.country,
      address: p.address,
      star_rating: p.starRating,
      latitude: p.latitude,
      longitude: p.longitude,
      timezone: p.timezone,
      updated_at: p.updatedAt.toISOString(),
    });
    expect(Object.keys(body.properties[0]!).sort()).toEqual(PROPERTY_FIELDS);
  });

  it('visits every property exactly once, in id order, when following page tokens', async () => {
    const { ids, pages } = await walk('', 100);
    expect(ids).toEqual(allIds);
    expect(pages).toBe(5);
    // An uneven page size too: the last page is short and says it is the last.
    const odd = await walk('', 37);
    expect(odd.ids).toEqual(allIds);
    expect(odd.pages).toBe(Math.ceil(500 / 37));
  });

  it('per_page may vary from page to page', async () => {
    const first = await list('?per_page=3');
    const second = await list(`?per_page=5&page_token=${encodeURIComponent(first.next_page_token!)}`);
    expect([...first.properties, ...second.properties].map((p) => p.id)).toEqual(allIds.slice(0, 8));
  });

  it.each(['1', '100'])('accepts per_page=%s', async (n) => {
    expect((await list(`?per_page=${n}`)).properties).toHaveLength(Number(n));
  });

  it.each(['0', '101', '-1', 'abc', '2.5'])('answers 400 INVALID_REQUEST naming per_page for per_page=%s', async (n) => {
    const body = await expectError(await get(`/properties?per_page=${n}`), 400, 'INVALID_REQUEST');
    expect(body.details!.fields![0]!.field).toBe('per_page');
  });

  it('updated_since keeps only properties changed after the instant, and the page tokens keep the filter', async () => {
    const since = '2026-06-01T00:00:00Z';
    const expected = Array.from({ length: 500 }, (_, i) => data.property(i + 1)!)
      .filter((p) => p.updatedAt > new Date(since))
      .map((p) => String(p.id));
    expect(expected.length).toBeGreaterThan(50);
    expect(expected.length).toBeLessThan(450);
    const { ids } = await walk(`&updated_since=${since}`, 30);
    expect(ids).toEqual(expected);
  });

  it('with a page token, updated_since may be repeated as it was but not changed', async () => {
    const since = '2026-06-01T00:00:00Z';
    const first = await list(`?per_page=10&updated_since=${since}`);
    const token = encodeURIComponent(first.next_page_token!);
    // The same instant, written another way, is the same filter.
    expect((await get(`/properties?per_page=10&updated_since=2026-06-01T09:00:00%2B09:00&page_token=${token}`)).status).toBe(200);
    const changed = await expectError(await get(`/properties?updated_since=2026-07-01T00:00:00Z&page_token=${token}`), 400, 'INVALID_REQUEST');
    expect(changed.details!.fields![0]!.field).toBe('updated_since');
    // A filter added to a token made without one is a change too.
    const plain = encodeURIComponent((await list('?per_page=10')).next_page_token!);
    await expectError(await get(`/properties?updated_since=${since}&page_token=${plain}`), 400, 'INVALID_REQUEST');
  });

  it('answers 400 INVALID_REQUEST naming updated_since for a value that is not a date-time', async () => {
    const body = await expectError(await get('/properties?updated_since=yesterday'), 400, 'INVALID_REQUEST');
    expect(body.details!.fields![0]!.field).toBe('updated_since');
  });

  it('an empty page_token is the first page', async () => {
    expect((await list('?page_token=&per_page=2')).properties.map((p) => p.id)).toEqual(['1', '2']);
  });

  describe('a page token that is not genuine is 400 INVALID_REQUEST naming page_token, never a 500', () => {
    let token: string;
    beforeAll(async () => {
      token = (await list('?per_page=10')).next_page_token!;
    });

    async function refused(pageToken: string, headers?: Record<string, string>) {
      const body = await expectError(
        await get(`/properties?page_token=${encodeURIComponent(pageToken)}`, headers),
        400,
        'INVALID_REQUEST',
      );
      expect(body.details!.fields).toEqual([{ field: 'page_token', reason: expect.any(String) }]);
      return body.details!.fields![0]!.reason;
    }

    it('garbage', async () => {
      for (const garbage of ['abc', 'MTA', 'a.b.c', '{}', 'x'.repeat(3000)]) await refused(garbage);
    });

    it('a tampered payload or signature', async () => {
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
      // Skip ahead: a cursor of the provider's own form, but not one this service signed.
      const forged = Buffer.from(JSON.stringify({ ...claims, cursor: Buffer.from('400').toString('base64url') })).toString('base64url');
      await refused(`${header}.${forged}.${signature}`);
      const flipped = signature.slice(0, -2) + (signature.at(-2) === 'A' ? 'B' : 'A') + signature.at(-1);
      await refused(`${header}.${payload}.${flipped}`);
      await refused(`${header}.${payload}.`);
    });

    it('a genuine token of another kind', async () => {
      const link = await t.service.deps.tokens.sign(
        'v2_cancel',
        { channel_id: creds.user_id, itinerary_id: 'x' },
        { now: new Date(), ttlSeconds: 600 },
      );
      expect(await refused(link)).toBe('not a page token');
    });

    it("another channel's token", async () => {
      expect(await refused(token, apiKey(other))).toBe('issued to another channel');
    });

    it('an expired token', async () => {
      offsetMs = (PAGE_TOKEN_TTL_SECONDS + 60) * 1000;
      try {
        expect(await refused(token)).toMatch(/expired/);
      } finally {
        offsetMs = 0;
      }
      // The same token still works before its day is out.
      expect((await list(`?page_token=${encodeURIComponent(token)}`)).properties[0]!.id).toBe('11');
    });
  });

  it('a provider failure is 502 UPSTREAM_ERROR in the envelope', async () => {
    await expectError(await get('/properties', { ...apiKey(creds), 'x-test-scenario': 'upstream_error' }), 502, 'UPSTREAM_ERROR');
  });
});

describe('GET /api/channel/v2/properties/{id} and /roomtypes', () => {
  it('returns the property with its id as a string', async () => {
    const res = await get('/properties/7');
    expect(res.status).toBe(200);
    const p = data.property(7)!;
    const body = await res.json();
    expect(body).toMatchObject({
      id: '7',
      name: p.name,
      city: p.city,
      country: p.country,
      address: p.address,
      star_rating: p.starRating,
      latitude: p.latitude,
      longitude: p.longitude,
      timezone: p.timezone,
      updated_at: p.updatedAt.toISOString(),
    });
    expect(Object.keys(body).sort()).toEqual(PROPERTY_FIELDS);
    // The v1 shape, with the id as a string.
    const v1 = (await (await t.request('/channel/v1/properties/7', { headers: apiKey(creds) })).json()).data;
    expect(body).toEqual({ ...v1, id: '7' });
  });

  it('lists room types with string ids, in the provider\'s ko-KR texts by default', async () => {
    const res = await get('/properties/3/roomtypes');
    expect(res.status).toBe(200);
    const provider = (await t.service.deps.upstream.getProperty(3))!;
    expect(await res.json()).toMatchObject(
      provider.room_types!.map((r) => ({
        id: r.id,
        property_id: '3',
        name: r.name['ko-KR'],
        max_occupancy: r.max_occupancy,
        bed_groups: r.bed_groups.map((b) => ({ id: b.id, description: b.description['ko-KR'] })),
        area: { square_meters: r.area_sqm },
        views: r.views,
      })),
    );
  });

  it.each(['', '/roomtypes'])('answers 404 NOT_FOUND for an unknown property (%s)', async (suffix) => {
    await expectError(await get(`/properties/501${suffix}`), 404, 'NOT_FOUND');
  });

  it.each(['abc', '1.5', '-3', '0', '99999999999', '1e3'])('answers 400 INVALID_REQUEST naming id for the id %s', async (id) => {
    for (const suffix of ['', '/roomtypes']) {
      const body = await expectError(await get(`/properties/${id}${suffix}`), 400, 'INVALID_REQUEST');
      expect(body.details!.fields![0]!.field).toBe('id');
    }
  });

  it('a provider failure is 502 UPSTREAM_ERROR', async () => {
    await expectError(await get('/properties/8', { ...apiKey(creds), 'x-test-scenario': 'upstream_error' }), 502, 'UPSTREAM_ERROR');
  });
});

describe('authentication, scopes and routing', () => {
  it.each(['/properties', '/properties/1', '/properties/1/roomtypes'])('%s needs a credential (401 UNAUTHORIZED)', async (path) => {
    await expectError(await get(path, {}), 401, 'UNAUTHORIZED');
    await expectError(await get(path, { 'x-api-key': 'ck_not-a-key' }), 401, 'UNAUTHORIZED');
  });

  it('accepts a Bearer token as well as X-Api-Key', async () => {
    const tokenRes = await t.request('/channel/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret }),
    });
    const bearer = { authorization: `Bearer ${(await tokenRes.json()).access_token}` };
    const res = await get('/properties/1', bearer);
    expect(res.status).toBe(200);
    expect((await res.json()).id).toBe('1');
  });

  it('needs properties:read for properties and roomtypes:read for room types (403 INSUFFICIENT_SCOPE)', async () => {
    const roomsOnly = await t.channel({ scopes: ['roomtypes:read'] });
    const contentOnly = await t.channel({ scopes: ['properties:read'] });
    for (const path of ['/properties', '/properties/1']) {
      const body = await expectError(await get(path, apiKey(roomsOnly)), 403, 'INSUFFICIENT_SCOPE');
      expect(body.details).toEqual({ required_scope: 'properties:read' });
    }
    const body = await expectError(await get('/properties/1/roomtypes', apiKey(contentOnly)), 403, 'INSUFFICIENT_SCOPE');
    expect(body.details).toEqual({ required_scope: 'roomtypes:read' });
    expect((await get('/properties/1', apiKey(contentOnly))).status).toBe(200);
  });

  it('an unknown route under the base is 404 NOT_FOUND in the envelope', async () => {
    for (const path of ['/nothing-here', '/properties/1/rateplans', '/properties/1/roomtypes/x']) {
      await expectError(await get(path), 404, 'NOT_FOUND');
    }
    await expectError(await t.request('/api/channel/v2/properties', { method: 'DELETE', headers: apiKey(creds) }), 404, 'NOT_FOUND');
  });

  it('serves its OpenAPI 3.1 document without a credential', async () => {
    const res = await t.request('/api/channel/v2/openapi.json');
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('2.0.0');
    expect(doc.servers).toEqual([{ url: '/api/channel/v2' }]);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/properties', '/properties/{id}', '/properties/{id}/roomtypes']));
    const listParams = doc.paths['/properties'].get.parameters.map((p: { name: string }) => p.name);
    expect(listParams).toEqual(expect.arrayContaining(['page_token', 'per_page', 'updated_since']));
    expect(doc.paths['/properties/{id}/roomtypes'].get['x-required-scopes']).toEqual(['roomtypes:read']);
    expect(doc.components.schemas.PropertyV2.properties.id.type).toBe('string');
    expect(doc.components.securitySchemes.ApiKeyAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Api-Key' });
  });
});
