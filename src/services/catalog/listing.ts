import { z } from 'zod';
import type { RequestContext } from '../../context.js';
import { TokenError, type TokenFailure } from '../access/index.js';
import { callOptions, principalOf, ValidationError } from '../kernel/index.js';
import { toProperty, toSummary } from './catalog.js';
import type { Property, PropertySummary } from './properties.js';

/**
 * The catalog page by page, one service for REST v2 (GET /properties) and GraphQL `properties`.
 *
 * REST v2 pages with signed page tokens: they wrap the provider's cursor in a token signed like
 * the flow tokens (kind `v2_page`): opaque, tamper-evident, bound to the channel and to the
 * `updated_since` filter of the first page, and valid for a day. Anything wrong with one is a
 * validation error naming the page token's field (400 INVALID_REQUEST `page_token` in v2).
 * GraphQL pages a connection (propertyWindow): every property has a cursor of its own, the
 * provider's cursor of the page it came in and how many of that page come before it; one the
 * provider does not take is a validation error naming `after`.
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
  try {
    return await ctx.deps.tokens.verify('v2_page', token, pageClaims, {
      now: ctx.deps.clock(),
      channelId: principalOf(ctx).channelId,
    });
  } catch (error) {
    if (error instanceof TokenError) throw badPageToken(field, PAGE_TOKEN_REASONS[error.reason]);
    throw error;
  }
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
    const signed = claims.updated_since === null ? undefined : new Date(claims.updated_since);
    if (updatedSince !== undefined && updatedSince.getTime() !== signed?.getTime()) {
      throw new ValidationError([{ field: paging.names.updatedSince, reason: 'differs from the first page\'s; omit it with a page_token' }]);
    }
    cursor = claims.cursor;
    updatedSince = signed;
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

/** Where a property sits in the provider's catalog: the page's cursor (null: the first) and how many of the page come before it. */
const catalogPosition = z.object({ c: z.string().min(1).max(200).nullable(), s: z.int().min(0).max(1000) });

function catalogCursor(position: z.infer<typeof catalogPosition>): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

function readCatalogCursor(cursor: string, field: string): z.infer<typeof catalogPosition> {
  try {
    return catalogPosition.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString()));
  } catch {
    throw new ValidationError([{ field, reason: 'not a cursor of this list' }]);
  }
}

export interface CatalogWindow {
  /** The properties, each with the cursor that continues after it. */
  items: { cursor: string; property: Property }[];
  hasNextPage: boolean;
}

/**
 * Up to `first` properties of the catalog (in id order, with their room types) after the one
 * whose cursor is `after`. The provider pages by cursor only, so a cursor names the provider's
 * page and a place in it; the last property of a provider page continues from the next page's
 * cursor. The properties are primed into the request's loader.
 */
export async function propertyWindow(
  ctx: RequestContext,
  input: { after?: string | undefined; first: number; updatedSince?: Date | undefined },
  names: { after: string },
): Promise<CatalogWindow> {
  const from = input.after === undefined ? { c: null, s: 0 } : readCatalogCursor(input.after, names.after);
  const page = await ctx.deps.upstream.listProperties(
    { cursor: from.c ?? undefined, limit: from.s + input.first, updatedSince: input.updatedSince, includeRooms: true },
    callOptions(ctx),
  );
  if (!page) throw new ValidationError([{ field: names.after, reason: 'no longer valid; start again from the first page' }]);
  const properties = page.properties.map(toProperty);
  const last = properties.length - 1;
  const items = properties.slice(from.s).map((property, i) => {
    const place = from.s + i;
    const cursor = place === last && page.next_cursor ? catalogCursor({ c: page.next_cursor, s: 0 }) : catalogCursor({ c: from.c, s: place + 1 });
    // Later lookups of these properties in the same request need no provider call.
    ctx.loaders.property.prime(property.id, property);
    return { cursor, property };
  });
  return { items, hasNextPage: page.next_cursor !== null };
}

