import { GraphQLError, Kind, valueFromASTUntyped, visit, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ValidationError } from '../../services/kernel/index.js';
import { errorExtensions } from '../errors.js';

/**
 * `@stream(initialCount:)` with the request's variables (a variable not sent: its default) is a
 * whole number of 0 or more, not null, or the operation is refused while validating (400 VALIDATION_ERROR naming initialCount, over graphql-ws
 * an error of the operation) instead of failing as it runs (graphql-js throws there: an internal
 * error, logged as one). Validation has checked the argument's type (Int), not its sign. Each
 * parsed document is walked once for its @stream arguments; the values are checked on every
 * request (a variable's value is the request's), cached validation results included, as the cost
 * limit does.
 */
export function streamArguments(): Plugin {
  return {
    onValidate({ params: { documentAST }, context }) {
      return ({ valid }) => {
        if (!valid) return;
        const params = (context as { params?: { variables?: unknown } }).params;
        const variables = params?.variables && typeof params.variables === 'object' ? (params.variables as Record<string, unknown>) : {};
        const found = badInitialCount(documentAST, variables);
        if (!found) return;
        const refusal = new ValidationError([{ field: 'initialCount', reason: `must be 0 or more (found ${JSON.stringify(found.value)})` }]);
        throw new GraphQLError(refusal.message, { extensions: errorExtensions(refusal, { spec: true }) });
      };
    },
  };
}

/** What a document's @stream directives give as initialCount: the literals, the variables' names, and their defaults. */
interface StreamCounts {
  literals: unknown[];
  variables: string[];
  defaults: Map<string, unknown>;
}

/** Per parsed document (Yoga's parse cache hands the same one back), so a request walks it once at most. */
const counts = new WeakMap<DocumentNode, StreamCounts>();

function streamCounts(document: DocumentNode): StreamCounts {
  let found = counts.get(document);
  if (found) return found;
  found = { literals: [], variables: [], defaults: new Map() };
  const into = found;
  visit(document, {
    VariableDefinition(node) {
      if (node.defaultValue) into.defaults.set(node.variable.name.value, valueFromASTUntyped(node.defaultValue));
    },
    Directive(node) {
      if (node.name.value !== 'stream') return;
      const argument = node.arguments?.find((a) => a.name.value === 'initialCount');
      if (!argument) return;
      if (argument.value.kind === Kind.VARIABLE) into.variables.push(argument.value.name.value);
      else into.literals.push(valueFromASTUntyped(argument.value));
    },
  });
  counts.set(document, found);
  return found;
}

/**
 * The first @stream initialCount of the document that is not a whole number of 0 or more (null
 * included: the executor needs a number), with the request's variables, or else the variables'
 * defaults; undefined when all are (an absent argument, or a variable neither sent nor defaulted,
 * is the directive's default 0).
 */
function badInitialCount(document: DocumentNode, variables: Readonly<Record<string, unknown>>): { value: unknown } | undefined {
  const { literals, variables: names, defaults } = streamCounts(document);
  const given = names.flatMap((name) => (Object.hasOwn(variables, name) ? [variables[name]] : defaults.has(name) ? [defaults.get(name)] : []));
  const values = [...literals, ...given];
  const bad = values.findIndex((value) => !(typeof value === 'number' && Number.isInteger(value) && value >= 0));
  return bad < 0 ? undefined : { value: values[bad] };
}
