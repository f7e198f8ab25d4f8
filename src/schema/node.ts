import { resolveNodes } from '@pothos/plugin-relay';
import type { GraphQLResolveInfo } from 'graphql';
import { z } from 'zod';
import type { RequestContext } from '../context.js';
import { missingScope, scopesOf, type Operation } from '../services/access/index.js';
import { builder } from './builder.js';

/**
 * Global object identification (Relay): the `Node` interface, `Query.node` and `Query.nodes`,
 * and the ids of the graph (docs/decisions.md, "GraphQL: ids").
 *
 * A node's `id` is opaque: base64 of `<Type>:<key>`, where the key is the identifier REST uses
 * (a composite key's parts are URI-encoded and joined with `:`). The REST identifier is also a
 * field of its own (`bookingId`, `propertyId`, ...), and root fields that take an id take either.
 *
 * A type is read through `node` and `nodes` with the scope its REST read needs (NODE_READS, the
 * operations of services/access); an id of a type the credential may not read resolves to null,
 * as does another channel's object, an id that is not one of ours, or one that names nothing.
 */

/** Each Node type and the operation whose scope reading it needs. */
export const NODE_READS = {
  Property: 'property.read',
  RoomType: 'property.roomTypes',
  RatePlan: 'property.ratePlans',
  Booking: 'booking.read',
  Reservation: 'reservation.read',
  WebhookEndpoint: 'webhook.read',
  WebhookDelivery: 'webhook.delivery',
} as const satisfies Record<string, Operation>;

export type NodeType = keyof typeof NODE_READS;

/** The most ids `nodes` takes, as the largest page. */
export const MAX_NODE_IDS = 100;

/** A composite key as one id: each part URI-encoded, so none can hold the `:` that joins them. */
export function compositeKey(...parts: (string | number)[]): string {
  return parts.map((part) => encodeURIComponent(String(part))).join(':');
}

/** The parts of a composite key, or null when it does not have `count` of them. */
export function keyParts(key: string, count: number): string[] | null {
  const parts = key.split(':');
  if (parts.length !== count) return null;
  try {
    return parts.map((part) => decodeURIComponent(part));
  } catch {
    return null;
  }
}

const BASE64 = /^(?:[\d+/A-Za-z]{4})*(?:[\d+/A-Za-z]{2}==|[\d+/A-Za-z]{3}=)?$/;
const GLOBAL_ID = /^([A-Z_a-z]\w*):([\s\S]+)$/;

/**
 * The type and key of a global id of ours (base64 of `<Type>:<key>`, as @pothos/plugin-relay's
 * encodeGlobalID makes it); null for anything else. Read without the plugin's decodeGlobalID,
 * which throws for what is not a global id: every REST id a root field takes would pay for an
 * exception and its stack trace (a third of a GraphQL request's CPU time, measured).
 */
export function decodeNodeId(id: string): { typename: NodeType; id: string } | null {
  if (!BASE64.test(id)) return null;
  const match = GLOBAL_ID.exec(Buffer.from(id, 'base64').toString());
  return match && Object.hasOwn(NODE_READS, match[1]!) ? { typename: match[1] as NodeType, id: match[2]! } : null;
}

/**
 * A zod rule for a root field's id argument that takes a REST identifier or a global id of one of
 * `types`: the key it names (the key of the global id, or the REST identifier as it is), held to
 * the rule of a REST identifier (1 to 64 characters, as the REST routes take them). A global id of
 * another type is refused, saying whose id it is.
 */
export function idArgument(...types: NodeType[]) {
  return z
    .string()
    .min(1)
    .max(300)
    .transform((value, ctx) => {
      const decoded = decodeNodeId(value);
      if (!decoded) return value;
      if (types.includes(decoded.typename)) return decoded.id;
      ctx.issues.push({ code: 'custom', input: value, message: `the global id of a ${decoded.typename}, not of a ${types.join(' or ')}` });
      return z.NEVER;
    })
    .pipe(z.string().min(1).max(64));
}

/** Whether the caller may read objects of `type` (the scope of its REST read). */
export function mayRead(ctx: RequestContext, type: NodeType): boolean {
  return ctx.principal !== null && missingScope(ctx.principal.scopes, scopesOf(NODE_READS[type])) === undefined;
}

async function loadNodes(ctx: RequestContext, info: GraphQLResolveInfo, ids: readonly string[]): Promise<unknown[]> {
  const wanted = ids.map((id) => {
    const decoded = decodeNodeId(id);
    return decoded && mayRead(ctx, decoded.typename) ? decoded : null;
  });
  return Promise.all(await resolveNodes(builder, ctx, info, wanted));
}

const NodeRef = builder.nodeInterfaceRef();

builder.queryFields((t) => ({
  node: t.field({
    type: NodeRef,
    nullable: true,
    description:
      'The object with this global id, or null: an id of another channel, of a type the credential may not read (the ' +
      'scope of its REST read), or that names nothing',
    args: { id: t.arg.id({ required: true }) },
    validate: { schema: z.object({ id: z.string().max(300) }) },
    resolve: async (_root, args, ctx, info) => (await loadNodes(ctx, info, [String(args.id)]))[0] ?? null,
  }),
  nodes: t.field({
    type: [NodeRef],
    nullable: { list: false, items: true },
    description: `The objects with these global ids (at most ${MAX_NODE_IDS}), in the order given; null for each id node(id:) answers null`,
    args: { ids: t.arg.idList({ required: true }) },
    validate: { schema: z.object({ ids: z.array(z.string().max(300)).max(MAX_NODE_IDS) }) },
    resolve: (_root, args, ctx, info) => loadNodes(ctx, info, args.ids.map(String)),
  }),
}));
