import { z } from 'zod';
import type { RequestContext } from '../../context.js';
import { TokenError, type TokenFailure } from '../access/index.js';
import { callOptions, principalOf, ValidationError } from '../kernel/index.js';
import { toProperty, toSummary } from './catalog.js';
import type { UpstreamProperty } from '../../upstream/protocol.js';
import type { Property, PropertySummary } from './properties.js';

/**
 * The catalog page by page, one service for REST v2 (GET /properties) and GraphQL `properties`.
 *
 * REST v2 pages with signed page tokens: they wrap the provider's cursor in a token signed like
 * the flow tokens (kind `v2_page`): opaque, tamper-evident, bound to the channel and to the
 * `updated_since` filter of the first page, and valid for a day. Anything wrong with one is a
 * validation error naming the page token's field (400 INVALID_REQUEST `page_token` in v2).
 * GraphQL pages a connection (propertyWindow): every property has a cursor of its own, signed
 * the same way (kind `catalog_cursor`), naming the provider's cursor of the page it came in and
 * how many of that page come before it; a forged, altered, foreign or expired one, or one the
 * provider no longer takes, is a validation error naming `after`.
 */

export const PAGE_TOKEN_TTL_SECONDS = 24 * 60 * 60;

/** What a page token stands for: where the provider's catalog continues, under which filter. */
const pageClaims = z.object({
  channel_id: z.string(),
  cursor: z.string().min(1).max(200),
  updated_since: z.iso.datetime().nullable(),
});

const PAGE_TOKEN_REASONS: Record<TokenFailure, string> = {
  malformed: 'not a page token from this API',
  wrong_type: 'not a page token',
  foreign: 'issued to another channel',
  expired: 'expired; start again from the first page',
};

export interface PropertyListingInput {
  /** The previous page's page token (signed paging) or cursor (cursor paging); absent: the first page. */
  pageToken?: string | undefined;
  updatedSince?: Date | undefined;
  limit: number;
}

/** How REST v2 pages: `names` are its spelling of the page token and filter fields, for errors. */
export interface Paging {
  names: { pageToken: string; updatedSince: string };
}

export interface PropertyListing<P> {
  properties: P[];
  /** The page token (or cursor) of the next page; null on the last. */
  nextPageToken: string | null;
}

function badPageToken(field: string, reason: string) {
  return new ValidationError([{ field, reason }], `The ${field} is not valid`);
}

async function readPageToken(ctx: RequestContext, token: string, field: string) {
  return verifyPaging(ctx, 'v2_page', token, pageClaims, PAGE_TOKEN_REASONS, (reason) => badPageToken(field, reason));
}

/**
 * The claims of a paging token of `kind` (a v2 page token, a catalog cursor) issued to the
 * caller's channel; one that does not verify is `invalid(reason)`, its reason from `reasons`.
 */
async function verifyPaging<T extends z.ZodType>(
  ctx: RequestContext,
  kind: 'v2_page' | 'catalog_cursor',
  token: string,
  claims: T,
  reasons: Record<TokenFailure, string>,
  invalid: (reason: string) => ValidationError,
): Promise<z.infer<T>> {
  try {
    return await ctx.deps.tokens.verify(kind, token, claims, { now: ctx.deps.clock(), channelId: principalOf(ctx).channelId });
  } catch (error) {
    if (error instanceof TokenError) throw invalid(reasons[error.reason]);
    throw error;
  }
}

/**
 * The `updatedSince` filter a paging token was issued under (null: none), which a request that
 * repeats the filter must give as it was: otherwise `differs()`.
 */
function issuedFilter(signed: string | null, given: Date | undefined, differs: () => ValidationError): Date | undefined {
  const issued = signed === null ? undefined : new Date(signed);
  if (given !== undefined && given.getTime() !== issued?.getTime()) throw differs();
  return issued;
}

/** One page of property summaries, with a signed page token for the next (REST v2). */
export async function listProperties(
  ctx: RequestContext,
  input: PropertyListingInput,
  paging: Paging,
): Promise<PropertyListing<PropertySummary>> {
  let cursor: string | undefined;
  let updatedSince = input.updatedSince;
  if (input.pageToken) {
    const claims = await readPageToken(ctx, input.pageToken, paging.names.pageToken);
    updatedSince = issuedFilter(claims.updated_since, updatedSince, () =>
      new ValidationError([{ field: paging.names.updatedSince, reason: 'differs from the first page\'s; omit it with a page_token' }]),
    );
    cursor = claims.cursor;
  }
  const page = await ctx.deps.upstream.listProperties({ cursor, limit: input.limit, updatedSince, includeRooms: false }, callOptions(ctx));
  if (!page) {
    // Only a cursor of ours gets this far; the provider no longer takes it (it was replaced or
    // changed its cursors since). Starting again is what the partner can do.
    ctx.logger.warn('the provider refused a cursor from a signed page token');
    throw badPageToken(paging.names.pageToken, 'no longer valid; start again from the first page');
  }
  const nextPageToken = page.next_cursor
    ? await ctx.deps.tokens.sign(
        'v2_page',
        {
          channel_id: principalOf(ctx).channelId,
          cursor: page.next_cursor,
          updated_since: updatedSince?.toISOString() ?? null,
        } satisfies z.infer<typeof pageClaims>,
        { now: ctx.deps.clock(), ttlSeconds: PAGE_TOKEN_TTL_SECONDS },
      )
    : null;
  return { properties: page.properties.map(toSummary), nextPageToken };
}

// ---------------------------------------------------------------------------------------------
// GraphQL: a connection of the catalog

/**
 * The provider pages a cursor names are read this many properties at a time at most: a cursor
 * names one of them and how many of it come before its place (0 to this), so a page of `first`
 * reads at most this plus `first` properties, in at most two provider calls.
 */
export const CATALOG_CHUNK = 100;

/**
 * What a catalog cursor stands for: the provider's cursor of a page (null: the first), how many
 * of that page come before the place (`s`), and the `updatedSince` filter it was issued under.
 * Signed like a v2 page token (kind `catalog_cursor`): opaque, tamper-evident, bound to the
 * channel, valid for a day.
 */
const catalogClaims = z.object({
  channel_id: z.string(),
  c: z.string().min(1).max(200).nullable(),
  s: z.int().min(0).max(CATALOG_CHUNK),
  u: z.iso.datetime().nullable(),
});
type CatalogPosition = Omit<z.infer<typeof catalogClaims>, 'channel_id'>;

const CURSOR_REASONS: Record<TokenFailure, string> = {
  malformed: 'not a cursor of this list',
  wrong_type: 'not a cursor of this list',
  foreign: 'issued to another channel',
  expired: 'expired; start again from the first page',
};

function catalogCursor(ctx: RequestContext, position: CatalogPosition): Promise<string> {
  const claims = { channel_id: principalOf(ctx).channelId, ...position } satisfies z.infer<typeof catalogClaims>;
  return ctx.deps.tokens.sign('catalog_cursor', claims, { now: ctx.deps.clock(), ttlSeconds: PAGE_TOKEN_TTL_SECONDS });
}

async function readCatalogCursor(ctx: RequestContext, cursor: string, field: string): Promise<CatalogPosition> {
  const { c, s, u } = await verifyPaging(ctx, 'catalog_cursor', cursor, catalogClaims, CURSOR_REASONS, (reason) => new ValidationError([{ field, reason }]));
  return { c, s, u };
}

export interface CatalogWindow {
  /** The properties, each with the cursor that continues after it. */
  items: { cursor: string; property: Property }[];
  hasNextPage: boolean;
}

/** A provider page as it was asked for: the cursor it was read from (null: the first). */
interface ReadPage {
  from: string | null;
  properties: UpstreamProperty[];
  next: string | null;
}

/**
 * The provider pages that hold the `wanted` properties from `from`'s page: one call when they fit
 * in CATALOG_CHUNK, else that chunk and the rest from its next cursor.
 */
async function readPages(ctx: RequestContext, from: string | null, wanted: number, updatedSince: Date | undefined, field: string): Promise<ReadPage[]> {
  const pages: ReadPage[] = [];
  for (let cursor = from, left = wanted; left > 0 && (cursor !== null || pages.length === 0); ) {
    const limit = Math.min(left, CATALOG_CHUNK);
    const page = await ctx.deps.upstream.listProperties({ cursor: cursor ?? undefined, limit, updatedSince, includeRooms: true }, callOptions(ctx));
    if (!page) throw new ValidationError([{ field, reason: 'no longer valid; start again from the first page' }]);
    pages.push({ from: cursor, properties: page.properties, next: page.next_cursor });
    cursor = page.next_cursor;
    left -= limit;
  }
  return pages;
}

/**
 * Up to `first` properties of the catalog (in id order, with their room types) after the one
 * whose cursor is `after`. The provider pages by cursor only, so a cursor names the provider's
 * page and a place in it; the last property of a provider page continues from the next page's
 * cursor. A cursor that is not one this service issued to the channel is a validation error
 * naming `after`, before the provider is asked anything; `updatedSince` may be omitted with a
 * cursor (the cursor's applies) or repeated as it was. The properties are primed into the
 * request's loader.
 */
export async function propertyWindow(
  ctx: RequestContext,
  input: { after?: string | undefined; first: number; updatedSince?: Date | undefined },
  names: { after: string; updatedSince: string },
): Promise<CatalogWindow> {
  let updatedSince = input.updatedSince;
  let from: CatalogPosition = { c: null, s: 0, u: updatedSince?.toISOString() ?? null };
  if (input.after !== undefined) {
    from = await readCatalogCursor(ctx, input.after, names.after);
    updatedSince = issuedFilter(from.u, updatedSince, () =>
      new ValidationError([{ field: names.updatedSince, reason: 'differs from the one the cursor was issued under' }]),
    );
  }
  const first = Math.min(input.first, CATALOG_CHUNK);
  const pages = await readPages(ctx, from.c, from.s + first, updatedSince, names.after);
  const places: { position: CatalogPosition; property: Property }[] = [];
  pages.forEach((page, p) => {
    const last = page.properties.length - 1;
    // Only the first page read has properties before the place the cursor names.
    page.properties.slice(p === 0 ? from.s : 0).forEach((raw, i) => {
      const place = (p === 0 ? from.s : 0) + i;
      const position = place === last && page.next ? { c: page.next, s: 0, u: from.u } : { c: page.from, s: place + 1, u: from.u };
      places.push({ position, property: toProperty(raw) });
    });
  });
  const items = await Promise.all(
    places.map(async ({ position, property }) => {
      // Later lookups of these properties in the same request need no provider call.
      ctx.loaders.property.prime(property.id, property);
      return { cursor: await catalogCursor(ctx, position), property };
    }),
  );
  return { items, hasNextPage: pages.at(-1)!.next !== null };
}
