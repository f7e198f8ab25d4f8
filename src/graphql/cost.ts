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
 *
 * The same walk counts the values the answer may hold at most (documentMeasure's `values`, which
 * GRAPHQL_MAX_ANSWER_VALUES bounds): every selected field once per instance of its parent, and
 * every item of a list, lists counting their page as above. A whole list (WHOLE_LIST) counts as
 * one item here too: its length is the content's (a property's images, as REST's answer carries
 * them), not the document's; what the bound is for is what a document multiplies (pages, unpaged
 * lists, lists under lists), so the REST page's twin (100 properties with all their content:
 * about 164,000) passes and an event history nested four levels (363,000) does not.
 * Introspection fields count one value each (their answer is the schema's, bounded by the alias limit).
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
  /**
   * The walk stops once the root fields priced so far cost more than this (the cost limit's: a
   * dearer operation is refused whatever the rest costs); the cost returned is then more than
   * this, though maybe not all of it. Unset: the whole cost.
   */
  stopAbove?: number;
  /** The same for the answer's values: the walk stops once they are more than this. */
  stopAboveValues?: number;
}

/** What an operation costs and how many values its answer may hold at most (see QUERY_COST). */
export interface DocumentMeasure {
  cost: number;
  values: number;
}

/** The points `document` costs with `variables` (see QUERY_COST). */
export function documentCost(
  document: DocumentNode,
  variables?: Readonly<Record<string, unknown>> | null,
  options: QueryCostOptions = {},
): number {
  return documentMeasure(document, variables, options).cost;
}

/**
 * The points `document` costs with `variables`, and the values its answer may hold at most; when
 * several operations may run, the dearest of each.
 */
export function documentMeasure(
  document: DocumentNode,
  variables?: Readonly<Record<string, unknown>> | null,
  options: QueryCostOptions = {},
): DocumentMeasure {
  const schema = options.schema ?? serviceSchema;
  const fragments = new Map<string, FragmentDefinitionNode>();
  const operations: OperationDefinitionNode[] = [];
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    else if (definition.kind === Kind.OPERATION_DEFINITION) operations.push(definition);
  }
  const named = options.operationName ? operations.filter((op) => op.name?.value === options.operationName) : [];
  const candidates = named.length ? named : operations;
  const limits = { points: options.stopAbove ?? Infinity, values: options.stopAboveValues ?? Infinity };
  const measure = { cost: 1, values: 0 };
  for (const operation of candidates) {
    const { cost, values } = measureOperation(schema, operation, fragments, variables ?? {}, limits);
    measure.cost = Math.max(measure.cost, cost);
    measure.values = Math.max(measure.values, values);
  }
  return measure;
}

function measureOperation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: Readonly<Record<string, unknown>>,
  limits: WalkLimits,
): DocumentMeasure {
  const root = schema.getRootType(operation.operation);
  if (!root) return { cost: 1, values: 0 };
  const walker = new CostWalker(schema, fragments, variablesOf(operation, variables), limits);
  const { points, values, introspection } = walker.rootCost(operation.selectionSet, root);
  return { cost: Math.min(Number.MAX_SAFE_INTEGER, Math.max(1, points + (introspection ? 1 : 0))), values };
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

/**
 * What a selection costs per instance of the object it is selected on: list items, points of
 * INSTANCE_COST fields, and the values it puts in the answer.
 */
interface Tally {
  items: number;
  points: number;
  values: number;
}

/** The points and values of root fields, and whether introspection was selected. */
interface RootTally {
  points: number;
  values: number;
  introspection: boolean;
}

/** Where the walk stops: root fields priced so far over either. */
interface WalkLimits {
  points: number;
  values: number;
}

const NOTHING: Tally = { items: 0, points: 0, values: 0 };

const capped = (value: number) => Math.min(value, Number.MAX_SAFE_INTEGER);

/**
 * The walk of one operation. Each selection set is priced once per type and page size (a fragment
 * spread many times, or spread by fragments spread many times, is worked out at its first spread
 * and its price multiplied after), so the walk's time is linear in the document's size whatever
 * its spreads multiply: a spread still counts every time it is met, as before. A fragment spread
 * inside itself (a cycle, which validation refuses) counts nothing the second time. The recursion
 * follows the document's own nesting, which documentNesting (plugins/documentNesting.ts) bounds
 * before anything walks it.
 */
class CostWalker {
  /** Prices per selection set, by `type name|page size`. */
  private readonly tallies = new WeakMap<SelectionSetNode, Map<string, Tally>>();
  private readonly rootTallies = new WeakMap<SelectionSetNode, Map<string, RootTally>>();
  /** Fragments being priced (a cycle is followed once). */
  private readonly open = new Set<string>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>,
    private readonly variables: Readonly<Record<string, unknown>>,
    private readonly limits: WalkLimits,
  ) {}

  private over(tally: { points: number; values: number }): boolean {
    return tally.points > this.limits.points || tally.values > this.limits.values;
  }

  /** The points of the root fields a selection set selects (see QUERY_COST). */
  rootCost(selectionSet: SelectionSetNode, type: GraphQLCompositeType): RootTally {
    return this.memo(this.rootTallies, selectionSet, type.name, () => {
      const tally = { points: 0, values: 0, introspection: false };
      this.eachSelection(selectionSet, type, {
        field: (node, field) => {
          if (node.name.value === '__schema' || node.name.value === '__type') tally.introspection = true;
          if (field) {
            const { points, values } = this.rootField(node, field);
            tally.points = capped(tally.points + points);
            tally.values = capped(tally.values + values);
          } else tally.values = capped(tally.values + 1);
          return this.over(tally);
        },
        nested: (inner, on, times) => {
          const under = this.rootCost(inner, on);
          tally.points = capped(tally.points + under.points * times);
          tally.values = capped(tally.values + under.values * times);
          tally.introspection ||= under.introspection;
          return this.over(tally);
        },
      });
      return tally;
    });
  }

  private rootField(node: FieldNode, field: GraphQLField<unknown, unknown>): { points: number; values: number } {
    const { items, points, values } = this.fieldTally(node, field, undefined);
    const batch = this.batchSizeOf(node, field);
    return { points: Math.max(1, Math.ceil(items / QUERY_COST.itemsPerPoint), batch === undefined ? 0 : batchCost(batch)) + points, values };
  }

  /**
   * The list items `node` may return for one instance of its parent, with those of the fields
   * under it, and the points of the fields under it that cost per instance (INSTANCE_COST).
   * `pageSize` is the page size of the page object it belongs to, if any.
   */
  private fieldTally(node: FieldNode, field: GraphQLField<unknown, unknown>, pageSize: number | undefined): Tally {
    const own = field.extensions[INSTANCE_COST] as InstanceCost | undefined;
    const points = own ? own.points : 0;
    const named = getNamedType(field.type);
    const anyList = isListType(getNullableType(field.type));
    const whole = field.extensions[WHOLE_LIST] === true;
    if (isLeafType(named) || !isCompositeType(named)) return { items: 0, points, values: anyList ? 1 + (whole ? 1 : QUERY_COST.unpagedListSize) : 1 };
    const size = this.pageSizeOf(node, field);
    const list = anyList && !whole;
    // A list multiplies what is under it by its page; a page object hands its size to its lists.
    const instances = list ? (size ?? pageSize ?? QUERY_COST.unpagedListSize) : 1;
    const under = node.selectionSet ? this.tally(node.selectionSet, named, list ? undefined : size) : NOTHING;
    // In the answer, a whole list counts as one item (see QUERY_COST).
    const items = anyList ? (list ? instances : 1) : 0;
    return {
      items: capped((list ? instances : 0) + under.items * instances),
      points: capped(points + under.points * instances),
      values: capped(1 + items + under.values * Math.max(1, items)),
    };
  }

  /** The price of a selection set for one instance of `type` (fields, inline fragments, spreads). */
  private tally(selectionSet: SelectionSetNode, type: GraphQLCompositeType, pageSize: number | undefined): Tally {
    return this.memo(this.tallies, selectionSet, `${type.name}|${pageSize ?? ''}`, () => {
      const tally = { items: 0, points: 0, values: 0 };
      const add = (under: Tally, times: number) => {
        tally.items = capped(tally.items + under.items * times);
        tally.points = capped(tally.points + under.points * times);
        tally.values = capped(tally.values + under.values * times);
      };
      this.eachSelection(selectionSet, type, {
        field: (node, field) => add(field ? this.fieldTally(node, field, pageSize) : { ...NOTHING, values: 1 }, 1),
        nested: (inner, on, times) => add(this.tally(inner, on, pageSize), times),
      });
      return tally;
    });
  }

  /**
   * The selections of a set that are not skipped: fields (with their definition on `type`; none
   * for __typename and for fields the schema does not have, which validation refuses) and the
   * selection sets of inline fragments and spread fragments, each with its type. A fragment spread
   * more than once in the same set is handed over once with the number of its spreads.
   */
  private eachSelection(
    selectionSet: SelectionSetNode,
    type: GraphQLCompositeType,
    visit: {
      /** True: stop here (the walk is over the limit). */
      field: (node: FieldNode, field: GraphQLField<unknown, unknown> | undefined) => boolean | void;
      nested: (selectionSet: SelectionSetNode, on: GraphQLCompositeType, times: number) => boolean | void;
    },
  ): void {
    const spreads = new Map<string, number>();
    for (const selection of selectionSet.selections) {
      if (!this.included(selection.directives)) continue;
      if (selection.kind === Kind.FIELD) {
        const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[selection.name.value] : undefined;
        if (visit.field(selection, field)) return;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? this.schema.getType(selection.typeCondition.name.value) : type;
        if (on && isCompositeType(on) && visit.nested(selection.selectionSet, on, 1)) return;
      } else {
        spreads.set(selection.name.value, (spreads.get(selection.name.value) ?? 0) + 1);
      }
    }
    for (const [name, times] of spreads) {
      const fragment = this.fragments.get(name);
      if (!fragment || this.open.has(name)) continue;
      const on = this.schema.getType(fragment.typeCondition.name.value);
      if (!on || !isCompositeType(on)) continue;
      this.open.add(name);
      try {
        if (visit.nested(fragment.selectionSet, on, times)) return;
      } finally {
        this.open.delete(name);
      }
    }
  }

  private memo<T>(store: WeakMap<SelectionSetNode, Map<string, T>>, node: SelectionSetNode, key: string, make: () => T): T {
    let byKey = store.get(node);
    if (!byKey) store.set(node, (byKey = new Map()));
    const found = byKey.get(key);
    if (found !== undefined) return found;
    const made = make();
    byKey.set(key, made);
    return made;
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
