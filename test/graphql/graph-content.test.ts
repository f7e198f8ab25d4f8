import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Property } from '../../src/services/catalog/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import type { BookingEventMessage } from '../../src/services/webhooks/index.js';
import { countCalls } from '../helpers/counters.js';
import { v1 } from '../helpers/flow.js';
import { dataOf, edgesNodes, gql, graphqlResponse, graphqlWsClient, topError, type Gql } from '../helpers/graphql.js';
import { eventually } from '../helpers/receiver.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Rich, localised content over GraphQL (issue 19): one query renders a property page (hero image,
 * gallery, descriptions, amenities, check-in policy, rooms with area, views, photos, beds and
 * occupancy, rate plans with amenities) in each language. The language is the operation's
 * @inContext(language:), else the request's Accept-Language, else ko-KR; a text without a
 * translation is served in ko-KR, field by field, never empty. Image links point at this service.
 *
 * The expected texts are read from the provider's content as the catalog holds it (every language
 * it has), so the test checks which of them each field serves.
 */

type Tag = 'ko-KR' | 'en-US' | 'ja-JP' | 'zh-CN';
const LANGUAGES: readonly [Tag, string][] = [
  ['ko-KR', 'KO_KR'],
  ['en-US', 'EN_US'],
  ['ja-JP', 'JA_JP'],
  ['zh-CN', 'ZH_CN'],
];
/** The advertised widths (and heights, 3:2) of the sizes, as partners read them in the docs. */
const SIZES = { THUMBNAIL: [200, 133], MEDIUM: [640, 427], LARGE: [1280, 853] } as const;
/** The service's origin as the in-process tests reach it (the Host of their requests). */
const ORIGIN = 'http://channel.test';

const PAGE_FIELDS = /* GraphQL */ `
  propertyId
  name
  heroImage(sizes: [MEDIUM]) { imageId hero category caption links { size width height href } }
  images(sizes: [THUMBNAIL, LARGE]) { imageId hero category caption links { size width height href } }
  descriptions { headline general location rooms dining amenities }
  amenities { code group name }
  checkin { beginTime endTime minAge instructions }
  checkout { time }
  policies { children pets extraBeds knowBeforeYouGo }
  phone
  chain { id name }
  brand { id name }
  spokenLanguages
  review { score count }
  roomTypes {
    roomtypeId
    name
    maxOccupancy
    areaSqm
    views
    descriptions { overview }
    bedGroups { id description }
    occupancy { maxTotal maxAdults maxChildren ageCategories { category minAge maxAge } }
    amenities { code group name }
    images { imageId hero category caption links { size width height href } }
    ratePlans { rateplanId name mealPlan amenities { code group name } }
  }
`;

const pageIn = (language: string) => `query Page($id: ID!) @inContext(language: ${language}) { property(id: $id) { ${PAGE_FIELDS} } }`;
const PAGE_BY_HEADER = `query Page($id: ID!) { property(id: $id) { ${PAGE_FIELDS} } }`;

type Text = Partial<Record<Tag, string>> & { 'ko-KR': string };
const textIn = (text: Text, tag: Tag) => text[tag] || text['ko-KR'];
const enumOf = (value: string) => value.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase();

/** The page as the service must answer it in `tag`, from the provider's content. */
function expectedPage(p: Property, tag: Tag): Gql {
  const amenity = (a: Property['amenities'][number]) => ({ code: a.code, group: enumOf(a.group), name: textIn(a.name, tag) });
  const image = (propertyId: number, i: Property['images'][number], sizes: readonly string[] | null) => ({
    imageId: i.id,
    hero: i.hero,
    category: enumOf(i.category),
    caption: textIn(i.caption, tag),
    links: i.links
      .filter((l) => sizes === null || sizes.includes(enumOf(l.size)))
      .map((l) => ({ size: enumOf(l.size), width: l.width, height: l.height, href: `${ORIGIN}/images/${propertyId}/${i.id}/${l.size}.png` })),
  });
  const hero = p.images.find((i) => i.hero) ?? p.images[0];
  return {
    propertyId: p.id,
    name: p.name,
    heroImage: hero ? image(p.id, hero, ['MEDIUM']) : null,
    images: p.images.map((i) => image(p.id, i, ['THUMBNAIL', 'LARGE'])),
    descriptions: Object.fromEntries(Object.entries(p.descriptions).map(([k, v]) => [k, textIn(v, tag)])),
    amenities: p.amenities.map(amenity),
    checkin: { beginTime: p.checkin.beginTime, endTime: p.checkin.endTime, minAge: p.checkin.minAge, instructions: textIn(p.checkin.instructions, tag) },
    checkout: { time: p.checkout.time },
    policies: Object.fromEntries(Object.entries(p.policies).map(([k, v]) => [k, textIn(v, tag)])),
    phone: p.phone,
    chain: p.chain,
    brand: p.brand,
    spokenLanguages: p.spokenLanguages,
    review: p.review,
    roomTypes: p.roomTypes.map((r) => ({
      roomtypeId: r.id,
      name: textIn(r.name, tag),
      maxOccupancy: r.maxOccupancy,
      areaSqm: r.areaSqm,
      views: r.views.map(enumOf),
      descriptions: { overview: textIn(r.descriptions.overview, tag) },
      bedGroups: r.bedGroups.map((b) => ({ id: b.id, description: textIn(b.description, tag) })),
      occupancy: {
        ...r.occupancy,
        ageCategories: r.occupancy.ageCategories.map((a) => ({ category: enumOf(a.category), minAge: a.minAge, maxAge: a.maxAge })),
      },
      amenities: r.amenities.map(amenity),
      images: r.images.map((i) => image(p.id, i, null)),
      ratePlans: r.ratePlans.map((rp) => ({ rateplanId: rp.id, name: textIn(rp.name, tag), mealPlan: enumOf(rp.mealPlan), amenities: rp.amenities.map(amenity) })),
    })),
  };
}

/** Every string in an answer, with its path. */
function strings(value: unknown, path = ''): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${path}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => strings(v, `${path}.${k}`));
  return [];
}

let t: TestService;
let who: IssuedCredentials;
/** The provider's content of the first properties of the catalog, every language. */
let catalog: Property[];

beforeAll(async () => {
  t = await startTestService({ EVENTS_POLL_INTERVAL_MS: '60000' });
  who = await t.channel({ name: 'Content' });
  catalog = (await t.service.deps.catalog.getMany(Array.from({ length: 30 }, (_, i) => i + 1))).filter((p): p is Property => p !== null);
  expect(catalog.length).toBeGreaterThan(10);
}, 120_000);

afterAll(async () => t?.close());

/** A property whose content has `missing` untranslated somewhere among its texts (the fallback shows on it). */
function withUntranslated(missing: Tag): Property {
  const found = catalog.find((p) =>
    [...Object.values(p.descriptions), ...Object.values(p.policies)].some((text: Text) => !text[missing]),
  );
  expect(found, `a property with a text not in ${missing}`).toBeDefined();
  return found!;
}

describe('a property page in one query', () => {
  it.each(LANGUAGES)('renders in %s with @inContext: every text in it (ko-KR where untranslated), links on this service', async (tag, value) => {
    const property = catalog[0]!;
    const page = dataOf(await gql(t, who, pageIn(value), { id: String(property.id) })).property;
    expect(page).toEqual(expectedPage(property, tag));

    // What a front end renders: a hero, a gallery, texts, amenities, check-in, rooms with photos.
    expect(page.heroImage.hero).toBe(true);
    expect(page.images[0].imageId).toBe(page.heroImage.imageId);
    expect(page.images.length).toBeGreaterThan(1);
    expect(page.descriptions.headline).not.toBe('');
    expect(page.amenities.length).toBeGreaterThan(0);
    expect(page.checkin.beginTime).toMatch(/^\d{2}:\d{2}$/);
    expect(page.roomTypes.length).toBeGreaterThan(0);
    for (const room of page.roomTypes) {
      expect(room.areaSqm).toBeGreaterThan(0);
      expect(room.images.length).toBeGreaterThan(0);
      expect(room.bedGroups.length).toBeGreaterThan(0);
      expect(room.occupancy.maxTotal).toBe(room.maxOccupancy);
      expect(room.ratePlans.length).toBeGreaterThan(0);
    }
  });

  it('answers each language in its own words (names and descriptions differ from ko-KR)', async () => {
    const property = catalog[0]!;
    const pages = await Promise.all(
      LANGUAGES.map(async ([, value]) => dataOf(await gql(t, who, pageIn(value), { id: String(property.id) })).property),
    );
    const headlines = pages.map((p) => p.descriptions.headline);
    expect(new Set(headlines).size).toBe(4);
    const rooms = pages.map((p) => p.roomTypes[0].name);
    expect(new Set(rooms).size).toBe(4);
    // The property's own name is not translated.
    expect(new Set(pages.map((p) => p.name)).size).toBe(1);
  });

  it('gives image links on the service origin, at the advertised widths, for the requested sizes only', async () => {
    const property = catalog[0]!;
    const query = `query($id: ID!) {
      property(id: $id) {
        all: images { imageId links { size width height href } }
        large: images(sizes: [LARGE]) { links { size width height href } }
        overridden: images(sizes: [LARGE]) { links(sizes: [THUMBNAIL, MEDIUM]) { size } }
        heroImage { links(sizes: [LARGE, THUMBNAIL, LARGE]) { size width } }
        roomTypes { images(sizes: [MEDIUM]) { imageId links { size width height href } } }
      }
    }`;
    const page = dataOf(await gql(t, who, query, { id: String(property.id) })).property;
    for (const image of page.all) {
      expect(image.links.map((l: Gql) => l.size)).toEqual(['THUMBNAIL', 'MEDIUM', 'LARGE']);
      for (const link of image.links) {
        expect([link.width, link.height]).toEqual(SIZES[link.size as keyof typeof SIZES]);
        expect(link.href).toBe(`${ORIGIN}/images/${property.id}/${image.imageId}/${link.size.toLowerCase()}.png`);
        // Absolute, on this service: never the provider's address.
        expect(new URL(link.href).origin).toBe(ORIGIN);
      }
    }
    expect(page.large.every((i: Gql) => i.links.length === 1 && i.links[0].size === 'LARGE' && i.links[0].width === 1280)).toBe(true);
    expect(page.overridden.every((i: Gql) => i.links.map((l: Gql) => l.size).join() === 'THUMBNAIL,MEDIUM')).toBe(true);
    // Each size once, smallest first, whatever the order asked.
    expect(page.heroImage.links).toEqual([
      { size: 'THUMBNAIL', width: 200 },
      { size: 'LARGE', width: 1280 },
    ]);
    const roomImages = page.roomTypes.flatMap((r: Gql) => r.images);
    expect(roomImages.length).toBeGreaterThan(0);
    for (const image of roomImages) {
      expect(image.links).toEqual([
        { size: 'MEDIUM', width: 640, height: 427, href: `${ORIGIN}/images/${property.id}/${image.imageId}/medium.png` },
      ]);
    }
  });

  it('a PUBLIC_BASE_URL is the origin of the links', async () => {
    const other = await startTestService({ PUBLIC_BASE_URL: 'https://api.partner-channel.example' });
    try {
      const key = await other.channel();
      const page = dataOf(await gql(other, key, '{ property(id: "1") { heroImage { imageId links { size href } } } }')).property;
      expect(page.heroImage.links.map((l: Gql) => l.href)).toEqual(
        ['thumbnail', 'medium', 'large'].map((size) => `https://api.partner-channel.example/images/1/${page.heroImage.imageId}/${size}.png`),
      );
    } finally {
      await other.close();
    }
  });
});

describe('the language of an operation', () => {
  it('without @inContext is the Accept-Language header (quality values honoured)', async () => {
    const property = catalog[0]!;
    for (const [header, tag] of [
      ['ja-JP', 'ja-JP'],
      ['fr-FR;q=1, zh-CN;q=0.8, en-US;q=0.5', 'zh-CN'],
      ['en', 'en-US'],
    ] as const) {
      const page = dataOf(await gql(t, who, PAGE_BY_HEADER, { id: String(property.id) }, { 'accept-language': header })).property;
      expect(page, header).toEqual(expectedPage(property, tag));
    }
  });

  it('is said in Content-Language: the directive\'s, else the negotiated one', async () => {
    const languageOf = async (query: string, headers: Record<string, string>) =>
      (await graphqlResponse(t, query, undefined, { headers: { 'x-api-key': who.api_key, ...headers } })).headers.get('content-language');
    expect(await languageOf('{ property(id: "1") { name } }', {})).toBe('ko-KR');
    expect(await languageOf('{ property(id: "1") { name } }', { 'accept-language': 'ja, en;q=0.1' })).toBe('ja-JP');
    expect(await languageOf('{ property(id: "1") { name } }', { 'accept-language': 'de' })).toBe('ko-KR');
    expect(await languageOf('query @inContext(language: ZH_CN) { property(id: "1") { name } }', { 'accept-language': 'ja' })).toBe('zh-CN');
    const answer = await graphqlResponse(t, '{ property(id: "1") { name } }', undefined, { headers: { 'x-api-key': who.api_key } });
    expect(answer.headers.get('vary')).toMatch(/accept-language/i);
  });

  it('is ko-KR without a header, and for an unknown or unsupported one', async () => {
    const property = catalog[0]!;
    const expected = expectedPage(property, 'ko-KR');
    for (const headers of [{} as Record<string, string>, { 'accept-language': 'fr-FR' }, { 'accept-language': 'xx' }, { 'accept-language': ';;;' }]) {
      const page = dataOf(await gql(t, who, PAGE_BY_HEADER, { id: String(property.id) }, headers)).property;
      expect(page, JSON.stringify(headers)).toEqual(expected);
    }
  });

  it('@inContext wins over the header, and takes a variable', async () => {
    const property = catalog[0]!;
    const viaDirective = dataOf(await gql(t, who, pageIn('EN_US'), { id: String(property.id) }, { 'accept-language': 'ja-JP' })).property;
    expect(viaDirective).toEqual(expectedPage(property, 'en-US'));
    const query = `query($id: ID!, $language: Language!) @inContext(language: $language) { property(id: $id) { descriptions { headline } roomTypes { name } } }`;
    // One document, run again in each language (from its second run it runs compiled by graphql-jit).
    for (const [tag, value] of [...LANGUAGES, ...LANGUAGES]) {
      const viaVariable = dataOf(await gql(t, who, query, { id: String(property.id), language: value }, { 'accept-language': 'en-US' })).property;
      expect(viaVariable.descriptions.headline, tag).toBe(textIn(property.descriptions.headline, tag));
      expect(viaVariable.roomTypes[0].name, tag).toBe(textIn(property.roomTypes[0]!.name, tag));
    }
  });

  it('applies to the search answers too: room and rate names of an availability', async () => {
    const query = (language: string) => `query($input: PropertyAvailabilityInput!) @inContext(language: ${language}) {
      propertyAvailability(input: $input) { roomTypes { roomtypeId name rates { rateplanId name } } }
    }`;
    const from = Date.now() + 40 * 86_400_000;
    const stay = { checkin: new Date(from).toISOString().slice(0, 10), checkout: new Date(from + 2 * 86_400_000).toISOString().slice(0, 10), adults: 2 };
    let checked = 0;
    for (const property of catalog.slice(0, 10)) {
      for (const [tag, value] of [LANGUAGES[1]!, LANGUAGES[3]!]) {
        const answer = dataOf(await gql(t, who, query(value), { input: { propertyId: property.id, ...stay } })).propertyAvailability;
        for (const room of answer.roomTypes) {
          const model = property.roomTypes.find((r) => r.id === room.roomtypeId)!;
          expect(room.name).toBe(textIn(model.name, tag));
          for (const rate of room.rates) {
            expect(rate.name).toBe(textIn(model.ratePlans.find((p) => p.id === rate.rateplanId)!.name, tag));
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('falls back to ko-KR field by field: no empty string anywhere in a zh-CN (or ja-JP) answer', async () => {
    for (const tag of ['zh-CN', 'ja-JP'] as const) {
      const property = withUntranslated(tag);
      const value = LANGUAGES.find(([l]) => l === tag)![1];
      const page = dataOf(await gql(t, who, pageIn(value), { id: String(property.id) })).property;
      expect(page).toEqual(expectedPage(property, tag));
      for (const [path, text] of strings(page)) expect(text, path).not.toBe('');
      // The untranslated text is the ko-KR one, while the ones beside it are in the language asked.
      const texts = { ...property.descriptions, ...property.policies } as Record<string, Text>;
      const untranslated = Object.keys(texts).filter((k) => !texts[k]![tag]);
      const translated = Object.keys(texts).filter((k) => texts[k]![tag]);
      expect(untranslated.length).toBeGreaterThan(0);
      expect(translated.length).toBeGreaterThan(0);
      const served = { ...page.descriptions, ...page.policies };
      for (const k of untranslated) expect(served[k], k).toBe(texts[k]!['ko-KR']);
      for (const k of translated) expect(served[k], k).toBe(texts[k]![tag]);
    }
    // Across many properties and every language, never an empty string.
    const list = `query @inContext(language: ZH_CN) { properties(first: 30) { edges { node { ${PAGE_FIELDS} } } } }`;
    const nodes = edgesNodes(dataOf(await gql(t, who, list)).properties);
    expect(nodes.length).toBe(30);
    for (const [path, text] of strings(nodes)) expect(text, path).not.toBe('');
  });

  it('a bad @inContext is a validation error (400), and so is one on a field or twice', async () => {
    for (const query of [
      'query @inContext(language: FR_FR) { property(id: "1") { name } }',
      'query @inContext(language: "en-US") { property(id: "1") { name } }',
      'query @inContext { property(id: "1") { name } }',
      'query { property(id: "1") @inContext(language: EN_US) { name } }',
      'query @inContext(language: EN_US) @inContext(language: JA_JP) { property(id: "1") { name } }',
    ]) {
      const res = await graphqlResponse(t, query, undefined, { headers: { 'x-api-key': who.api_key } });
      expect(res.status, query).toBe(400);
      const body = (await res.json()) as { data?: unknown; errors: { message: string; extensions?: { code?: string } }[] };
      expect(body.data, query).toBeUndefined();
      expect(body.errors[0]!.extensions?.code, query).toBe('GRAPHQL_VALIDATION_FAILED');
    }
    // A variable of another value is refused while variables are read.
    const res = await gql(t, who, 'query($l: Language!) @inContext(language: $l) { property(id: "1") { name } }', { l: 'fr-FR' });
    expect(res.status).toBe(400);
    expect(topError(res).extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('cost and batching', () => {
  it('content lookups of a page of properties stay one provider call, and content lists cost no points of their own', async () => {
    const query = `query @inContext(language: EN_US) {
      properties(first: 20) { edges { node { heroImage(sizes: [THUMBNAIL]) { links { href } } amenities { code name } images { caption links { href } }
        roomTypes { name views occupancy { ageCategories { minAge } } images { links { href } } amenities { name } ratePlans { name amenities { name } } } } } }
    }`;
    const bare = `query { properties(first: 20) { edges { node { name roomTypes { name ratePlans { name } } } } } }`;
    const costOf = async (document: string) => {
      const res = await graphqlResponse(t, document, undefined, { headers: { 'x-api-key': who.api_key } });
      expect(res.status).toBe(200);
      return (await res.json()) as { data: Gql; extensions: { rateLimit: { cost: number } } };
    };
    await costOf(query);
    t.service.deps.catalog.clear();
    const counter = countCalls(t);
    const body = await costOf(query);
    const counts = counter.stop();
    expect(edgesNodes(body.data.properties)).toHaveLength(20);
    // The page of the catalog comes with its content: no lookup per property.
    expect(counts.provider.getProperty).toBe(0);
    expect(counts.provider.getProperties! + counts.provider.listProperties!).toBeLessThanOrEqual(1);
    // 20 properties × 10 room types × 10 rate plans (2,220 list items): 23 points; the content lists add none.
    expect(body.extensions.rateLimit.cost).toBe(23);
    expect((await costOf(bare)).extensions.rateLimit.cost).toBe(23);
  });

  it('the property pages of many bookings: one provider call for all of them', async () => {
    const flow = v1(t, who);
    for (const from of [10, 20]) {
      const offer = await flow.offer({ from });
      expect((await flow.book({ book_token: offer.bookToken, booker_name: 'Content Guest', guests_adult: 2 })).status).toBe(201);
    }
    const query = `query @inContext(language: JA_JP) { bookings(first: 10) { edges { node { property { ${PAGE_FIELDS} } } } } }`;
    dataOf(await gql(t, who, query));
    t.service.deps.catalog.clear();
    const counter = countCalls(t);
    const data = dataOf(await gql(t, who, query));
    const counts = counter.stop();
    expect(edgesNodes(data.bookings).length).toBeGreaterThanOrEqual(2);
    expect(counts.provider.getProperties).toBe(1);
    expect(counts.provider.getProperty).toBe(0);
  });
});

describe('over graphql-ws', () => {
  let port: number;
  const clients: Client[] = [];
  beforeAll(async () => {
    port = await t.service.listen(0);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
  });

  const run = (client: Client, query: string) =>
    new Promise<Gql>((resolve, reject) => {
      let result: Gql | undefined;
      client.subscribe({ query }, { next: (r) => (result = r as Gql), error: reject, complete: () => resolve(result!) });
    });

  it("the language is connection_init's Accept-Language (flat or under headers), unless @inContext says otherwise", async () => {
    const property = catalog[0]!;
    const headline = (tag: Tag) => textIn(property.descriptions.headline, tag);
    const query = `{ property(id: "${property.id}") { descriptions { headline } } }`;
    const flat = graphqlWsClient(port, { connectionParams: { 'X-Api-Key': who.api_key, 'Accept-Language': 'ja-JP' } }, clients);
    const nested = graphqlWsClient(port, { connectionParams: { headers: { 'x-api-key': who.api_key, 'accept-language': 'zh-CN,en;q=0.5' } } }, clients);
    const none = graphqlWsClient(port, who, clients);
    expect((await run(flat, query)).data.property.descriptions.headline).toBe(headline('ja-JP'));
    expect((await run(nested, query)).data.property.descriptions.headline).toBe(headline('zh-CN'));
    expect((await run(none, query)).data.property.descriptions.headline).toBe(headline('ko-KR'));
    expect((await run(flat, `query @inContext(language: EN_US) ${query}`)).data.property.descriptions.headline).toBe(headline('en-US'));
  });

  it('subscribers of one document on connections of different languages each receive their own language', async () => {
    const sub = await t.channel({ name: 'Content Subscriber' });
    const bus: BookingEventMessage[] = [];
    const unlisten = t.service.deps.events.listen(sub.user_id, (event) => bus.push(event));
    const flow = v1(t, sub);
    const offer = await flow.offer({ from: 30 });
    expect((await flow.book({ book_token: offer.bookToken, booker_name: 'Language Guest', guests_adult: 2 })).status).toBe(201);
    t.service.deps.dispatcher.wake();
    await eventually(() => bus.length >= 1, 10_000, 'a booking event');
    unlisten();
    const event = bus[0]!;
    const property = (await t.service.deps.catalog.getMany([offer.propertyId]))[0]!;

    const document = 'subscription { bookingEvents { id booking { property { descriptions { headline } roomTypes { name } } } } }';
    const received: Record<Tag, string[]> = { 'ko-KR': [], 'en-US': [], 'ja-JP': [], 'zh-CN': [] };
    const stops: (() => void)[] = [];
    // Two subscribers per language, so each language is a group of its own of two.
    for (const [tag] of LANGUAGES) {
      for (let i = 0; i < 2; i++) {
        const client = graphqlWsClient(port, { connectionParams: { 'X-Api-Key': sub.api_key, 'Accept-Language': tag } }, clients);
        stops.push(
          client.subscribe(
            { query: document },
            {
              next: (r) => received[tag].push((r.data as Gql).bookingEvents.booking.property.descriptions.headline),
              error: () => {},
              complete: () => {},
            },
          ),
        );
      }
    }
    await eventually(() => t.service.deps.events.subscribers(sub.user_id) === 8, 10_000, '8 subscriptions');
    t.service.deps.events.publish(event);
    await eventually(() => Object.values(received).every((r) => r.length === 2), 10_000, 'the event at every subscriber');
    for (const [tag] of LANGUAGES) expect(received[tag]).toEqual(Array(2).fill(textIn(property.descriptions.headline, tag)));
    for (const stop of stops) stop();
  });
});
