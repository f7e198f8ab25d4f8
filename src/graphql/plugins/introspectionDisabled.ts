import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** GRAPHQL_INTROSPECTION=false: __schema and __type are refused (__typename stays). */
export function introspectionDisabled(): Plugin {
  // The two entry points into the introspection types; what is selected under them is refused with them.
  const rule: ValidationRule = (context) => ({
    Field(node) {
      if (node.name.value === '__schema' || node.name.value === '__type') {
        context.reportError(
          new GraphQLError(`Introspection is disabled on this server (field "${node.name.value}"); the schema is published as schema.graphql`, {
            nodes: node,
            extensions: { code: 'INTROSPECTION_DISABLED' },
          }),
        );
      }
    },
  });
  return { onValidate: ({ addValidationRule }) => addValidationRule(rule) };
}
