import { z } from 'zod';
import {
  findRoomType,
  heroImage,
  propertyWindow,
  ratePlansOf,
  type AgeCategory,
  type BedGroup,
  type Occupancy,
  type Property,
  type PropertyDescriptions,
  type PropertySummary,
  type RatePlan,
  type RoomType,
} from '../services/catalog/index.js';
import { searchRules } from '../services/search/index.js';
import { CANCELLATION_POLICY_TYPES, MEAL_PLANS } from '../services/kernel/index.js';
import { operationScopes } from '../services/access/index.js';
import type { RequestContext } from '../context.js';
import { builder } from './builder.js';
import { arrayConnection, forwardConnectionArgs, PAGE_SIZE } from './connections.js';
import { AmenityRef, ImageRef, ImageSize, localized, RoomView, servedImages, SIZES_DESCRIPTION, wholeList } from './content.js';
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
 *
 * Texts (descriptions, names, captions, policies) are in the operation's language: @inContext, else
 * Accept-Language, else ko-KR (src/schema/content.ts); amenities and images are content.ts's types.
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
  fields: (t) => ({
    id: t.exposeString('id'),
    description: t.string({ description: 'e.g. "1 King Bed" (en-US), "킹 침대 1개" (ko-KR)', resolve: localized((b) => b.description) }),
  }),
});

const AgeCategoryName = serviceEnum('AgeCategoryName', ['adult', 'child', 'infant'] as const, 'Who a guest counts as, by age');

const AgeCategoryRef = builder.objectRef<AgeCategory>('AgeCategory').implement({
  description: 'The ages a category of guest covers at the property, in years, inclusive',
  fields: (t) => ({
    category: t.field({ type: AgeCategoryName, resolve: (a) => a.category }),
    minAge: t.exposeInt('minAge', { description: 'e.g. 2 for CHILD' }),
    maxAge: t.exposeInt('maxAge', { nullable: true, description: 'e.g. 11 for CHILD; null: no upper bound (ADULT)' }),
  }),
});

const RoomTypeOccupancyRef = builder.objectRef<Occupancy>('RoomTypeOccupancy').implement({
  description: 'Who fits in the room: guests in all, adults and children at most (each limit applies)',
  fields: (t) => ({
    maxTotal: t.exposeInt('maxTotal', { description: 'Guests in all, children included (= RoomType.maxOccupancy), e.g. 3' }),
    maxAdults: t.exposeInt('maxAdults', { description: 'e.g. 2' }),
    maxChildren: t.exposeInt('maxChildren', { description: 'e.g. 1' }),
    ageCategories: t.field({ type: [AgeCategoryRef], extensions: wholeList, resolve: (o) => o.ageCategories }),
  }),
});

const RoomTypeDescriptionsRef = builder.objectRef<RoomType['descriptions']>('RoomTypeDescriptions').implement({
  description: 'Texts about a room type, in the operation\'s language',
  fields: (t) => ({
    overview: t.string({ description: 'A paragraph: size, beds, view, what the room has', resolve: localized((d) => d.overview) }),
  }),
});

const PropertyDescriptionsRef = builder.objectRef<PropertyDescriptions>('PropertyDescriptions').implement({
  description: "Texts about a property, in the operation's language (ko-KR where one has no translation)",
  fields: (t) => ({
    headline: t.string({ description: 'One line for a search result or a page title', resolve: localized((d) => d.headline) }),
    general: t.string({ description: 'The property as a whole', resolve: localized((d) => d.general) }),
    location: t.string({ description: 'Where it is and what is near', resolve: localized((d) => d.location) }),
    rooms: t.string({ description: 'Its rooms in general', resolve: localized((d) => d.rooms) }),
    dining: t.string({ description: 'Restaurants, bars and breakfast', resolve: localized((d) => d.dining) }),
    amenities: t.string({ description: 'Its amenities in prose (the list: Property.amenities)', resolve: localized((d) => d.amenities) }),
  }),
});

const CheckinRef = builder.objectRef<PropertySummary['checkin']>('PropertyCheckin').implement({
  description: 'When and how guests check in',
  fields: (t) => ({
    beginTime: t.exposeString('beginTime', { description: 'Local time at the property, HH:MM, e.g. 15:00' }),
    endTime: t.exposeString('endTime', { nullable: true, description: 'Local time, HH:MM, e.g. 23:00; null: around the clock' }),
    minAge: t.exposeInt('minAge', { description: 'The youngest a guest checking in may be, in years, e.g. 19' }),
    instructions: t.string({ description: 'What to do on arrival', resolve: localized((c) => c.instructions) }),
  }),
});

const CheckoutRef = builder.objectRef<PropertySummary['checkout']>('PropertyCheckout').implement({
  fields: (t) => ({ time: t.exposeString('time', { description: 'Local time at the property, HH:MM, e.g. 11:00' }) }),
});

const PoliciesRef = builder.objectRef<PropertySummary['policies']>('PropertyPolicies').implement({
  description: "The property's rules, in the operation's language",
  fields: (t) => ({
    children: t.string({ description: 'Children and cots', resolve: localized((p) => p.children) }),
    pets: t.string({ description: 'Whether pets are allowed, and on what terms', resolve: localized((p) => p.pets) }),
    extraBeds: t.string({ description: 'Extra beds and their charge', resolve: localized((p) => p.extraBeds) }),
    knowBeforeYouGo: t.string({ description: 'What a guest should know before arriving (construction, deposits, fees)', resolve: localized((p) => p.knowBeforeYouGo) }),
  }),
});

const AffiliationRef = builder.objectRef<{ id: string; name: string }>('PropertyAffiliation').implement({
  description: 'A hotel chain, or one of its brands',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Stable, e.g. `aurora` (a chain), `aurora-grand` (a brand)' }),
    name: t.exposeString('name', { description: 'Its own name, not translated' }),
  }),
});

const ReviewRef = builder.objectRef<NonNullable<PropertySummary['review']>>('ReviewSummary').implement({
  description: 'Guest reviews of the property',
  fields: (t) => ({
    score: t.exposeFloat('score', { description: '0.0 to 10.0, e.g. 8.6' }),
    count: t.exposeInt('count', { description: 'Reviews the score is drawn from, e.g. 1204' }),
  }),
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
    name: t.string({
      description: 'Says its cancellation policy and meal plan, e.g. "Free cancellation, breakfast included" (en-US)',
      resolve: localized((p) => p.name),
    }),
    mealPlan: t.field({ type: MealPlan, resolve: (p) => p.mealPlan }),
    refundable: t.exposeBoolean('refundable'),
    cancellationPolicy: t.field({ type: CancellationPolicyType, resolve: (p) => p.cancellationPolicy }),
    amenities: t.field({
      type: [AmenityRef],
      description: 'What the rate includes besides the room (breakfast, free cancellation and the like)',
      extensions: wholeList,
      resolve: (p) => p.amenities,
    }),
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
    name: t.string({ description: 'e.g. "Deluxe Double Room" (en-US)', resolve: localized((r) => r.name) }),
    maxOccupancy: t.exposeInt('maxOccupancy', { description: 'Guests in all (= occupancy.maxTotal)' }),
    occupancy: t.field({ type: RoomTypeOccupancyRef, resolve: (r) => r.occupancy }),
    bedGroups: t.field({ type: [BedGroupRef], resolve: (r) => r.bedGroups }),
    descriptions: t.field({ type: RoomTypeDescriptionsRef, resolve: (r) => r.descriptions }),
    areaSqm: t.exposeFloat('areaSqm', { description: 'Floor area in square metres, e.g. 32.5' }),
    views: t.field({ type: [RoomView], description: "What the room's windows look onto (none: an inner room)", extensions: wholeList, resolve: (r) => r.views }),
    amenities: t.field({ type: [AmenityRef], description: 'In the room', extensions: wholeList, resolve: (r) => r.amenities }),
    images: t.field({
      type: [ImageRef],
      description: 'Photos of the room type (none is a hero)',
      extensions: wholeList,
      args: { sizes: t.arg({ type: [ImageSize], description: SIZES_DESCRIPTION }) },
      resolve: (r, args) => servedImages(r.images, r.propertyId, args.sizes),
    }),
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
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When its content last changed (any text, image or policy)' }),
    descriptions: t.field({ type: PropertyDescriptionsRef, resolve: (p) => p.descriptions }),
    amenities: t.field({ type: [AmenityRef], description: 'Of the property as a whole (rooms: RoomType.amenities)', extensions: wholeList, resolve: (p) => p.amenities }),
    images: t.field({
      type: [ImageRef],
      description: 'The hero first, then the gallery',
      extensions: wholeList,
      args: { sizes: t.arg({ type: [ImageSize], description: SIZES_DESCRIPTION }) },
      resolve: (p, args) => servedImages(p.images, p.id, args.sizes),
    }),
    heroImage: t.field({
      type: ImageRef,
      nullable: true,
      description: 'The main image (the first of images); null when the property has none',
      args: { sizes: t.arg({ type: [ImageSize], description: SIZES_DESCRIPTION }) },
      resolve: (p, args) => {
        const hero = heroImage(p);
        return hero ? servedImages([hero], p.id, args.sizes)[0]! : null;
      },
    }),
    checkin: t.field({ type: CheckinRef, resolve: (p) => p.checkin }),
    checkout: t.field({ type: CheckoutRef, resolve: (p) => p.checkout }),
    policies: t.field({ type: PoliciesRef, resolve: (p) => p.policies }),
    phone: t.exposeString('phone', { description: 'The front desk, E.164 with separators, e.g. +82-2-1234-5678' }),
    chain: t.field({ type: AffiliationRef, nullable: true, description: 'The chain it belongs to; null for an independent property', resolve: (p) => p.chain }),
    brand: t.field({ type: AffiliationRef, nullable: true, description: "The chain's brand it carries; null when none", resolve: (p) => p.brand }),
    spokenLanguages: t.exposeStringList('spokenLanguages', { description: 'Languages the staff speak, BCP 47 primary tags, e.g. ["ko", "en"]' }),
    review: t.field({ type: ReviewRef, nullable: true, description: 'Null while it has no reviews', resolve: (p) => p.review }),
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
  // A catalog cursor is a signed token carrying the provider's cursor (up to 200 characters): about 600 at most.
  after: z.string().max(1024).nullish(),
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
        { after: 'after', updatedSince: 'updatedSince' },
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
