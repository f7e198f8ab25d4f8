import type { z } from 'zod';
import { AppError, callOptions, NotFoundError, UpstreamError, ValidationError, type Currency } from '../kernel/index.js';
import type { RequestContext } from '../../context.js';
import type { AvailabilityBatchRequest, AvailabilityBatchResponse, UpstreamRate } from '../../upstream/protocol.js';
import type { Property } from '../catalog/index.js';
import { propertyOffers, selectRates, type PropertyOffers } from './offers.js';
import { normalizeStay, type FieldNames, type Stay, type StayInput } from './rules.js';

/**
 * Batch rates (docs/spec/channel-api.md §4.7 `POST /search/rates/batch`): the rates of several properties, each with
 * its own dates and party, in one call. Each item is priced as `GET /search/availability/{id}`
 * prices one property (every rate that fits, price_check_tokens for the bookable ones), and
 * answered on its own: one bad or unknown item does not spoil the others. All items go to the
 * provider in ONE availability round trip (items with the same stay share one provider search),
 * and their property content comes through the request's DataLoader (one batch, or the cache).
 *
 * A failure of that one round trip fails the whole batch (502): there is nothing partial to give.
 */

/** Items per batch: enough for a results page of a metasearch, small enough for one provider call. */
export const BATCH_RATES_MAX_ITEMS = 50;

export interface BatchRatesItemInput extends StayInput {
  propertyId: number;
  roomtypeId?: string | undefined;
  rateplanId?: string | undefined;
}

/** An item as its adapter read it: what to price, or why it cannot be priced. */
export type BatchRatesItem =
  | { ok: true; input: BatchRatesItemInput }
  | { ok: false; propertyId: number | null; error: AppError };

export type BatchRatesResult =
  | { status: 'ok'; propertyId: number; offers: PropertyOffers }
  /** `propertyId` is null when the item did not carry a usable one. */
  | { status: 'error'; propertyId: number | null; error: AppError };

export interface BatchRatesInput {
  currency?: Currency | undefined;
  items: BatchRatesItem[];
}

/**
 * Reads raw items with a surface's item schema. An item that does not fit is a VALIDATION_ERROR of
 * its own, its fields named from the request's root (`items.3.checkin`), never a failure of the
 * batch.
 */
export function readBatchItems(
  raw: readonly unknown[],
  schema: z.ZodType<BatchRatesItemInput>,
  options: { fieldPrefix: (index: number) => string; propertyIdKey: string },
): BatchRatesItem[] {
  return raw.map((item, index) => {
    const parsed = schema.safeParse(item);
    if (parsed.success) return { ok: true, input: parsed.data };
    const prefix = options.fieldPrefix(index);
    const fields = parsed.error.issues.map((issue) => ({
      field: issue.path.length ? `${prefix}.${issue.path.join('.')}` : prefix,
      reason: issue.message,
    }));
    const id = typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[options.propertyIdKey] : undefined;
    return { ok: false, propertyId: Number.isSafeInteger(id) ? (id as number) : null, error: new ValidationError(fields) };
  });
}

/** A surface's field names for rules across fields, under an item's prefix (`items.3.`). */
export function itemFieldNames(names: FieldNames, prefix: string): FieldNames {
  return Object.fromEntries(Object.entries(names).map(([key, name]) => [key, `${prefix}.${name}`])) as FieldNames;
}

/** A priced item on its way: its stay is checked, its property and rates are still to come. */
interface Pending {
  index: number;
  input: BatchRatesItemInput;
  stay: Stay;
  /** Index of its stay among the provider's batch items. */
  search: number;
}

/**
 * Prices every item that passed its adapter's reading; results in the order of the items.
 * `names(index)` spells the fields of item `index` for errors across fields (dates, party).
 */
export async function batchRates(
  ctx: RequestContext,
  input: BatchRatesInput,
  names: (index: number) => FieldNames,
): Promise<BatchRatesResult[]> {
  const currency = input.currency ?? 'KRW';
  const now = ctx.deps.clock();
  const results: BatchRatesResult[] = new Array(input.items.length);
  const pending: Pending[] = [];
  // Items with the same stay and party share one provider search (it takes many properties).
  const searches: AvailabilityBatchRequest['items'] = [];
  const searchOf = new Map<string, number>();

  input.items.forEach((item, index) => {
    if (!item.ok) {
      results[index] = { status: 'error', propertyId: item.propertyId, error: item.error };
      return;
    }
    let stay: Stay;
    try {
      stay = normalizeStay(item.input, now, names(index));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      results[index] = { status: 'error', propertyId: item.input.propertyId, error };
      return;
    }
    const key = JSON.stringify([stay.checkin, stay.checkout, stay.occupancy]);
    let search = searchOf.get(key);
    if (search === undefined) {
      search = searches.push({ checkin: stay.checkin, checkout: stay.checkout, occupancy: stay.occupancy, property_ids: [], detail: 'rates' }) - 1;
      searchOf.set(key, search);
    }
    const ids = searches[search]!.property_ids;
    if (!ids.includes(item.input.propertyId)) ids.push(item.input.propertyId);
    pending.push({ index, input: item.input, stay, search });
  });
  if (pending.length === 0) return results;

  // Content (one DataLoader batch, usually from the cache) and prices (one provider round trip) at once.
  const [properties, answer] = await Promise.all([
    Promise.all(pending.map((p) => ctx.loaders.property.load(p.input.propertyId))),
    ctx.deps.upstream.availabilityBatch({ items: searches }, callOptions(ctx)),
  ]);

  for (const [i, item] of pending.entries()) {
    const property = properties[i] ?? null;
    try {
      const rates = ratesOf(ctx, answer.items[item.search]!, item.input.propertyId);
      results[item.index] = {
        status: 'ok',
        propertyId: item.input.propertyId,
        offers: await priceItem(ctx, item, property, rates, currency),
      };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      results[item.index] = { status: 'error', propertyId: item.input.propertyId, error };
    }
  }
  return results;
}

async function priceItem(
  ctx: RequestContext,
  item: Pending,
  property: Property | null,
  rates: UpstreamRate[],
  currency: Currency,
): Promise<PropertyOffers> {
  if (!property) throw new NotFoundError(`Property ${item.input.propertyId} was not found`);
  const selected = selectRates(property, item.input.roomtypeId, item.input.rateplanId);
  return propertyOffers(ctx, { property, stay: item.stay, currency, selected, rates, withTokens: true });
}

/** A property's rates in its search's answer; the provider refusing that search fails its items only. */
function ratesOf(
  ctx: RequestContext,
  answer: AvailabilityBatchResponse['items'][number],
  propertyId: number,
): UpstreamRate[] {
  if ('error' in answer) {
    // We checked the item before sending it, so this is a disagreement worth a look.
    ctx.logger.warn({ propertyId, upstream: answer.error }, 'the provider refused an item of an availability batch');
    throw new UpstreamError('The inventory provider could not price this item');
  }
  return answer.results.find((r) => r.property_id === propertyId)?.rates ?? [];
}
