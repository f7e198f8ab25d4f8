import { z } from 'zod';
import { listProperties, ratePlansOf, type BedGroup, type Property, type RatePlan, type RoomType } from '../services/catalog/index.js';
import { searchRules } from '../services/search/index.js';
import { builder } from './builder.js';
import { operationScopes } from '../services/access/index.js';
import { CANCELLATION_POLICY_TYPES, MEAL_PLANS } from '../services/kernel/index.js';

/**
 * Property content. Room types and rate plans are fields of the property (scope roomtypes:read);
 * properties are loaded through the request's DataLoader, so a query for many properties with
 * their room types makes one batched provider call, never one per property.
 */

export const MealPlan = builder.enumType('MealPlan', { values: MEAL_PLANS });
export const CancellationPolicyType = builder.enumType('CancellationPolicyType', {
  values: CANCELLATION_POLICY_TYPES,
});

const BedGroupRef = builder.objectRef<BedGroup>('BedGroup').implement({
  fields: (t) => ({ id: t.exposeString('id'), description: t.exposeString('description') }),
});

export const RatePlanRef = builder.objectRef<RatePlan>('RatePlan').implement({
  fields: (t) => ({
    id: t.exposeString('id'),
    roomtypeId: t.exposeString('roomtypeId'),
    name: t.exposeString('name'),
    mealPlan: t.field({ type: MealPlan, resolve: (p) => p.mealPlan }),
    refundable: t.exposeBoolean('refundable'),
    cancellationPolicy: t.field({ type: CancellationPolicyType, resolve: (p) => p.cancellationPolicy }),
  }),
});

export const RoomTypeRef = builder.objectRef<RoomType>('RoomType').implement({
  fields: (t) => ({
    id: t.exposeString('id'),
    propertyId: t.exposeInt('propertyId'),
    name: t.exposeString('name'),
    maxOccupancy: t.exposeInt('maxOccupancy'),
    bedGroups: t.field({ type: [BedGroupRef], resolve: (r) => r.bedGroups }),
    ratePlans: t.field({ type: [RatePlanRef], resolve: (r) => r.ratePlans }),
  }),
});

export const PropertyRef = builder.objectRef<Property>('Property').implement({
  description: 'A lodging property of the catalog',
  fields: (t) => ({
    id: t.exposeInt('id'),
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
      description: 'REST: GET /channel/v1/properties/{id}/roomtypes',
      authScopes: operationScopes('property.roomTypes'),
      resolve: (p) => p.roomTypes,
    }),
    ratePlans: t.field({
      type: [RatePlanRef],
      description: 'REST: GET /channel/v1/properties/{id}/rateplans',
      authScopes: operationScopes('property.ratePlans'),
      args: { roomtypeId: t.arg.string() },
      resolve: (p, args) => ratePlansOf(p, args.roomtypeId ?? undefined),
    }),
  }),
});

const PropertyPage = builder
  .objectRef<{ nodes: Property[]; endCursor: string | null }>('PropertyPage')
  .implement({
    description: 'A page of properties in id order; pass endCursor as `after` for the next',
    fields: (t) => ({
      nodes: t.field({ type: [PropertyRef], resolve: (p) => p.nodes }),
      endCursor: t.exposeString('endCursor', { nullable: true }),
      hasNextPage: t.boolean({ resolve: (p) => p.endCursor !== null }),
    }),
  });

const propertiesArgs = z.object({
  ids: searchRules.propertyIds.nullish(),
  first: z.int().min(1).max(100).nullish(),
  after: z.string().max(200).nullish(),
  updatedSince: z.date().nullish(),
});

builder.queryFields((t) => ({
  property: t.field({
    type: PropertyRef,
    nullable: true,
    description: 'One property, or null when there is none (REST: GET /channel/v1/properties/{id})',
    authScopes: operationScopes('property.read'),
    args: { id: t.arg.int({ required: true }) },
    validate: { schema: z.object({ id: searchRules.propertyId }) },
    resolve: (_root, args, ctx) => ctx.loaders.property.load(args.id),
  }),
  properties: t.field({
    type: PropertyPage,
    description: 'Properties by id (at most 100, in the order given, unknown ids left out), or the catalog page by page',
    authScopes: operationScopes('properties.list'),
    args: {
      ids: t.arg.intList(),
      first: t.arg.int({ description: '1 to 100, default 20' }),
      after: t.arg.string(),
      updatedSince: t.arg({ type: 'DateTime' }),
    },
    validate: { schema: propertiesArgs },
    resolve: async (_root, args, ctx) => {
      if (args.ids) {
        const found = await ctx.loaders.property.loadMany(args.ids);
        const failed = found.find((p) => p instanceof Error);
        if (failed) throw failed;
        return { nodes: found.filter((p): p is Property => p !== null), endCursor: null };
      }
      const page = await listProperties(
        ctx,
        { pageToken: args.after ?? undefined, limit: args.first ?? 20, updatedSince: args.updatedSince ?? undefined },
        { tokens: 'cursor', names: { pageToken: 'after' } },
      );
      return { nodes: page.properties, endCursor: page.nextPageToken };
    },
  }),
}));
