import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isLeafType,
  isListType,
  isObjectType,
  isInputObjectType,
  isInterfaceType,
  Kind,
  valueFromASTUntyped,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { schema as serviceSchema } from '../schema/index.js';
import { batchCost } from '../services/access/index.js';
import { BATCH_EXTENSION, type BatchExtension } from './batchField.js';
import { INSTANCE_COST, WHOLE_LIST, type InstanceCost } from './costField.js';

/**
 * What a GraphQL operation costs against the channel's rate limit, in the same points as REST
 * (one REST request: 1 point). docs/decisions.md "Rate limits" explains the model:
 *
 * - Each root field costs 1 point, or 1 point per 100 list items it may return if that is more.
 * - A list may return as many items as its page size: its own `first`, `last`, `perPage`,
 *   `per_page` or `limit` argument (also inside an input object argument, as in
 *   `availability(input: {perPage: 50})`), the length of an `ids` argument, or else the size of
 *   the page it belongs to (`bookings(perPage: 50) { items }`: 50). A paged field without its
 *   page-size argument counts the argument's default, or 20 (the API's default page size); a
 *   list that is not paged (`roomTypes`, `ratePlans`, `rates`) counts 10. Page sizes count at
 *   most 100, the API's maximum. Lists inside lists multiply.
 * - A list of content that comes whole with its object (one that declares WHOLE_LIST: amenities,
 *   images and their links, views, age categories) counts as a single object: free, its items
 *   not multiplied, as REST serves it in the same answer.
 * - Scalars, enums and single objects are free: they come with the object that holds them.
 * - A batch field (one that declares BATCH_EXTENSION, as `batchRates`) costs at least
 *   batchCost(items) points, 1 per item of its batch argument as sent (at most the batch's maximum),
 *   as REST charges the same batch; its result list counts as many items as the batch.
 * - A field that asks the provider for something per parent (one that declares INSTANCE_COST, as
 *   `Property.availability`) adds its points for every instance it may have, on top of the above:
 *   `properties(first: 20) { edges { node { availability(stay: ...) } } }` costs 1 + 20 points.
 * - @defer and @stream change when data arrives, not what is fetched: a deferred fragment costs
 *   what its fields cost, and a streamed list counts its page size whatever its `initialCount`.
 *   (@skip and @include do change it: a skipped selection costs nothing.)
 * - Introspection (`__schema`, `__type`) costs 1 point in all; `__typename` is free.
 * - An operation costs at least 1 point. When the operation to run is not known (several in the
 *   document and no operation name), the most expensive one counts.
 *
 * The estimate is pessimistic (a page is assumed full), never depends on the data, and a client
 * can work it out from the document alone (and it is reported in `extensions.rateLimit.cost`).
 */
export const QUERY_COST = {
  /** List items per point. */
  itemsPerPoint: 100,
  /** A paged field whose page-size argument is absent and has no default. */
  defaultPageSize: 20,
  /** The largest page any field returns; larger arguments are refused by the field itself. */
  maxPageSize: 100,
  /** A list without a page size of any kind. */
  unpagedListSize: 10,
} as const;

const PAGE_SIZE_ARGUMENTS = new Set(['first', 'last', 'perPage', 'per_page', 'limit']);

export interface QueryCostOptions {
  /** The schema the document runs against (default: the service's). */
  schema?: GraphQLSchema;
  /** The operation that runs; when absent and the document has several, the dearest counts. */
  operationName?: string | null | undefined;
}

/** The points `document` costs with `variables` (see QUERY_COST). */
export function documentCost(
  document: DocumentNode,
  variables?: Readonly<Record<string, unknown>> | null,
  options: QueryCostOptions = {},
): number {
  const schema = options.schema ?? serviceSchema;
  const fragments = new Map<string, FragmentDefinitionNode>();
  const operations: OperationDefinitionNode[] = [];
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    else if (definition.kind === Kind.OPERATION_DEFINITION) operations.push(definition);
  }
  const named = options.operationName ? operations.filter((op) => op.name?.value === options.operationName) : [];
  const candidates = named.length ? named : operations;
  let cost = 1;
  for (const operation of candidates) {
    cost = Math.max(cost, costOfOperation(schema, operation, fragments, variables ?? {}));
  }
  return cost;
}

function costOfOperation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: Readonly<Record<string, unknown>>,
): number {
  const root = schema.getRootType(operation.operation);
  if (!root) return 1;
  const walker = new CostWalker(schema, fragments, variablesOf(operation, variables));

  let cost = 0;
  let introspection = false;
  for (const { node, field } of walker.fieldsOf(operation.selectionSet, root)) {
    if (node.name.value === '__schema' || node.name.value === '__type') {
      introspection = true;
      continue;
    }
    if (!field) continue;
    const { items, points } = walker.listItems(node, field, 1, undefined);
    const batch = walker.batchSizeOf(node, field);
    cost += Math.max(1, Math.ceil(items / QUERY_COST.itemsPerPoint), batch === undefined ? 0 : batchCost(batch)) + points;
  }
  if (introspection) cost += 1;
  return Math.min(Number.MAX_SAFE_INTEGER, Math.max(1, cost));
}

/**
 * The operation's variables as it runs with them: the client's values over the defaults the
 * operation declares. Variable names come from the request, so they live in an object without a
 * prototype: `$constructor` without a value has none (not Object.prototype's member). graphql-js
 * coerces variables into a plain object, where `__proto__` cannot be set, so a `$__proto__` never
 * has a value when the operation runs (its argument takes the field's default): it has none here
 * either, or a client could send `{"__proto__": 1}` and be charged for a page of 1 while the
 * field returns its default page.
 */
function variablesOf(operation: OperationDefinitionNode, sent: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const values: Record<string, unknown> = Object.create(null);
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (name === '__proto__') continue;
    if (Object.hasOwn(sent, name)) values[name] = sent[name];
    else if (definition.defaultValue) values[name] = valueFromASTUntyped(definition.defaultValue);
  }
  return values;
}

interface SelectedField {
  node: FieldNode;
  /** Undefined for __typename and for fields the schema does not have (validation refuses those). */
  field: GraphQLField<unknown, unknown> | undefined;
}

class CostWalker {
  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>,
    private readonly variables: Readonly<Record<string, unknown>>,
  ) {}

  /**
   * The list items `node` may return when it is resolved `instances` times, with those of the
   * fields under it, and the points of the fields under it that cost per instance (INSTANCE_COST).
   * `pageSize` is the page size of the page object it belongs to, if any.
   */
  listItems(
    node: FieldNode,
    field: GraphQLField<unknown, unknown>,
    instances: number,
    pageSize: number | undefined,
  ): { items: number; points: number } {
    const own = field.extensions[INSTANCE_COST] as InstanceCost | undefined;
    let points = own ? own.points * instances : 0;
    const named = getNamedType(field.type);
    if (isLeafType(named) || !isCompositeType(named)) return { items: 0, points };
    const size = this.pageSizeOf(node, field);
    let items = 0;
    let childPageSize: number | undefined;
    if (isListType(getNullableType(field.type)) && field.extensions[WHOLE_LIST] !== true) {
      instances *= size ?? pageSize ?? QUERY_COST.unpagedListSize;
      items = instances;
    } else {
      childPageSize = size;
    }
    if (node.selectionSet) {
      for (const child of this.fieldsOf(node.selectionSet, named)) {
        if (!child.field) continue;
        const under = this.listItems(child.node, child.field, instances, childPageSize);
        items += under.items;
        points += under.points;
      }
    }
    return { items: Math.min(items, Number.MAX_SAFE_INTEGER), points: Math.min(points, Number.MAX_SAFE_INTEGER) };
  }

  /** The fields a selection set selects on `type`, through fragments, without skipped ones. */
  fieldsOf(selectionSet: SelectionSetNode, type: GraphQLCompositeType, seen: ReadonlySet<string> = new Set()): SelectedField[] {
    const fields: SelectedField[] = [];
    for (const selection of selectionSet.selections) {
      if (!this.included(selection.directives)) continue;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[name] : undefined;
        fields.push({ node: selection, field });
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? this.schema.getType(selection.typeCondition.name.value) : type;
        if (on && isCompositeType(on)) fields.push(...this.fieldsOf(selection.selectionSet, on, seen));
      } else {
        // A fragment spread; a cycle (which validation refuses) is followed once.
        const name = selection.name.value;
        const fragment = this.fragments.get(name);
        if (!fragment || seen.has(name)) continue;
        const on = this.schema.getType(fragment.typeCondition.name.value);
        if (on && isCompositeType(on)) fields.push(...this.fieldsOf(fragment.selectionSet, on, new Set([...seen, name])));
      }
    }
    return fields;
  }

  /** The items of a batch field's batch argument as sent (at most its maximum); undefined for other fields. */
  batchSizeOf(node: FieldNode, field: GraphQLField<unknown, unknown>): number | undefined {
    const batch = field.extensions[BATCH_EXTENSION] as BatchExtension | undefined;
    if (!batch) return undefined;
    const [argument = '', ...path] = batch.items.split('.');
    let value: unknown = this.argumentsOf(node).get(argument);
    for (const key of path) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    return Math.min(batch.max, Array.isArray(value) ? value.length : 1);
  }

  private argumentsOf(node: FieldNode): Map<string, unknown> {
    const given = new Map<string, unknown>();
    for (const argument of node.arguments ?? []) given.set(argument.name.value, valueFromASTUntyped(argument.value, this.variables));
    return given;
  }

  /** The page size a field's arguments ask for, if it is paged (see QUERY_COST). */
  private pageSizeOf(node: FieldNode, field: GraphQLField<unknown, unknown>): number | undefined {
    const batch = this.batchSizeOf(node, field);
    if (batch !== undefined) return batch;
    const given = this.argumentsOf(node);

    let paged = false;
    for (const definition of field.args) {
      const value = given.has(definition.name) ? given.get(definition.name) : definition.defaultValue;
      if (PAGE_SIZE_ARGUMENTS.has(definition.name)) {
        paged = true;
        if (typeof value === 'number') return clampPageSize(value);
        continue;
      }
      if (definition.name === 'ids' && Array.isArray(value)) return clampPageSize(value.length);
      // An input object with a page size of its own: availability(input: { perPage: 50 }).
      const type = getNamedType(definition.type);
      if (!isInputObjectType(type)) continue;
      for (const name of Object.keys(type.getFields())) {
        if (!PAGE_SIZE_ARGUMENTS.has(name)) continue;
        paged = true;
        const inner = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[name] : undefined;
        if (typeof inner === 'number') return clampPageSize(inner);
      }
    }
    return paged ? QUERY_COST.defaultPageSize : undefined;
  }

  /** False when @skip(if: true) or @include(if: false) leaves the selection out. */
  private included(directives: FieldNode['directives']): boolean {
    for (const directive of directives ?? []) {
      const name = directive.name.value;
      if (name !== 'skip' && name !== 'include') continue;
      const condition = directive.arguments?.find((a) => a.name.value === 'if');
      const value = condition ? valueFromASTUntyped(condition.value, this.variables) : undefined;
      if (name === 'skip' && value === true) return false;
      if (name === 'include' && value === false) return false;
    }
    return true;
  }
}

function clampPageSize(value: number): number {
  if (!Number.isFinite(value)) return QUERY_COST.maxPageSize;
  return Math.min(QUERY_COST.maxPageSize, Math.max(0, Math.floor(value)));
}
