import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamProperty } from '../../src/upstream/protocol.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { Dataset } from '../../src/simulator/dataset.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';
import { descriptions, property, ratePlan, roomType, startStubProvider, text } from '../helpers/stubProvider.js';

let t: TestService;
let creds: IssuedCredentials;
let contentOnly: IssuedCredentials;
const data = new Dataset(42, 500);

beforeAll(async () => {
  t = await startTestService();
  creds = await t.channel();
  contentOnly = await t.channel({ scopes: ['properties:read'] });
});
afterAll(() => t.close());

function get(path: string, who: IssuedCredentials = creds) {
  return t.request(`/channel/v1${path}`, { headers: apiKey(who) });
}

describe('GET /properties/{id}', () => {
  it('returns the property in the DECISIONS.md shape', async () => {
    const res = await get('/properties/7');
    expect(res.status).toBe(200);
    const body = await res.json();
    const p = data.property(7)!;
    expect(body.data).toMatchObject({
      id: 7,
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
    expect(Object.keys(body.data).sort()).toEqual(
      [
        'id', 'name', 'city', 'country', 'address', 'star_rating', 'latitude', 'longitude', 'timezone', 'updated_at',
        'descriptions', 'amenities', 'images', 'checkin', 'checkout', 'policies', 'phone', 'chain', 'brand', 'spoken_languages', 'review',
      ].sort(),
    );
    expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
  });

  it.each(['abc', '1.5', '-3', '0', '99999999999'])('answers 400 VALIDATION_ERROR for the id %s', async (id) => {
    const res = await get(`/properties/${id}`);
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.details.fields[0].field).toBe('id');
  });

  it('answers 404 NOT_FOUND for an id the provider does not have', async () => {
    const res = await get('/properties/501');
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe('NOT_FOUND');
  });

  it('needs a credential', async () => {
    const res = await t.request('/channel/v1/properties/1');
    expect(res.status).toBe(401);
    expect((await res.json()).error.code).toBe('UNAUTHORIZED');
  });
});

describe('room types and rate plans', () => {
  it('lists room types with bed groups and max occupancy', async () => {
    const res = await get('/properties/3/roomtypes');
    expect(res.status).toBe(200);
    const { data: rooms } = await res.json();
    const provider = (await t.service.deps.upstream.getProperty(3))!;
    expect(rooms).toMatchObject(
      provider.room_types!.map((r) => ({
        id: r.id,
        property_id: 3,
        name: r.name['ko-KR'],
        max_occupancy: r.max_occupancy,
        bed_groups: r.bed_groups.map((b) => ({ id: b.id, description: b.description['ko-KR'] })),
      })),
    );
  });

  it('lists rate plans, filtered by roomtype_id; an unknown room type is 404', async () => {
    const provider = (await t.service.deps.upstream.getProperty(3))!;
    const rooms = provider.room_types!;
    const all = (await (await get('/properties/3/rateplans')).json()).data;
    expect(all).toHaveLength(rooms.flatMap((r) => r.rate_plans).length);
    const first = rooms[0]!.rate_plans[0]!;
    expect(all[0]).toEqual({
      id: first.id,
      roomtype_id: rooms[0]!.id,
      name: first.name['ko-KR'],
      meal_plan: first.meal_plan,
      refundable: first.refundable,
      cancellation_policy: first.cancellation_policy,
      amenities: first.amenities.map((a) => ({ code: a.code, group: a.group, name: a.name['ko-KR'] })),
    });
    const room = rooms[1]!;
    const filtered = (await (await get(`/properties/3/rateplans?roomtype_id=${room.id}`)).json()).data;
    expect(filtered.map((rp: { id: string }) => rp.id)).toEqual(room.rate_plans.map((rp) => rp.id));
    const unknown = await get('/properties/3/rateplans?roomtype_id=nope');
    expect(unknown.status).toBe(404);
  });

  it('needs roomtypes:read (403 INSUFFICIENT_SCOPE naming it)', async () => {
    for (const path of ['/properties/3/roomtypes', '/properties/3/rateplans']) {
      const res = await get(path, contentOnly);
      expect(res.status).toBe(403);
      expect((await res.json()).error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'roomtypes:read' } });
    }
    expect((await get('/properties/3', contentOnly)).status).toBe(200);
  });
});

describe('GET /properties', () => {
  it('streams every property in id order inside the data envelope, ignoring query parameters', async () => {
    const res = await get('/properties?page=2&per_page=1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body.data).toHaveLength(500);
    expect(body.data.map((p: { id: number }) => p.id)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
  });
});

describe('content files', () => {
  it('catalog JSON is an array of id, name, city, country, star_rating, updated_at, hero_image_url, amenity_codes', async () => {
    const res = await get('/content/files/catalog');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="catalog.json"');
    const items = await res.json();
    expect(items).toHaveLength(500);
    const p = data.property(1)!;
    expect(items[0]).toEqual({
      id: 1, name: p.name, city: p.city, country: p.country, star_rating: p.starRating, updated_at: p.updatedAt.toISOString(),
      hero_image_url: expect.stringMatching(/^http:\/\/channel\.test\/images\/1\/[A-Za-z0-9_-]+\/large\.png$/),
      amenity_codes: expect.arrayContaining([expect.stringMatching(/^[a-z0-9_]+$/)]),
    });
  });

  it('updated_since keeps only properties changed after the instant', async () => {
    const since = '2026-06-01T00:00:00Z';
    const expected = Array.from({ length: 500 }, (_, i) => data.property(i + 1)!).filter((p) => p.updatedAt > new Date(since));
    expect(expected.length).toBeGreaterThan(50);
    expect(expected.length).toBeLessThan(450);
    const items = await (await get(`/content/files/catalog?updated_since=${since}`)).json();
    expect(items.map((i: { id: number }) => i.id)).toEqual(expected.map((p) => p.id));
  });

  it('catalog CSV has a header row and one row per property, quoted where needed', async () => {
    const res = await get('/content/files/catalog?format=csv');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await res.text()).trimEnd().split('\n');
    expect(lines[0]).toBe('id,name,city,country,star_rating,updated_at,hero_image_url,amenity_codes');
    expect(lines).toHaveLength(501);
    const p = data.property(1)!;
    expect(lines[1]!.startsWith([1, p.name, p.city, p.country, p.starRating, p.updatedAt.toISOString(), 'http://channel.test/images/1/'].join(','))).toBe(true);
  });

  it('content JSON adds room types with their rate plans; content CSV has one row per rate plan', async () => {
    const items = await (await get('/content/files/content?updated_since=2026-10-01T00:00:00Z')).json();
    const first = items[0];
    const provider = (await t.service.deps.upstream.getProperty(first.id))!;
    expect(first.room_types.map((r: { id: string }) => r.id)).toEqual(provider.room_types!.map((r) => r.id));
    expect(first.room_types[0].rate_plans.map((rp: { id: string }) => rp.id)).toEqual(provider.room_types![0]!.rate_plans.map((rp) => rp.id));

    const csv = (await (await get('/content/files/content?format=csv&updated_since=2026-10-01T00:00:00Z')).text()).trimEnd().split('\n');
    expect(csv[0]).toMatch(/^property_id,property_name,.*,rateplan_id,rateplan_name,meal_plan,refundable,cancellation_policy,headline,.*,rateplan_amenity_codes$/);
    const plans = items.reduce((n: number, i: { room_types: { rate_plans: unknown[] }[] }) => n + i.room_types.reduce((m, r) => m + r.rate_plans.length, 0), 0);
    expect(csv).toHaveLength(plans + 1);
  });

  it('an empty selection is an empty array, and CSV still has its header', async () => {
    expect(await (await get('/content/files/catalog?updated_since=2030-01-01T00:00:00Z')).json()).toEqual([]);
    const csv = await (await get('/content/files/content?format=csv&updated_since=2030-01-01T00:00:00Z')).text();
    expect(csv.trimEnd().split('\n')).toHaveLength(1);
  });

  it.each([
    ['format=xml', 'format'],
    ['updated_since=yesterday', 'updated_since'],
  ])('answers 400 for %s', async (query, field) => {
    const res = await get(`/content/files/catalog?${query}`);
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.details.fields[0].field).toBe(field);
  });
});

// Issue 15, finding 6: provider text starting with =, +, -, @ went into the CSV files as it was,
// and a spreadsheet runs such a cell as a formula (=HYPERLINK(...)). A stub provider serves the
// catalog with such names; numbers (a negative longitude) must stay plain numbers.
describe('content files in CSV escape formulas in the provider text', () => {
  const HYPERLINK = '=HYPERLINK("http://evil.example/?q=1","Click")';
  const ORIGIN = 'https://api.partner.test';
  // Full content around the formula text; the formula texts are in ko-KR only, so every language sees them.
  const catalog: UpstreamProperty[] = [
    property(
      {
        id: 1, name: HYPERLINK, city: '+Seoul', country: 'KR', address: '@Home 1', star_rating: 4.5,
        latitude: 37.77, longitude: -122.42, timezone: 'America/Los_Angeles', updated_at: '2026-10-01T00:00:00.000Z',
      },
      [
        roomType(1, '1-r1', text('+Suite'), [{ id: 'b1', description: text('=1+1') }, { id: 'b2', description: text('Twin') }], [
          ratePlan('1-r1', '1-r1-p1', text('-10% deal'), { meal_plan: 'room_only', refundable: true, cancellation_policy: 'flexible' }),
        ]),
      ],
      { descriptions: { ...descriptions(1), headline: text('=cmd|calc') }, review: null },
    ),
    property(
      {
        id: 2, name: '-2+3', city: '@Busan', country: 'KR', address: '\tTabbed', star_rating: 3,
        latitude: -33.87, longitude: -0.5, timezone: 'Asia/Seoul', updated_at: '2026-10-02T00:00:00.000Z',
      },
      [
        roomType(2, '2-r1', text('\uFF1D1+1'), [{ id: 'b1', description: text('Queen') }], [
          ratePlan('2-r1', '2-r1-p1', text('\rPlain rate'), { meal_plan: 'breakfast', refundable: false, cancellation_policy: 'non_refundable', amenities: [] }),
        ]),
      ],
      { checkin: { begin_time: '14:00', end_time: null, min_age: 18, instructions: text('Desk') }, images: [] },
    ),
  ];
  let provider: Awaited<ReturnType<typeof startStubProvider>>;
  let stub: TestService;
  let key: Record<string, string>;

  beforeAll(async () => {
    provider = await startStubProvider(catalog);
    stub = await startTestService({ UPSTREAM_URL: provider.url, PUBLIC_BASE_URL: ORIGIN });
    key = apiKey(await stub.channel({ scopes: ['properties:read'] }));
  });
  afterAll(async () => {
    await stub?.close();
    await provider?.close();
  });

  const file = async (kind: string, format: string) => {
    const res = await stub.request(`/channel/v1/content/files/${kind}?format=${format}`, { headers: { ...key, 'accept-language': 'zh-CN' } });
    expect(res.status).toBe(200);
    return res;
  };

  it('catalog.csv: the exact cells, formulas prefixed with an apostrophe, numbers plain', async () => {
    expect(await (await file('catalog', 'csv')).text()).toBe(
      'id,name,city,country,star_rating,updated_at,hero_image_url,amenity_codes\n' +
        `1,"'=HYPERLINK(""http://evil.example/?q=1"",""Click"")",'+Seoul,KR,4.5,2026-10-01T00:00:00.000Z,` +
        `${ORIGIN}/images/1/p1-hero/large.png,free_wifi|parking|fitness_center\n` +
        // No image: an empty cell.
        "2,'-2+3,'@Busan,KR,3,2026-10-02T00:00:00.000Z,,free_wifi|parking|fitness_center\n",
    );
  });

  it('content.csv: names, address, bed groups, rate plan names and headlines escaped; negative coordinates stay numbers', async () => {
    expect(await (await file('content', 'csv')).text()).toBe(
      'property_id,property_name,city,country,address,star_rating,latitude,longitude,timezone,updated_at,' +
        'roomtype_id,roomtype_name,max_occupancy,bed_groups,rateplan_id,rateplan_name,meal_plan,refundable,cancellation_policy,' +
        'headline,phone,checkin_begin_time,checkin_end_time,checkout_time,review_score,review_count,hero_image_url,amenity_codes,' +
        'area_sqm,views,roomtype_amenity_codes,rateplan_amenity_codes\n' +
        `1,"'=HYPERLINK(""http://evil.example/?q=1"",""Click"")",'+Seoul,KR,'@Home 1,4.5,37.77,-122.42,America/Los_Angeles,` +
        "2026-10-01T00:00:00.000Z,1-r1,'+Suite,3,'=1+1 | Twin,1-r1-p1,'-10% deal,room_only,true,flexible," +
        // No reviews: empty cells. An E.164 phone starts with +: a spreadsheet would compute it, so it is escaped too.
        `'=cmd|calc,'+82-2-1234-5678,15:00,23:00,11:00,,,${ORIGIN}/images/1/p1-hero/large.png,free_wifi|parking|fitness_center,` +
        '28.5,city|river,air_conditioning|minibar,breakfast_included|free_cancellation\n' +
        "2,'-2+3,'@Busan,KR,'\tTabbed,3,-33.87,-0.5,Asia/Seoul,2026-10-02T00:00:00.000Z," +
        // A carriage return also needs quotes: the cell is quoted and escaped.
        "2-r1,'\uFF1D1+1,3,Queen,2-r1-p1,\"'\rPlain rate\",breakfast,false,non_refundable," +
        // Check-in around the clock (no end), no image, a rate plan without amenities: empty cells.
        "[zh-CN] 2 headline,'+82-2-1234-5678,14:00,,11:00,8.7,321,,free_wifi|parking|fitness_center,28.5,city|river,air_conditioning|minibar,\n",
    );
  });

  it('the JSON files keep the text as the provider gave it (escaping is for spreadsheets)', async () => {
    const items = await (await file('catalog', 'json')).json();
    expect(items.map((i: { name: string; city: string }) => [i.name, i.city])).toEqual([[HYPERLINK, '+Seoul'], ['-2+3', '@Busan']]);
    const content = await (await file('content', 'json')).json();
    expect(content[0]).toMatchObject({ address: '@Home 1', longitude: -122.42, room_types: [{ name: '+Suite', rate_plans: [{ name: '-10% deal' }] }] });
  });
});
