import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { schema } from '../schema/index.js';

/**
 * The schema this server serves: the Pothos schema with the @defer and @stream directives, added
 * by useDeferStream's own schema hook (the way the plugin adds them when Yoga starts). Yoga is given
 * this one, so the plugin finds the directives there and changes nothing: what introspection shows,
 * what operations are validated against and what `npm run schema:print` writes to schema.graphql
 * are the same schema (test/contract/schema.test.ts).
 */
export const servedSchema: GraphQLSchema = withDeferStream(schema);

function withDeferStream(base: GraphQLSchema): GraphQLSchema {
  let served = base;
  const onSchemaChange = useDeferStream().onSchemaChange as NonNullable<Plugin['onSchemaChange']>;
  onSchemaChange({ schema: base, replaceSchema: (replaced) => (served = replaced) });
  return served;
}
