import { z } from 'zod';
import { findRoomType, propertyWindow, ratePlansOf, type BedGroup, type Property, type RatePlan, type RoomType } from '../services/catalog/index.js';
import { searchRules } from '../services/search/index.js';
import { CANCELLATION_POLICY_TYPES, MEAL_PLANS } from '../services/kernel/index.js';
import { operationScopes } from '../services/access/index.js';
import type { RequestContext } from '../context.js';
import { builder } from './builder.js';
import { arrayConnection, forwardConnectionArgs, PAGE_SIZE } from './connections.js';
import { serviceEnum } from './enums.js';
import { compositeKey, decodeNodeId, idArgument, keyParts, MAX_NODE_IDS } from './node.js';

/**
 * Property content: Property, RoomType and RatePlan, each a Node. Room types and rate plans are
 * fields of the property (scope roomtypes:read); properties load through the request's catalog
 * DataLoader, so a query for many properties, or for the properties of many bookings, makes one
 * batched provider call (or none, from the content cache), never one per property.
 *
 * A field that needs a scope of its own is nullable: without the scope it is null with an
 * INSUFFICIENT_SCOPE error at its path, and the rest of the answer stands.
 */

export const MealPlan = serviceEnum('MealPlan', MEAL_PLANS);
export const CancellationPolicyType = serviceEnum('CancellationPolicyType', CANCELLATION_POLICY_TYPES);

export const PropertyRef = builder.objectRef<Property>('Property');
export const RoomTypeRef = builder.objectRef<RoomType>('RoomType');
export const RatePlanRef = builder.objectRef<RatePlan>('RatePlan');

/** The properties of these ids (keys of Property nodes, REST ids), null for one the catalog has not or that is no id. */
async function propertiesOf(ctx: RequestContext, ids: readonly string[]): Promise<(Property | null)[]> {
  const parsed = ids.map((id) => (/^[1-9]\d{0,9}$/.test(id) ? Number(id) : null));
  const found = await ctx.loaders.property.loadMany(parsed.filter((id): id is number => id !== null));
  const failed = found.find((p) => p instanceof Error);
  if (failed) throw failed;
  const byId = new Map((found as (Property | null)[]).filter((p): p is Property => p !== null).map((p) => [p.id, p]));
  return parsed.map((id) => (id === null ? null : (byId.get(id) ?? null)));
}

/**
 * The room type id an argument names at `property`: a roomtypeId as REST takes it, or the id in a
 * RoomType's global id (another property's room type names none here).
 */
function roomtypeIdOf(property: Property, value: string): string {
  const decoded = decodeNodeId(value);
  if (decoded?.typename !== 'RoomType') return value;
  const [propertyId, roomtypeId] = keyParts(decoded.id, 2) ?? [];
  // Another property's room type: the id as given, which no room type here has (NOT_FOUND).
  return propertyId === String(property.id) && roomtypeId !== undefined ? roomtypeId : value;
}

const BedGroupRef = builder.objectRef<BedGroup>('BedGroup').implement({
  fields: (t) => ({ id: t.exposeString('id'), description: t.exposeString('description') }),
});

builder.node(RatePlanRef, {
  description: 'A rate plan of a room type (REST: GET /channel/v1/properties/{id}/rateplans)',
  id: { resolve: (p) => compositeKey(p.propertyId, p.roomtypeId, p.id) },
  loadMany: async (keys: string[], ctx: RequestContext) => {
    const parts = keys.map((key) => keyParts(key, 3));
    const properties = await propertiesOf(ctx, parts.map((p) => p?.[0] ?? ''));
    return parts.map((p, i) => {
      const room = p ? properties[i]?.roomTypes.find((r) => r.id === p[1]) : undefined;
      return room?.ratePlans.find((plan) => plan.id === p![2]) ?? null;
    });
  },
  fields: (t) => ({
    rateplanId: t.exposeString('id', { description: 'The rate plan id REST uses (rateplan_id)' }),
    roomtypeId: t.exposeString('roomtypeId'),
    name: t.exposeString('name'),
    mealPlan: t.field({ type: MealPlan, resolve: (p) => p.mealPlan }),
    refundable: t.exposeBoolean('refundable'),
    cancellationPolicy: t.field({ type: CancellationPolicyType, resolve: (p) => p.cancellationPolicy }),
  }),
});

builder.node(RoomTypeRef, {
  description: 'A room type of a property (REST: GET /channel/v1/properties/{id}/roomtypes)',
  id: { resolve: (r) => compositeKey(r.propertyId, r.id) },
  loadMany: async (keys: string[], ctx: RequestContext) => {
    const parts = keys.map((key) => keyParts(key, 2));
    const properties = await propertiesOf(ctx, parts.map((p) => p?.[0] ?? ''));
    return parts.map((p, i) => (p && properties[i]?.roomTypes.find((r) => r.id === p[1])) ?? null);
  },
  fields: (t) => ({
    roomtypeId: t.exposeString('id', { description: 'The room type id REST uses (roomtype_id)' }),
    propertyId: t.exposeInt('propertyId'),
    property: t.field({
      type: PropertyRef,
      nullable: true,
      description: 'The property (scope properties:read)',
      authScopes: operationScopes('property.read'),
      resolve: (r, _args, ctx) => ctx.loaders.property.load(r.propertyId),
    }),
    name: t.exposeString('name'),
    maxOccupancy: t.exposeInt('maxOccupancy'),
    bedGroups: t.field({ type: [BedGroupRef], resolve: (r) => r.bedGroups }),
    ratePlans: t.field({ type: [RatePlanRef], resolve: (r) => r.ratePlans }),
  }),
});

builder.node(PropertyRef, {
  description: 'A lodging property of the catalog (REST: GET /channel/v1/properties/{id})',
  id: { resolve: (p) => p.id },
  loadMany: (keys: string[], ctx: RequestContext) => propertiesOf(ctx, keys),
  fields: (t) => ({
    propertyId: t.exposeInt('id', { description: 'The property id REST uses: an integer in v1, its decimal string in v2' }),
    name: t.exposeString('name'),
    city: t.exposeString('city'),
    country: t.exposeString('country', { description: 'ISO 3166-1 alpha-2' }),
    address: t.exposeString('address'),
    starRating: t.exposeFloat('starRating'),
    latitude: t.exposeFloat('latitude'),
    longitude: t.exposeFloat('longitude'),
    timezone: t.exposeString('timezone'),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    roomTypes: t.field({
      type: [RoomTypeRef],
      nullable: true,
      description: 'REST: GET /channel/v1/properties/{id}/roomtypes (scope roomtypes:read)',
      authScopes: operationScopes('property.roomTypes'),
      resolve: (p) => p.roomTypes,
    }),
    ratePlans: t.field({
      type: [RatePlanRef],
      nullable: true,
      description: 'REST: GET /channel/v1/properties/{id}/rateplans (scope roomtypes:read); an unknown roomtypeId is a NOT_FOUND error',
      authScopes: operationScopes('property.ratePlans'),
      args: { roomtypeId: t.arg.id({ description: 'Only this room type: its roomtypeId, or its global id' }) },
      validate: { schema: z.object({ roomtypeId: z.string().min(1).max(300).nullish() }) },
      resolve: (p, args) => (args.roomtypeId ? findRoomType(p, roomtypeIdOf(p, args.roomtypeId)).ratePlans : ratePlansOf(p)),
    }),
  }),
});

const PropertyConnection = builder.connectionObject({
  type: PropertyRef,
  name: 'PropertyConnection',
  description: 'Properties in id order (the catalog), or the ones asked for by id in the order given',
});

const propertiesArgs = z.object({
  ids: searchRules.propertyIds.nullish(),
  updatedSince: z.date().nullish(),
  ...forwardConnectionArgs,
  // The provider serves no empty page.
  first: z.int().min(1).max(PAGE_SIZE.max).nullish(),
});

builder.queryFields((t) => ({
  property: t.field({
    type: PropertyRef,
    nullable: true,
    description: 'One property by its propertyId or global id, or null when there is none (REST: GET /channel/v1/properties/{id})',
    authScopes: operationScopes('property.read'),
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id: idArgument('Property') }) },
    resolve: async (_root, args, ctx) => (await propertiesOf(ctx, [args.id]))[0] ?? null,
  }),
  properties: t.field({
    type: PropertyConnection,
    description:
      `The catalog in id order, page by page (first: 1 to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}; forward only), or ` +
      `with ids the properties of those ids (at most ${MAX_NODE_IDS}; unknown ids left out) in the order given`,
    authScopes: operationScopes('properties.list'),
    args: {
      ids: t.arg.intList(),
      updatedSince: t.arg({ type: 'DateTime', description: 'Only properties changed since then' }),
      first: t.arg.int({ description: `Properties after \`after\`: 1 to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}` }),
      after: t.arg.string({ description: 'The endCursor (or an edge cursor) of the page before' }),
    },
    validate: { schema: propertiesArgs },
    resolve: async (_root, args, ctx) => {
      if (args.ids) {
        const found = await propertiesOf(ctx, args.ids.map(String));
        return arrayConnection(args, found.filter((p): p is Property => p !== null));
      }
      const window = await propertyWindow(
        ctx,
        { after: args.after ?? undefined, first: args.first ?? PAGE_SIZE.default, updatedSince: args.updatedSince ?? undefined },
        { after: 'after' },
      );
      const edges = window.items.map(({ cursor, property }) => ({ cursor, node: property }));
      return {
        edges,
        pageInfo: {
          hasNextPage: window.hasNextPage,
          hasPreviousPage: args.after != null,
          startCursor: edges[0]?.cursor ?? null,
          endCursor: edges.at(-1)?.cursor ?? args.after ?? null,
        },
      };
    },
  }),
}));
