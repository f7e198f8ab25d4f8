import { OpenAPIHono, z } from '@hono/zod-openapi';
import { stringify } from 'csv-stringify/sync';
import { callOptions, RateLimitError, ServiceUnavailableError, UpstreamError, ValidationError } from '../../src/services/kernel/index.js';
import type { Property, PropertySummary } from '../../src/services/catalog/index.js';
import { errorResponses } from '../envelope.js';
import type { HttpEnv } from '../env.js';
import { scopedRoute } from '../routing.js';
import { started, streamResponse } from '../stream.js';
import { acceptLanguageParameter } from '../language.js';
import {
  heroImageUrl,
  propertyExample,
  RATE_PLAN_EXAMPLE,
  roomTypeExample,
  propertyToWire,
  ratePlanToWire,
  roomTypeToWire,
  PropertyWire,
  RatePlanWire,
  RoomTypeWire,
  wireOptions,
  type WireOptions,
} from '../wire/properties.js';

/**
 * Content files (docs/spec/channel-api.md §4.3, docs/spec/DECISIONS.md): `catalog` lists properties, `content` adds room types
 * and rate plans. JSON is an array, CSV always has its header row (one row per property in the
 * catalog, one per rate plan in the content file). Both stream page by page from the provider.
 *
 * The content file's JSON is the full model, each property as GET /properties/{id} gives it with
 * its room types (as /roomtypes) and their rate plans (as /rateplans); its CSV carries the flat
 * fields. Texts are in the request's language (Accept-Language, named in Content-Language). New
 * CSV columns are appended after the existing ones, so a reader by position keeps working. Lists
 * in a cell (amenity codes, views) are separated by `|`; the hero image is its `large` link
 * (heroImageUrl).
 */

const FileQuery = z.object({
  format: z
    .enum(['json', 'csv'], { error: 'format must be json or csv' })
    .default('json')
    .openapi({ description: 'json (an array) or csv (with a header row)' }),
  updated_since: z.iso
    .datetime({ offset: true, error: 'an ISO 8601 date-time, e.g. 2026-06-01T00:00:00Z' })
    .transform((v) => new Date(v))
    .optional()
    .openapi({ type: 'string', format: 'date-time', description: 'Only properties whose content changed after this instant' }),
});

const CATALOG_COLUMNS = ['id', 'name', 'city', 'country', 'star_rating', 'updated_at', 'hero_image_url', 'amenity_codes'] as const;
const CONTENT_COLUMNS = [
  'property_id', 'property_name', 'city', 'country', 'address', 'star_rating', 'latitude', 'longitude', 'timezone', 'updated_at',
  'roomtype_id', 'roomtype_name', 'max_occupancy', 'bed_groups',
  'rateplan_id', 'rateplan_name', 'meal_plan', 'refundable', 'cancellation_policy',
  // Added with rich content (issue 19), after the columns above.
  'headline', 'phone', 'checkin_begin_time', 'checkin_end_time', 'checkout_time', 'review_score', 'review_count',
  'hero_image_url', 'amenity_codes',
  'area_sqm', 'views', 'roomtype_amenity_codes',
  'rateplan_amenity_codes',
] as const;

/** A list in one CSV cell. */
const CELL_LIST_SEPARATOR = '|';
const codes = (amenities: readonly { code: string }[]) => amenities.map((a) => a.code);

const EXAMPLE = propertyExample(1);
const CatalogItem = PropertyWire.pick({ id: true, name: true, city: true, country: true, star_rating: true, updated_at: true })
  .extend({
    hero_image_url: z.url().nullable().openapi({ description: "The hero image's large link (1280 px wide); null when the property has no image" }),
    amenity_codes: z.array(z.string()).openapi({ example: ['free_wifi', 'fitness_center'] }),
  })
  .openapi('CatalogItem', {
    example: {
      id: EXAMPLE.id,
      name: EXAMPLE.name,
      city: EXAMPLE.city,
      country: EXAMPLE.country,
      star_rating: EXAMPLE.star_rating,
      updated_at: EXAMPLE.updated_at,
      hero_image_url: EXAMPLE.images[0]!.links.large.href,
      amenity_codes: EXAMPLE.amenities.map((a) => a.code),
    },
  });
const ContentItem = PropertyWire.extend({
  room_types: z.array(RoomTypeWire.extend({ rate_plans: z.array(RatePlanWire) })),
}).openapi('ContentItem', { example: { ...EXAMPLE, room_types: [{ ...roomTypeExample(1), rate_plans: [RATE_PLAN_EXAMPLE] }] } });

function fileRoute(kind: 'catalog' | 'content') {
  return scopedRoute('content.files', {
    method: 'get',
    path: `/content/files/${kind}`,
    operationId: kind === 'catalog' ? 'downloadCatalogFile' : 'downloadContentFile',
    tags: ['Content'],
    summary: kind === 'catalog' ? 'The property catalog as a file' : 'Full content (room types, rate plans) as a file',
    parameters: [acceptLanguageParameter],
    request: { query: FileQuery },
    responses: {
      200: {
        description: 'The file, streamed',
        content: {
          'application/json': { schema: z.array(kind === 'catalog' ? CatalogItem : ContentItem) },
          'text/csv': {
            schema: z.string().openapi({
              description:
                `Columns: ${(kind === 'catalog' ? CATALOG_COLUMNS : CONTENT_COLUMNS).join(', ')}. Lists in a cell (amenity codes, views) ` +
                `are separated by ${CELL_LIST_SEPARATOR}; hero_image_url is the hero image's large link (1280 px wide); an empty cell is a ` +
                'null (no end of check-in, no reviews, no image). A text cell starting with =, +, -, @, ' +
                'a tab or a carriage return is written with a leading apostrophe, so a spreadsheet does not run it as a formula',
            }),
          },
        },
      },
      ...errorResponses(ValidationError, RateLimitError, UpstreamError, ServiceUnavailableError),
    },
  });
}

/**
 * csv-stringify's options for both files. `escape_formulas` puts `'` before a text cell that a
 * spreadsheet would run as a formula: one starting with `=`, `+`, `-`, `@`, a tab or a carriage
 * return (and the full-width `＝ ＋ － ＠`), since names and addresses are the provider's text
 * (issue 15, finding 6). Numbers are left alone, a negative longitude included (the option skips
 * `-` in a number cell); booleans are written `true`/`false`.
 */
const CSV_OPTIONS = { escape_formulas: true, cast: { boolean: (v: boolean) => String(v) } } as const;

function catalogItem(p: PropertySummary, options: WireOptions): z.infer<typeof CatalogItem> {
  const { id, name, city, country, star_rating, updated_at } = propertyToWire(p, options);
  return { id, name, city, country, star_rating, updated_at, hero_image_url: heroImageUrl(p, options.origin), amenity_codes: codes(p.amenities) };
}

function catalogRow(p: PropertySummary, options: WireOptions): unknown[] {
  const item = catalogItem(p, options);
  return [item.id, item.name, item.city, item.country, item.star_rating, item.updated_at, item.hero_image_url, item.amenity_codes.join(CELL_LIST_SEPARATOR)];
}

function contentItem(p: Property, options: WireOptions): z.infer<typeof ContentItem> {
  return {
    ...propertyToWire(p, options),
    room_types: p.roomTypes.map((r) => ({ ...roomTypeToWire(r, options), rate_plans: r.ratePlans.map((rp) => ratePlanToWire(rp, options)) })),
  };
}

function contentRows(p: Property, options: WireOptions): unknown[][] {
  const w = propertyToWire(p, options);
  const property = [w.id, w.name, w.city, w.country, w.address, w.star_rating, w.latitude, w.longitude, w.timezone, w.updated_at];
  const rich = [
    w.descriptions.headline, w.phone, w.checkin.begin_time, w.checkin.end_time, w.checkout.time, w.review?.score, w.review?.count,
    heroImageUrl(p, options.origin), codes(p.amenities).join(CELL_LIST_SEPARATOR),
  ];
  return p.roomTypes.flatMap((r) => {
    const room = roomTypeToWire(r, options);
    const roomRich = [room.area.square_meters, room.views.join(CELL_LIST_SEPARATOR), codes(r.amenities).join(CELL_LIST_SEPARATOR)];
    return r.ratePlans.map((rp) => {
      const plan = ratePlanToWire(rp, options);
      return [
        ...property,
        room.id, room.name, room.max_occupancy, room.bed_groups.map((b) => b.description).join(' | '),
        plan.id, plan.name, plan.meal_plan, plan.refundable, plan.cancellation_policy,
        ...rich, ...roomRich, codes(rp.amenities).join(CELL_LIST_SEPARATOR),
      ];
    });
  });
}

export function contentRoutes(app: OpenAPIHono<HttpEnv>) {
  for (const kind of ['catalog', 'content'] as const) {
    app.openapi(fileRoute(kind), async (c) => {
      const ctx = c.get('ctx');
      const { format, updated_since } = c.req.valid('query');
      // A place among the channel's and the instance's downloads, held until the file ends; the
      // pages are read on the downloads' own breaker, so a burst failing leaves partners' calls alone.
      const slot = ctx.deps.downloads.take(ctx.principal!.channelId);
      let pages: AsyncGenerator<(PropertySummary | Property)[]>;
      try {
        pages = await started(
          ctx.deps.catalog.pages({ includeRooms: kind === 'content', updatedSince: updated_since }, { ...callOptions(ctx), circuit: 'downloads' }),
        );
      } catch (error) {
        slot.release();
        throw error;
      }
      // After the first page: a provider failure (502) is in no language.
      const options = wireOptions(c);
      async function* json() {
        yield '[';
        let separator = '';
        for await (const page of pages) {
          if (!page.length) continue;
          const items = page.map((p) => JSON.stringify(kind === 'catalog' ? catalogItem(p, options) : contentItem(p as Property, options)));
          yield separator + items.join(',');
          separator = ',';
        }
        yield ']';
      }
      async function* csv() {
        yield stringify([kind === 'catalog' ? [...CATALOG_COLUMNS] : [...CONTENT_COLUMNS]], CSV_OPTIONS);
        for await (const page of pages) {
          const rows = kind === 'catalog' ? page.map((p) => catalogRow(p, options)) : page.flatMap((p) => contentRows(p as Property, options));
          if (rows.length) yield stringify(rows, CSV_OPTIONS);
        }
      }
      return streamResponse(c, format === 'csv' ? csv() : json(), {
        'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
        'content-disposition': `attachment; filename="${kind}.${format}"`,
      }, { slot, writeTimeoutMs: ctx.deps.config.downloads.writeTimeoutMs }) as never;
    });
  }
}
