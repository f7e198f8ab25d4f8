import { useGraphQlJit } from '@envelop/graphql-jit';
import {
  getLocation,
  getNamedType,
  GraphQLError,
  getVariableValues,
  isAbstractType,
  isCompositeType,
  isObjectType,
  Kind,
  OperationTypeNode,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  visit,
  type DocumentNode,
  type ExecutionArgs,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type InlineFragmentNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { withoutDeferStream } from './incrementalDelivery.js';

/** GRAPHQL_JIT and GRAPHQL_JIT_AFTER (src/config.ts). */
export interface JitSettings {
  /** graphql-jit at all. */
  jit: boolean;
  /** Runs of a document through Yoga's executor before graphql-jit compiles it (0: compiled at its first run). */
  jitAfter: number;
}

/**
 * graphql-jit (@envelop/graphql-jit) for the documents that run again and again
 * (docs/decisions.md "graphql-jit"): a query or mutation document whose one operation uses neither
 * @defer nor @stream is compiled once it has run `jitAfter` times through Yoga's executor
 * (@graphql-tools/executor), and then runs compiled. The compiled query is kept with the parsed
 * document (the plugin's WeakMap), and Yoga's parser cache gives one text one document node, so it
 * lives as long as Yoga keeps the document (its LRU); a document sent once is never compiled.
 *
 * Answers are the same bytes either way (test/graphql/jit.test.ts); what could differ stays on
 * Yoga's executor, decided per execution by enableIf:
 *
 * - Variable values are coerced by graphql-jit with messages of its own: an execution whose
 *   variables graphql-js refuses runs on Yoga's executor, which words the refusal as before
 *   (plugins/variableRequestErrors.ts). Values graphql-js accepts, graphql-jit accepts alike
 *   (both call the scalars' parseValue).
 * - @defer and @stream: graphql-jit delivers nothing incrementally.
 * - Subscriptions: the subscribe path, its source's errors and the per-event execution stay on
 *   Yoga's executor (graphql-ws and SSE alike).
 * - A document with several operations, or run with an operation name it does not have:
 *   @envelop/graphql-jit keeps one compiled query per document, compiled for the operation name
 *   of the run that compiled it.
 * - Field order: graphql-jit collects a selection set's own fields before its fragments' (and its
 *   fragments last first), graphql-js in document order, so `{ ...F id }` or two fragments that
 *   both apply to an object (`... on DomainError { code } ... on BookTokenError { bookingId }`)
 *   would answer the same fields in another order: a document where the orders could differ for
 *   some object type is not compiled (sameFieldOrder).
 * - @skip and @include: graphql-jit records them on the document's nodes, and its own notes admit
 *   faults with them in fragments; a document that uses them is not compiled.
 * - A document graphql-jit cannot compile: checked here, once per document, because the plugin
 *   would answer every later run with the compiler's error.
 */
export function jitExecution(settings: JitSettings): Plugin {
  if (!settings.jit) return {};
  const runs = new WeakMap<DocumentNode, number>();
  const compiles = new WeakMap<DocumentNode, boolean>();
  const enableIf = (args: ExecutionArgs): boolean => {
    const { document, schema } = args;
    let compilable = compiles.get(document);
    if (compilable === undefined) {
      const seen = runs.get(document) ?? 0;
      if (seen < settings.jitAfter) {
        runs.set(document, seen + 1);
        return false;
      }
      const operation = onlyOperation(document);
      compilable =
        operation !== undefined &&
        operation.operation !== OperationTypeNode.SUBSCRIPTION &&
        withoutDeferStream(document) === document &&
        !usesSkipOrInclude(document) &&
        sameFieldOrder(schema, document, operation) &&
        isCompiledQuery(compileQuery(schema, document, undefined));
      compiles.set(document, compilable);
      runs.delete(document);
    }
    if (!compilable) return false;
    const operation = onlyOperation(document)!;
    // An operation name the document does not have is refused by Yoga's executor (and would be
    // compiled into an error the plugin keeps for the document).
    if (args.operationName != null && args.operationName !== operation.name?.value) return false;
    const variables = operation.variableDefinitions;
    if (!variables?.length) return true;
    const values = args.variableValues ?? {};
    if (typeof values !== 'object' || Array.isArray(values)) return false;
    return !('errors' in getVariableValues(schema, variables, values, { maxErrors: 1 }));
  };
  const jit = useGraphQlJit({}, { enableIf });
  return {
    // The plugin's execute function, when it takes over, answers in graphql-js's shape (asGraphqlJs).
    onExecute(payload) {
      return jit.onExecute!({ ...payload, setExecuteFn: (execute: Execute) => payload.setExecuteFn(asGraphqlJs(execute) as never) } as never) as void;
    },
  };
}

type Execute = (args: ExecutionArgs) => unknown;

/**
 * graphql-jit's result as graphql-js builds one: `errors` before `data`, and each error a
 * graphql-js GraphQLError located by its field nodes (graphql-jit's carry bare `locations`, which
 * maskError and Yoga, rebuilding an error from its nodes, would drop), as locatedError makes it.
 */
function asGraphqlJs(execute: Execute): Execute {
  return (args) => {
    const result = execute(args);
    return isPromiseLike(result) ? result.then((done) => reshaped(done, args.document)) : reshaped(result, args.document);
  };
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function reshaped(result: unknown, document: DocumentNode): unknown {
  const r = result as { data?: unknown; errors?: ReadonlyArray<GraphQLError>; extensions?: unknown; stringify?: unknown };
  if (!r?.errors?.length) return result;
  const fields = fieldsByStart(document);
  const errors = r.errors.map((error) => {
    if (error.nodes?.length || !error.locations?.length) return error;
    const nodes = error.locations.map((l) => fields.get(`${l.line}:${l.column}`)).filter((n): n is FieldNode => n !== undefined);
    return new GraphQLError(error.message, {
      nodes: nodes.length ? nodes : undefined,
      path: error.path,
      originalError: error.originalError ?? undefined,
      extensions: error.extensions,
    });
  });
  return { errors, ...('data' in r ? { data: r.data } : {}), ...(r.extensions === undefined ? {} : { extensions: r.extensions }) };
}

const fieldStarts = new WeakMap<DocumentNode, Map<string, FieldNode>>();

/** The document's field nodes by where they start (line:column), as graphql-jit reports an error's locations. */
function fieldsByStart(document: DocumentNode): Map<string, FieldNode> {
  let found = fieldStarts.get(document);
  if (!found) {
    const byStart = new Map<string, FieldNode>();
    visit(document, {
      Field(node) {
        if (node.loc) {
          const { line, column } = getLocation(node.loc.source, node.loc.start);
          byStart.set(`${line}:${column}`, node);
        }
      },
    });
    fieldStarts.set(document, (found = byStart));
  }
  return found;
}

function onlyOperation(document: DocumentNode): OperationDefinitionNode | undefined {
  let found: OperationDefinitionNode | undefined;
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    if (found) return undefined;
    found = definition;
  }
  return found;
}

function usesSkipOrInclude(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Directive(node) {
      if (node.name.value === 'skip' || node.name.value === 'include') found = true;
    },
  });
  return found;
}

/**
 * Whether graphql-jit visits every selection set of the operation, for every object type it may
 * resolve to, in the order graphql-js does (so the answer's keys come in the same order): graphql-js
 * walks selections depth first in document order; graphql-jit takes a selection set's fields
 * first and puts its fragments on a stack (the last one first). The two visit the same fields in
 * the same order exactly when, for each object type, at most one fragment of a selection set
 * applies and nothing but fragments follows it; this compares the two walks themselves.
 */
function sameFieldOrder(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): boolean {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const applies = (fragment: InlineFragmentNode | FragmentDefinitionNode, type: GraphQLObjectType): boolean => {
    if (!fragment.typeCondition) return true;
    const condition = schema.getType(fragment.typeCondition.name.value);
    if (condition === type) return true;
    return condition !== undefined && isAbstractType(condition) && schema.isSubType(condition, type);
  };
  // graphql-js: depth first, in document order; a named fragment once per selection set.
  const inOrder = (set: SelectionSetNode, type: GraphQLObjectType, seen: Set<string>, into: FieldNode[]): FieldNode[] => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) into.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (applies(selection, type)) inOrder(selection.selectionSet, type, seen, into);
      } else {
        if (seen.has(selection.name.value)) continue;
        seen.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment && applies(fragment, type)) inOrder(fragment.selectionSet, type, seen, into);
      }
    }
    return into;
  };
  // graphql-jit: a selection set's fields, its fragments on a stack.
  const jitOrder = (set: SelectionSetNode, type: GraphQLObjectType): FieldNode[] => {
    const into: FieldNode[] = [];
    const seen = new Set<string>();
    const stack = [set];
    while (stack.length) {
      for (const selection of stack.pop()!.selections) {
        if (selection.kind === Kind.FIELD) into.push(selection);
        else if (selection.kind === Kind.INLINE_FRAGMENT) {
          if (applies(selection, type)) stack.push(selection.selectionSet);
        } else {
          if (seen.has(selection.name.value)) continue;
          seen.add(selection.name.value);
          const fragment = fragments.get(selection.name.value);
          if (fragment && applies(fragment, type)) stack.push(fragment.selectionSet);
        }
      }
    }
    return into;
  };
  const checked = new WeakMap<SelectionSetNode, Set<GraphQLCompositeType>>();
  const same = (set: SelectionSetNode, parent: GraphQLCompositeType): boolean => {
    const done = checked.get(set) ?? new Set();
    if (done.has(parent)) return true;
    done.add(parent);
    checked.set(set, done);
    const types = isObjectType(parent) ? [parent] : schema.getPossibleTypes(parent);
    for (const type of types) {
      const expected = inOrder(set, type, new Set(), []);
      const walked = jitOrder(set, type);
      if (expected.length !== walked.length || expected.some((field, i) => field !== walked[i])) return false;
      for (const field of expected) {
        if (!field.selectionSet) continue;
        const name = field.name.value;
        const definition =
          name === SchemaMetaFieldDef.name ? SchemaMetaFieldDef : name === TypeMetaFieldDef.name ? TypeMetaFieldDef : type.getFields()[name];
        const returned = definition && getNamedType(definition.type);
        if (!returned || !isCompositeType(returned) || !same(field.selectionSet, returned)) return false;
      }
    }
    return true;
  };
  const root = schema.getRootType(operation.operation);
  return root !== undefined && root !== null && same(operation.selectionSet, root);
}
