import { z } from 'zod';
import { BATCH_RATES_MAX_ITEMS, batchRates, parseOccupancies, readBatchItems, searchRules, type BatchRatesItemInput, type BatchRatesResult } from '../services/search/index.js';
import type { ErrorCode, FieldIssue } from '../services/kernel/index.js';
import { BATCH_EXTENSION, type BatchExtension } from '../graphql/batchField.js';
import { operationScopes } from '../services/access/index.js';
import { ErrorCodeEnum } from './bookingErrors.js';
import { builder } from './builder.js';
import { serviceEnum } from './enums.js';
import { graphqlNames, STAY_FIELDS } from './errors.js';
import { Currency, PropertyOffersRef, stayInputFields, stayInputRules } from './search.js';

/**
 * Batch rates: the GraphQL twin of POST /channel/v1/search/rates/batch, over the same service.
 * One result per item, in order: `status: ok` with `data` (as `propertyAvailability` gives it),
 * or `status: error` with the item's own `error { code message fields }`. Only a wrong request as
 * a whole (no items, more than 50, a value GraphQL itself refuses) is a top-level error. Costs 1
 * rate-limit point per item, as REST (docs: "Rate limits").
 */

const r = searchRules;

/** The rules of one item (REST's BatchRatesItem in camelCase); GraphQL gives null for what is absent. */
const itemSchema: z.ZodType<BatchRatesItemInput> = z
  .object({ propertyId: r.propertyId, ...stayInputRules })
  .transform((i) => ({
    propertyId: i.propertyId,
    checkin: i.checkin,
    checkout: i.checkout,
    adults: i.adults ?? undefined,
    children: i.children ?? undefined,
    childrenAges: i.childrenAges ?? undefined,
    rooms: i.rooms ?? undefined,
    occupancy: i.occupancy ? parseOccupancies(i.occupancy) : undefined,
    roomtypeId: i.roomtypeId ?? undefined,
    rateplanId: i.rateplanId ?? undefined,
  }));

const BatchRatesItemInputRef = builder.inputType('BatchRatesItemInput', {
  description: 'One property and stay, as propertyAvailability takes them',
  fields: (t) => ({ propertyId: t.int({ required: true }), ...stayInputFields(t) }),
});

const BatchRatesInputRef = builder.inputType('BatchRatesInput', {
  fields: (t) => ({
    currency: t.field({ type: Currency, description: 'For every item; default KRW' }),
    items: t.field({ type: [BatchRatesItemInputRef], required: true, description: `1 to ${BATCH_RATES_MAX_ITEMS} items` }),
  }),
});

const BatchItemStatus = serviceEnum('BatchRatesItemStatus', ['ok', 'error'] as const);

const FieldIssueRef = builder.objectRef<FieldIssue>('BatchRatesFieldIssue').implement({
  fields: (t) => ({ field: t.exposeString('field'), reason: t.exposeString('reason') }),
});

/** An item's error as data (graphql-js would take an Error object returned by a resolver for a failure). */
interface ItemError {
  code: ErrorCode;
  message: string;
  fields: FieldIssue[] | null;
}

const ItemErrorRef = builder.objectRef<ItemError>('BatchRatesItemError').implement({
  description: 'Why one item was not priced: VALIDATION_ERROR (with fields), NOT_FOUND or UPSTREAM_ERROR',
  fields: (t) => ({
    code: t.field({ type: ErrorCodeEnum, resolve: (e) => e.code }),
    message: t.exposeString('message'),
    fields: t.field({
      type: [FieldIssueRef],
      nullable: true,
      description: 'VALIDATION_ERROR: each bad field (input.items.3.checkin) with a reason',
      resolve: (e) => e.fields,
    }),
  }),
});

const BatchRatesResultRef = builder.objectRef<BatchRatesResult>('BatchRatesResult').implement({
  description: 'The result of one item: data when status is OK, error when it is ERROR',
  fields: (t) => ({
    propertyId: t.int({ resolve: (res) => res.propertyId as number, description: 'The item\'s propertyId' }),
    status: t.field({ type: BatchItemStatus, resolve: (res) => res.status }),
    data: t.field({ type: PropertyOffersRef, nullable: true, resolve: (res) => (res.status === 'ok' ? res.offers : null) }),
    error: t.field({
      type: ItemErrorRef,
      nullable: true,
      resolve: (res) =>
        res.status === 'error'
          ? { code: res.error.code as ErrorCode, message: res.error.message, fields: (res.error.details?.fields as FieldIssue[] | undefined) ?? null }
          : null,
    }),
  }),
});

const batchArgs = z.object({
  input: z.object({
    currency: r.currency.nullish(),
    // Each item is checked on its own by the service call below, so one bad item fails alone.
    items: z.array(z.any()).min(1).max(BATCH_RATES_MAX_ITEMS),
  }),
});

builder.queryFields((t) => ({
  batchRates: t.field({
    type: [BatchRatesResultRef],
    description:
      'Rates of several properties, each with its own dates and party, in one provider round trip; one result per item, ' +
      'in order (REST: POST /channel/v1/search/rates/batch). Costs 1 rate-limit point per item.',
    authScopes: operationScopes('search.batchRates'),
    args: { input: t.arg({ type: BatchRatesInputRef, required: true }) },
    validate: { schema: batchArgs },
    extensions: { [BATCH_EXTENSION]: { items: 'input.items', max: BATCH_RATES_MAX_ITEMS } satisfies BatchExtension },
    resolve: (_root, { input }, ctx) => {
      const items = readBatchItems(input.items, itemSchema, { fieldPrefix: (i) => `input.items.${i}`, propertyIdKey: 'propertyId' });
      // Cross-field errors of an item name its input fields: `input.items.3.checkin`.
      return batchRates(ctx, { currency: input.currency ?? undefined, items }, (i) => graphqlNames(`input.items.${i}`, STAY_FIELDS));
    },
  }),
}));
