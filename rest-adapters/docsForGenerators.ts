import { BOOKING_EVENT_TYPES } from '../src/services/bookings/index.js';
import { ERROR_CODES, type ErrorCode } from '../src/services/kernel/index.js';
import { SCENARIOS } from '../src/upstream/protocol.js';
import { exampleOf } from './examples.js';

/**
 * What makes the OpenAPI documents good input for code generators (issue 20), applied to the
 * document as served (rest-adapters/docs.ts completeDocument), after the service-wide responses
 * are added:
 * - the `code` of each error response as an enum of the codes that route answers with that status,
 *   read from the response's description, which names them (so the two cannot disagree; a
 *   description that names none is a fault of the route's definition and stops the build);
 * - the sandbox's `X-Test-Scenario` header on the routes that reach the provider (those that
 *   can answer 502), where the sandbox honours it;
 * - an example on every request body and every JSON success answer that has none;
 * - for v1, the `webhooks` section: one entry per event type with its payload and the Standard
 *   Webhooks headers.
 * test/contract/openapi-generators.test.ts checks the result; test/contract/openapi.test.ts checks
 * that real answers fit it.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const ERROR_ENVELOPE_REF = '#/components/schemas/ErrorEnvelope';
const CODE_SET: ReadonlySet<string> = new Set(ERROR_CODES);
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The error codes a description names, in order, each once. */
export function codesNamedIn(description: string): ErrorCode[] {
  const named = description.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[A-Z]{4,}\b/g) ?? [];
  return [...new Set(named.filter((word) => CODE_SET.has(word)))] as ErrorCode[];
}

/** `schema` (the error envelope) with `error.code` narrowed to `codes`. */
function envelopeWithCodes(codes: readonly string[]): Json {
  return {
    allOf: [
      { $ref: ERROR_ENVELOPE_REF },
      {
        type: 'object',
        properties: { error: { type: 'object', properties: { code: { type: 'string', enum: [...codes] } } } },
      },
    ],
  };
}

export const SCENARIO_PARAMETER = 'X-Test-Scenario';

const scenarioParameter = {
  name: 'X-Test-Scenario',
  in: 'header',
  required: false,
  description:
    'Sandbox only (production ignores it): forces an outcome of the provider for this request. price_changed and sold_out ' +
    'at the price check (and sold_out when booking); upstream_error: 502; upstream_timeout: 502 after the provider deadline; ' +
    'pending: the booking is created pending. Other values are ignored.',
  schema: { type: 'string', enum: [...SCENARIOS] },
};

const UPSTREAM_STATUS = '502';

/** Applies the error-code enums, the scenario header and the examples to every operation of `doc` (in place). */
export function fitForGenerators(doc: Json, version: 'v1' | 'v2'): void {
  doc.components ??= {};
  doc.components.parameters = { ...doc.components.parameters, XTestScenario: scenarioParameter };
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const where = `${version} ${method.toUpperCase()} ${path}`;
      for (const [status, response] of Object.entries<Json>(op.responses ?? {})) {
        const media = response.content?.['application/json'];
        if (Number(status) >= 400 && media?.schema?.$ref === ERROR_ENVELOPE_REF) {
          const codes = codesNamedIn(response.description ?? '');
          if (!codes.length) throw new Error(`${where} ${status}: the description names no error code: ${response.description}`);
          media.schema = envelopeWithCodes(codes);
        }
      }
      const params: Json[] = (op.parameters ??= []);
      if (op.responses?.[UPSTREAM_STATUS] && !params.some((p) => p.$ref === '#/components/parameters/XTestScenario' || p.name?.toLowerCase() === 'x-test-scenario')) {
        params.push({ $ref: '#/components/parameters/XTestScenario' });
      }
      addExamples(doc, op);
    }
  }
  // Webhooks are subscribed to under v1 (POST /channel/v1/webhooks); v2 has none to describe.
  if (version === 'v1') {
    doc.webhooks = webhooks();
    addWebhookExamples(doc);
  } else if (!Object.keys(doc.webhooks ?? {}).length) {
    delete doc.webhooks;
  }
}

/** An example on the request body and each JSON 2xx answer that has none (realistic values: examples.ts). */
function addExamples(doc: Json, op: Json): void {
  const media: Json[] = [];
  for (const [type, m] of Object.entries<Json>(op.requestBody?.content ?? {})) if (type.includes('json') || type.includes('form')) media.push(m);
  for (const [status, response] of Object.entries<Json>(op.responses ?? {})) {
    if (!status.startsWith('2')) continue;
    const m = response.content?.['application/json'];
    if (m) media.push(m);
  }
  for (const m of media) {
    if (m.example !== undefined || m.examples !== undefined || !m.schema) continue;
    m.example = exampleOf(doc, m.schema);
  }
}

// ---- webhooks ----

export const PING_EVENT = 'webhook.ping';

/** Every event type a webhook can receive: the booking events and the ping. */
export const WEBHOOK_EVENT_TYPES = [...BOOKING_EVENT_TYPES, PING_EVENT] as const;

const EVENT_DESCRIPTIONS: Record<(typeof WEBHOOK_EVENT_TYPES)[number], string> = {
  'reservation.created': 'A booking was created (confirmed at once, or pending when the provider confirms later).',
  'reservation.confirmed': 'A booking is confirmed: at once on creation, or when a pending booking is confirmed.',
  'reservation.modified': 'Booker or guest details, special requests or the dates of a booking changed.',
  'reservation.cancelled': 'A booking was cancelled (by the partner, or a pending booking past its payment deadline); data carries cancellationFee and refundAmount.',
  'reservation.failed': 'A pending booking was refused by the provider.',
  'reservation.checked_in': 'The property reports the guest checked in.',
  'reservation.checked_out': 'The property reports the guest checked out.',
  'reservation.no_show': 'The property reports the guest did not arrive.',
  'webhook.ping': 'Sent by POST /webhooks/{id}/ping to test an endpoint; data names the webhook.',
};

const camel = (type: string) =>
  type
    .split(/[._]/)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');

/** The operationId of the webhook of an event type: `onReservationCreated`, `onWebhookPing`. */
export const webhookOperationId = (type: string) => `on${camel(type)}`;

const WEBHOOK_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The delivery id (uuid): the same on every attempt and replay of this delivery; deduplicate on it',
    schema: { type: 'string', format: 'uuid' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix time in seconds when this attempt was sent; refuse ones far from your clock (e.g. more than 5 minutes)',
    schema: { type: 'string', pattern: '^\\d+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks signature: `v1,` + base64 HMAC-SHA256, keyed with the base64 part of the endpoint secret (whsec_...), ' +
      'of `{webhook-id}.{webhook-timestamp}.{raw body}`. Several space-separated signatures may be sent; accept if one matches.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
  },
  {
    name: 'traceparent',
    in: 'header',
    required: false,
    description:
      'W3C Trace Context of this attempt, sent when the service traces (OpenTelemetry): it belongs to the trace of the request ' +
      'that caused the event, so your processing can join it',
    schema: { type: 'string', pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' },
  },
];

function webhooks(): Json {
  const out: Json = {};
  for (const type of WEBHOOK_EVENT_TYPES) {
    const data = type === PING_EVENT
      ? { type: 'object', required: ['webhook_id'], properties: { webhook_id: { type: 'string', format: 'uuid', description: 'The webhook pinged' } } }
      : { $ref: '#/components/schemas/Booking', description: 'The booking record as it is after the event (as GET /bookings/{id} gives it)' };
    const schema = {
      type: 'object',
      required: ['type', 'timestamp', 'data'],
      properties: {
        type: { type: 'string', const: type },
        timestamp: { type: 'string', format: 'date-time', description: 'When the event happened' },
        data,
      },
    };
    out[type] = {
      post: {
        operationId: webhookOperationId(type),
        tags: ['Webhooks'],
        summary: `${type}`,
        description:
          `${EVENT_DESCRIPTIONS[type]} POSTed as JSON to each enabled endpoint subscribed to ${type}` +
          (type === PING_EVENT ? ' (a ping goes to its endpoint whatever it subscribes to). ' : '. ') +
          'Verify webhook-signature over the raw body before parsing it. Answer 2xx within the timeout to acknowledge; ' +
          'anything else (or no answer) is retried with exponential back-off for at least 24 hours (at least once: deduplicate on webhook-id).',
        parameters: WEBHOOK_HEADERS,
        requestBody: { required: true, content: { 'application/json': { schema } } },
        responses: {
          '2XX': { description: 'Acknowledged; the body is ignored' },
          default: { description: 'Not acknowledged: the delivery is retried' },
        },
      },
    };
  }
  return out;
}

/** The booking status after each event, for the examples. */
const STATUS_AFTER: Record<string, string> = {
  'reservation.cancelled': 'cancelled',
  'reservation.failed': 'failed',
  'reservation.checked_in': 'checked_in',
  'reservation.checked_out': 'checked_out',
  'reservation.no_show': 'no_show',
};

/** The examples of the webhook payloads: the booking as the event leaves it. */
function addWebhookExamples(doc: Json): void {
  for (const [type, item] of Object.entries<Json>(doc.webhooks ?? {})) {
    const media = item.post.requestBody.content['application/json'];
    const example = exampleOf(doc, media.schema) as { data: Record<string, unknown> };
    if (type !== PING_EVENT) {
      example.data.status = STATUS_AFTER[type] ?? 'confirmed';
      if (type === 'reservation.cancelled') Object.assign(example.data, { cancellationFee: '0', refundAmount: example.data.totalAmount });
    }
    media.example ??= example;
  }
}
