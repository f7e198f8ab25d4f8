import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOKING_EVENT_TYPES } from '../../src/services/bookings/index.js';
import { ERROR_CODES } from '../../src/services/kernel/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { SCENARIOS } from '../../src/upstream/protocol.js';
import { resolve } from '../helpers/openapi.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

/**
 * The OpenAPI documents as input for code generators (issue 20): a stable camelCase operationId on
 * every operation, unique across v1 and v2; counts, pages and amounts typed as integers or numbers
 * with their bounds (while a bad value is still 400 in the envelope); identifiers typed as the
 * specification gives them; each error response's code an enum; the sandbox's X-Test-Scenario
 * header declared where the sandbox honours it; an example that validates on every request body
 * and JSON success answer, and none on an optional parameter without a default (Swagger UI's
 * "Try it out" would send it); expires_in an integer; a webhooks section with every event type
 * the service emits. test/contract/openapi.test.ts checks real answers against the same documents.
 */

type Version = 'v1' | 'v2';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
const BASE: Record<Version, string> = { v1: '/channel/v1', v2: '/api/channel/v2' };
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

let t: TestService;
let owner: IssuedCredentials;
const docs = {} as Record<Version, Json>;

interface Op {
  version: Version;
  method: string;
  path: string;
  op: Json;
}

function operations(version?: Version): Op[] {
  const out: Op[] = [];
  for (const v of version ? [version] : (['v1', 'v2'] as const)) {
    for (const [path, item] of Object.entries<Json>(docs[v].paths)) {
      for (const method of METHODS) if (item[method]) out.push({ version: v, method: method.toUpperCase(), path, op: item[method] });
    }
  }
  return out;
}

const parametersOf = (version: Version, op: Json): Json[] => ((op.parameters ?? []) as Json[]).map((p) => resolve(docs[version], p));
const queryParam = (version: Version, method: string, path: string, name: string) =>
  parametersOf(version, docs[version].paths[path][method.toLowerCase()]).find((p) => p.name === name && p.in === 'query');

beforeAll(async () => {
  t = await startTestService();
  owner = await t.channel({ name: 'Generators', tier: 'starter' });
  for (const version of ['v1', 'v2'] as const) {
    const res = await t.request(`${BASE[version]}/openapi.json`);
    expect(res.status).toBe(200);
    docs[version] = await res.json();
  }
}, 120_000);

afterAll(async () => {
  await t?.close();
});

/** Every operationId, pinned: a generated client's method names must not change unnoticed. */
const OPERATION_IDS = {
  v1: {
    'POST /oauth/token': 'issueToken',
    'POST /oauth/revoke': 'revokeToken',
    'GET /channels/me': 'getChannel',
    'PUT /channels/me': 'updateChannel',
    'GET /apps/me': 'getApp',
    'PUT /apps/me/ip-allow-list': 'replaceIpAllowList',
    'GET /properties': 'listProperties',
    'GET /properties/{id}': 'getProperty',
    'GET /properties/{id}/roomtypes': 'listRoomTypes',
    'GET /properties/{id}/rateplans': 'listRatePlans',
    'GET /content/files/catalog': 'downloadCatalogFile',
    'GET /content/files/content': 'downloadContentFile',
    'GET /search/availability': 'searchAvailability',
    'GET /search/availability/{propertyId}': 'getPropertyAvailability',
    'GET /search/rates': 'getRates',
    'GET /search/price-check': 'checkPrice',
    'POST /search/rates/batch': 'getRatesBatch',
    'POST /bookings': 'createBooking',
    'GET /bookings': 'listBookings',
    'GET /bookings/{id}': 'getBooking',
    'PATCH /bookings/{id}': 'updateBooking',
    'GET /bookings/{id}/cancellation-fee': 'getBookingCancellationFee',
    'GET /bookings/{id}/cancellation-policy': 'getBookingCancellationPolicy',
    'PUT /bookings/{id}/cancel': 'cancelBooking',
    'GET /bookings/{id}/voucher': 'getBookingVoucher',
    'GET /tax-invoices': 'listTaxInvoices',
    'POST /reservations': 'createReservation',
    'GET /reservations': 'listReservations',
    'GET /reservations/{id}': 'getReservation',
    'PATCH /reservations/{id}': 'updateReservation',
    'POST /reservations/{id}/cancel': 'cancelReservation',
    'DELETE /reservations/{id}/rooms/{booking_id}': 'cancelReservationRoom',
    'GET /reservations/{id}/voucher': 'getReservationVoucher',
    'POST /reservations/{id}/send-voucher': 'sendReservationVoucher',
    'POST /reservations/{id}/modify-dates': 'modifyReservationDates',
    'GET /reservations/{id}/cancellation-fee': 'getReservationCancellationFee',
    'POST /webhooks': 'createWebhook',
    'GET /webhooks': 'listWebhooks',
    'GET /webhooks/{id}': 'getWebhook',
    'PATCH /webhooks/{id}': 'updateWebhook',
    'DELETE /webhooks/{id}': 'deleteWebhook',
    'POST /webhooks/{id}/ping': 'pingWebhook',
    'GET /webhooks/{id}/deliveries': 'listWebhookDeliveries',
    'GET /webhooks/{id}/deliveries/{delivery_id}': 'getWebhookDelivery',
    'POST /webhooks/{id}/deliveries/{delivery_id}/replay': 'replayWebhookDelivery',
  },
  v2: {
    'GET /properties': 'v2ListProperties',
    'GET /properties/{id}': 'v2GetProperty',
    'GET /properties/{id}/roomtypes': 'v2ListRoomTypes',
    'GET /properties/availability': 'v2SearchAvailability',
    'GET /properties/{propertyId}/rooms/{roomId}/rates/{rateId}': 'v2CheckPrice',
    'POST /bookings': 'v2CreateBooking',
    'GET /bookings/retrieve': 'v2RetrieveBooking',
    'PUT /bookings/cancel': 'v2CancelBooking',
  },
} as const;

describe('operationIds', () => {
  it('every operation (webhooks too) has a camelCase operationId, unique across v1 and v2, as pinned', () => {
    const all: string[] = [];
    for (const version of ['v1', 'v2'] as const) {
      const got = Object.fromEntries(operations(version).map(({ method, path, op }) => [`${method} ${path}`, op.operationId]));
      expect(got, version).toEqual(OPERATION_IDS[version]);
      all.push(...Object.values<string>(got));
      for (const item of Object.values<Json>(docs[version].webhooks ?? {})) for (const op of Object.values<Json>(item)) all.push(op.operationId);
    }
    for (const id of all) expect(id, id).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    expect(all.length).toBe(new Set(all).size);
    // v2's share no name with v1's: a client generated from both has no clash.
    for (const id of Object.values(OPERATION_IDS.v2)) expect(id).toMatch(/^v2[A-Z]/);
  });
});

describe('parameters', () => {
  it('page and per_page are integers with their bounds wherever they appear', () => {
    const seen: string[] = [];
    for (const { version, method, path, op } of operations()) {
      for (const p of parametersOf(version, op)) {
        if (p.in !== 'query' || !['page', 'per_page'].includes(p.name)) continue;
        seen.push(`${version} ${method} ${path} ${p.name}`);
        expect(p.schema.type, `${path} ${p.name}`).toBe('integer');
        expect(p.schema.minimum, `${path} ${p.name}`).toBe(1);
        if (p.name === 'per_page') expect(p.schema.maximum, path).toBe(100);
        expect(p.schema.pattern, path).toBeUndefined();
      }
    }
    expect(seen).toEqual(
      expect.arrayContaining([
        'v1 GET /bookings page',
        'v1 GET /bookings per_page',
        'v1 GET /reservations page',
        'v1 GET /reservations per_page',
        'v1 GET /webhooks/{id}/deliveries page',
        'v1 GET /webhooks/{id}/deliveries per_page',
        'v1 GET /search/availability page',
        'v1 GET /search/availability per_page',
        'v2 GET /properties per_page',
      ]),
    );
  });

  it('counts and amounts are integers or numbers with their bounds; identifiers keep the types of the specification', () => {
    for (const path of ['/search/availability', '/search/availability/{propertyId}']) {
      expect(queryParam('v1', 'GET', path, 'adults').schema).toMatchObject({ type: 'integer', minimum: 1 });
      expect(queryParam('v1', 'GET', path, 'children').schema).toMatchObject({ type: 'integer', minimum: 0 });
      expect(queryParam('v1', 'GET', path, 'rooms').schema).toMatchObject({ type: 'integer', minimum: 1 });
    }
    expect(queryParam('v1', 'GET', '/search/rates', 'adults').schema).toMatchObject({ type: 'integer', minimum: 1 });
    for (const name of ['price_min', 'price_max', 'star_rating_min']) {
      expect(queryParam('v1', 'GET', '/search/availability', name).schema).toMatchObject({ type: 'number', minimum: 0 });
    }
    expect(queryParam('v1', 'GET', '/search/availability', 'star_rating_min').schema.maximum).toBe(5);
    expect(queryParam('v1', 'GET', '/tax-invoices', 'month').schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 12 });
    // §4.4: property_id of the search is a string (one, several comma-separated, or repeated).
    expect(queryParam('v1', 'GET', '/search/rates', 'property_id').schema.type).toBe('string');
    expect(queryParam('v1', 'GET', '/search/availability', 'property_id').schema.items.type).toBe('string');
    // §4.3: v1 path ids are integers; §2.9, §9: v2 ids are strings.
    const pathParam = (version: Version, path: string, name: string) =>
      parametersOf(version, docs[version].paths[path].get).find((p) => p.in === 'path' && p.name === name);
    expect(pathParam('v1', '/properties/{id}', 'id').schema.type).toBe('integer');
    expect(pathParam('v1', '/search/availability/{propertyId}', 'propertyId').schema.type).toBe('integer');
    expect(pathParam('v1', '/bookings/{id}', 'id').schema.type).toBe('string');
    for (const path of ['/properties/{id}', '/properties/{id}/roomtypes']) expect(pathParam('v2', path, 'id').schema.type).toBe('string');
    for (const name of ['propertyId', 'roomId', 'rateId']) {
      expect(pathParam('v2', '/properties/{propertyId}/rooms/{roomId}/rates/{rateId}', name).schema.type).toBe('string');
    }
    expect(queryParam('v2', 'GET', '/properties/availability', 'property_id').schema.items.type).toBe('string');
  });

  it('a value outside the documented bounds, or not a number, is still 400 in the envelope', async () => {
    const cases: [string, string][] = [
      ['/channel/v1/bookings?page=0', 'VALIDATION_ERROR'],
      ['/channel/v1/bookings?page=-1', 'VALIDATION_ERROR'],
      ['/channel/v1/bookings?per_page=101', 'VALIDATION_ERROR'],
      ['/channel/v1/bookings?per_page=1.5', 'VALIDATION_ERROR'],
      ['/channel/v1/reservations?page=abc', 'VALIDATION_ERROR'],
      ['/channel/v1/search/availability?checkin=2026-12-24&checkout=2026-12-26&adults=0', 'VALIDATION_ERROR'],
      ['/channel/v1/search/availability?checkin=2026-12-24&checkout=2026-12-26&price_min=-5', 'VALIDATION_ERROR'],
      ['/api/channel/v2/properties?per_page=0', 'INVALID_REQUEST'],
      ['/api/channel/v2/properties?per_page=101', 'INVALID_REQUEST'],
    ];
    for (const [path, code] of cases) {
      const res = await t.request(path, { headers: apiKey(owner) });
      const body = await res.json();
      expect({ path, status: res.status, code: body.error?.code }).toEqual({ path, status: 400, code });
      expect(body.meta.request_id).toEqual(expect.any(String));
    }
    const ok = await t.request('/channel/v1/bookings?page=1&per_page=100', { headers: apiKey(owner) });
    expect(ok.status).toBe(200);
  });

  it('no optional parameter without a default carries an example ("Try it out" would send it)', () => {
    const offenders: string[] = [];
    for (const { version, method, path, op } of operations()) {
      for (const p of parametersOf(version, op)) {
        if (p.required || p.schema?.default !== undefined) continue;
        const has = (node: Json) => node && (node.example !== undefined || node.examples !== undefined);
        if (has(p) || has(p.schema) || has(p.schema?.items)) offenders.push(`${version} ${method} ${path} ${p.name}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('X-Test-Scenario is an optional header, sandbox only, with its values, on every route that reaches the provider', () => {
    const declared: string[] = [];
    for (const { version, method, path, op } of operations()) {
      const scenario = parametersOf(version, op).find((p) => p.name === 'X-Test-Scenario');
      if (op.responses['502']) expect(scenario, `${version} ${method} ${path}`).toBeDefined();
      if (!scenario) continue;
      declared.push(`${version} ${method} ${path}`);
      expect(scenario).toMatchObject({ in: 'header', required: false, schema: { type: 'string', enum: [...SCENARIOS] } });
      expect(scenario.description).toMatch(/^Sandbox only/);
    }
    // The routes §"Sandbox test scenarios" names: search, price check, booking (and cancelling).
    expect(declared).toEqual(
      expect.arrayContaining([
        'v1 GET /search/availability',
        'v1 GET /search/availability/{propertyId}',
        'v1 GET /search/price-check',
        'v1 POST /bookings',
        'v1 PUT /bookings/{id}/cancel',
        'v2 GET /properties/availability',
        'v2 GET /properties/{propertyId}/rooms/{roomId}/rates/{rateId}',
        'v2 POST /bookings',
        'v2 PUT /bookings/cancel',
      ]),
    );
  });
});

describe('answers', () => {
  it("every error response's code is an enum of known codes (the OAuth form: its error)", () => {
    const known = new Set<string>(ERROR_CODES);
    for (const { version, method, path, op } of operations()) {
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        if (Number(status) < 400) continue;
        const where = `${version} ${method} ${path} ${status}`;
        const schema = response.content['application/json'].schema;
        if (schema.allOf) {
          expect(schema.allOf[0], where).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
          const codes: string[] = schema.allOf[1].properties.error.properties.code.enum;
          expect(codes.length, where).toBeGreaterThan(0);
          for (const code of codes) expect(known.has(code), `${where}: ${code}`).toBe(true);
        } else {
          // The OAuth endpoints (RFC 6749 form; the 403 may also be the envelope's HTTPS_REQUIRED).
          expect(path, where).toMatch(/^\/oauth\//);
          const branches = (schema.anyOf ?? [schema]).map((s: Json) => resolve(docs.v1, s));
          for (const b of branches) {
            const code = b.properties.error.properties?.code ?? b.properties.error;
            expect(code.enum?.length, where).toBeGreaterThan(0);
          }
        }
      }
    }
    const cancel = docs.v1.paths['/bookings/{id}/cancel'].put.responses['409'].content['application/json'].schema;
    expect(cancel.allOf[1].properties.error.properties.code.enum).toEqual(expect.arrayContaining(['BOOKING_ALREADY_CANCELLED', 'BOOKING_NOT_CANCELLABLE']));
  });

  it('expires_in of the token answer is an integer, not an enum of one value', () => {
    const schema = resolve(docs.v1, docs.v1.paths['/oauth/token'].post.responses['200'].content['application/json'].schema);
    expect(schema.properties.expires_in.type).toBe('integer');
    expect(schema.properties.expires_in.enum).toBeUndefined();
    expect(schema.properties.expires_in.const).toBeUndefined();
  });

  it('every request body and JSON success answer (and webhook payload) has an example that validates against its schema', async () => {
    const checked: string[] = [];
    const failures: string[] = [];
    for (const version of ['v1', 'v2'] as const) {
      const doc = structuredClone(docs[version]);
      const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
      (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
      const id = `https://channel.test${BASE[version]}/openapi.json`;
      ajv.addSchema(doc, id);
      const check = (where: string, pointer: string, media: Json) => {
        checked.push(where);
        if (media.example === undefined && media.examples === undefined) return void failures.push(`${where}: no example`);
        const validate = ajv.getSchema(`${id}#${pointer}/schema`)!;
        const examples = media.examples ? Object.values<Json>(media.examples).map((e) => e.value) : [media.example];
        for (const example of examples) if (!validate(example)) failures.push(`${where}: ${ajv.errorsText(validate.errors)}`);
      };
      const esc = (s: string) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'));
      for (const { method, path, op } of operations(version)) {
        const at = `/paths/${esc(path)}/${method.toLowerCase()}`;
        for (const [type, media] of Object.entries<Json>(op.requestBody?.content ?? {})) {
          check(`${version} ${method} ${path} body ${type}`, `${at}/requestBody/content/${esc(type)}`, media);
        }
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          const media = resolve(doc, response).content?.['application/json'];
          if (status.startsWith('2') && media) check(`${version} ${method} ${path} ${status}`, `${at}/responses/${status}/content/application~1json`, media);
        }
      }
      for (const [type, item] of Object.entries<Json>(doc.webhooks ?? {})) {
        check(`${version} webhook ${type}`, `/webhooks/${esc(type)}/post/requestBody/content/application~1json`, item.post.requestBody.content['application/json']);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toEqual(expect.arrayContaining(['v1 POST /bookings body application/json', 'v1 GET /bookings 200', 'v2 POST /bookings 201']));
  });

  it('the example of a booking body is realistic (no invented guests_child)', () => {
    const example = docs.v1.paths['/bookings'].post.requestBody.content['application/json'].example;
    expect(example).toMatchObject({ booker_name: expect.any(String), guests_adult: 2, guests_child: 0 });
  });
});

describe('webhooks', () => {
  it('v1 lists every event type the service emits, each with its payload and the Standard Webhooks headers; both documents still validate', async () => {
    const webhooks = docs.v1.webhooks;
    expect(Object.keys(webhooks).sort()).toEqual([...BOOKING_EVENT_TYPES, 'webhook.ping'].sort());
    for (const [type, item] of Object.entries<Json>(webhooks)) {
      const op = item.post;
      expect(op.parameters.filter((p: Json) => p.in === 'header' && p.required).map((p: Json) => p.name)).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
      const schema = op.requestBody.content['application/json'].schema;
      expect(schema.properties.type.const).toBe(type);
      expect(schema.required).toEqual(['type', 'timestamp', 'data']);
      if (type !== 'webhook.ping') expect(schema.properties.data.$ref).toBe('#/components/schemas/Booking');
    }
    // Webhooks are subscribed to under v1 only.
    expect(docs.v2.webhooks).toBeUndefined();
    for (const version of ['v1', 'v2'] as const) {
      const result = await new Validator().validate(docs[version]);
      expect(result.errors ?? [], version).toEqual([]);
    }
  });
});
