/**
 * Child process of `npm run bench`: the stock GraphQL twin, graphql-yoga with its defaults on
 * `node:http` (`createServer(yoga)`, as Yoga's documentation starts it) over a Pothos schema
 * (@pothos/core, no plugin) of the one field the GraphQL scenario asks, with the types named and
 * typed as in schema.graphql:
 *
 *   type Query { property(id: ID!): Property }
 *   type Property { propertyId: Int! name: String! city: String! starRating: Float! roomTypes: [RoomType!] }
 *   type RoomType { roomtypeId: String! name: String! maxOccupancy: Int! }
 *
 * The data come from memory: TWIN_GRAPHQL_FILE holds the service's answer to the scenario's
 * query ({ id, answer }), whose `data.property` is served for that id. Where the service's answer
 * carries `extensions` (its `rateLimit` figures), one plugin (`onExecuteDone`) adds the same object
 * to the result, so the twin's answer bytes are the service's (bench/run.ts checks them); that is
 * the only thing added to Yoga's defaults. Prints `{"port":…}`; answers `cpu` over IPC.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import SchemaBuilder from '@pothos/core';
import { createYoga, type Plugin } from 'graphql-yoga';
import { serveTwin } from './children.js';

interface RoomTypeData {
  roomtypeId: string;
  name: string;
  maxOccupancy: number;
}
interface PropertyData {
  propertyId: number;
  name: string;
  city: string;
  starRating: number;
  roomTypes: RoomTypeData[] | null;
}

const file = process.env.TWIN_GRAPHQL_FILE;
if (!file) {
  console.error('serve-yoga: TWIN_GRAPHQL_FILE is required');
  process.exit(2);
}
const input = JSON.parse(readFileSync(file, 'utf8')) as {
  id: string;
  answer: { data: { property: PropertyData }; extensions?: Record<string, unknown> };
};
const properties = new Map<string, PropertyData>([[input.id, input.answer.data.property]]);

// No plugin. (The option types of the service's plugins are part of `npx tsc -p bench`, which
// compiles the service too: hence the cast of the empty options.)
const builder = new SchemaBuilder({} as ConstructorParameters<typeof SchemaBuilder>[0]);
const RoomType = builder.objectRef<RoomTypeData>('RoomType').implement({
  fields: (t) => ({
    roomtypeId: t.exposeString('roomtypeId'),
    name: t.exposeString('name'),
    maxOccupancy: t.exposeInt('maxOccupancy'),
  }),
});
const Property = builder.objectRef<PropertyData>('Property').implement({
  fields: (t) => ({
    propertyId: t.exposeInt('propertyId'),
    name: t.exposeString('name'),
    city: t.exposeString('city'),
    starRating: t.exposeFloat('starRating'),
    roomTypes: t.field({ type: [RoomType], nullable: true, resolve: (p) => p.roomTypes }),
  }),
});
builder.queryType({
  fields: (t) => ({
    property: t.field({
      type: Property,
      nullable: true,
      args: { id: t.arg.id({ required: true }) },
      resolve: (_root, { id }) => properties.get(String(id)) ?? null,
    }),
  }),
});

const extensions = input.answer.extensions;
/** Adds the service's `extensions` to every single result (not to streams). */
const sameExtensions: Plugin = {
  onExecute() {
    return {
      onExecuteDone({ result, setResult }) {
        if (extensions && !(Symbol.asyncIterator in result)) setResult({ ...result, extensions: { ...result.extensions, ...extensions } });
      },
    };
  },
};

const yoga = createYoga({ schema: builder.toSchema(), plugins: extensions ? [sameExtensions] : [] });
const server = createServer(yoga);

serveTwin(server);
