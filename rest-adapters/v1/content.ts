import { OpenAPIHono, z } from '@hono/zod-openapi';
import { stringify } from 'csv-stringify/sync';
import { callOptions, UpstreamError, ValidationError } from '../../src/services/kernel/index.js';
import type { Property, PropertySummary } from '../../src/services/catalog/index.js';
import { errorResponses } from '../envelope.js';
import type { HttpEnv } from '../env.js';
import { scopedRoute } from '../routing.js';
import { started, streamResponse } from '../stream.js';
import { propertyToWire, ratePlanToWire, roomTypeToWire, PropertyWire, RatePlanWire, RoomTypeWire } from '../wire/properties.js';

/**
 * Content files (docs/spec/channel-api.md §4.3, docs/spec/DECISIONS.md): `catalog` lists properties, `content` adds room types
 * and rate plans. JSON is an array, CSV always has its header row (one row per property in the
 * catalog, one per rate plan in the content file). Both stream page by page from the provider.
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

const CATALOG_COLUMNS = ['id', 'name', 'city', 'country', 'star_rating', 'updated_at'] as const;
const CONTENT_COLUMNS = [
  'property_id', 'property_name', 'city', 'country', 'address', 'star_rating', 'latitude', 'longitude', 'timezone', 'updated_at',
  'roomtype_id', 'roomtype_name', 'max_occupancy', 'bed_groups',
  'rateplan_id', 'rateplan_name', 'meal_plan', 'refundable', 'cancellation_policy',
] as const;

const CatalogItem = PropertyWire.pick({ id: true, name: true, city: true, country: true, star_rating: true, updated_at: true }).openapi('CatalogItem');
const ContentItem = PropertyWire.extend({
  room_types: z.array(RoomTypeWire.extend({ rate_plans: z.array(RatePlanWire) })),
}).openapi('ContentItem');

function fileRoute(kind: 'catalog' | 'content') {
  return scopedRoute('content.files', {
    method: 'get',
    path: `/content/files/${kind}`,
    tags: ['Content'],
    summary: kind === 'catalog' ? 'The property catalog as a file' : 'Full content (room types, rate plans) as a file',
    request: { query: FileQuery },
    responses: {
      200: {
        description: 'The file, streamed',
        content: {
          'application/json': { schema: z.array(kind === 'catalog' ? CatalogItem : ContentItem) },
          'text/csv': {
            schema: z.string().openapi({
              description:
                `Columns: ${(kind === 'catalog' ? CATALOG_COLUMNS : CONTENT_COLUMNS).join(', ')}. A text cell starting with =, +, -, @, ` +
                'a tab or a carriage return is written with a leading apostrophe, so a spreadsheet does not run it as a formula',
            }),
          },
        },
      },
      ...errorResponses(ValidationError, UpstreamError),
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

function catalogRow(p: PropertySummary): Record<(typeof CATALOG_COLUMNS)[number], unknown> {
  const { id, name, city, country, star_rating, updated_at } = propertyToWire(p);
  return { id, name, city, country, star_rating, updated_at };
}

function contentItem(p: Property) {
  return {
    ...propertyToWire(p),
    room_types: p.roomTypes.map((r) => ({ ...roomTypeToWire(r), rate_plans: r.ratePlans.map(ratePlanToWire) })),
  };
}

function contentRows(p: Property): unknown[][] {
  const w = propertyToWire(p);
  const property = [w.id, w.name, w.city, w.country, w.address, w.star_rating, w.latitude, w.longitude, w.timezone, w.updated_at];
  return p.roomTypes.flatMap((r) =>
    r.ratePlans.map((rp) => [
      ...property,
      r.id, r.name, r.maxOccupancy, r.bedGroups.map((b) => b.description).join(' | '),
      rp.id, rp.name, rp.mealPlan, rp.refundable, rp.cancellationPolicy,
    ]),
  );
}

export function contentRoutes(app: OpenAPIHono<HttpEnv>) {
  for (const kind of ['catalog', 'content'] as const) {
    app.openapi(fileRoute(kind), async (c) => {
      const ctx = c.get('ctx');
      const { format, updated_since } = c.req.valid('query');
      const pages = await started(
        ctx.deps.catalog.pages({ includeRooms: kind === 'content', updatedSince: updated_since }, callOptions(ctx)),
      );
      async function* json() {
        yield '[';
        let separator = '';
        for await (const page of pages) {
          if (!page.length) continue;
          const items = page.map((p) => JSON.stringify(kind === 'catalog' ? catalogRow(p) : contentItem(p as Property)));
          yield separator + items.join(',');
          separator = ',';
        }
        yield ']';
      }
      async function* csv() {
        yield stringify([kind === 'catalog' ? [...CATALOG_COLUMNS] : [...CONTENT_COLUMNS]], CSV_OPTIONS);
        for await (const page of pages) {
          const rows = kind === 'catalog' ? page.map((p) => Object.values(catalogRow(p))) : page.flatMap((p) => contentRows(p as Property));
          if (rows.length) yield stringify(rows, CSV_OPTIONS);
        }
      }
      return streamResponse(c, format === 'csv' ? csv() : json(), {
        'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
        'content-disposition': `attachment; filename="${kind}.${format}"`,
      }) as never;
    });
  }
}
