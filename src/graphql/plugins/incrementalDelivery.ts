import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  OverlappingFieldsCanBeMergedRule,
  specifiedRules,
  visit,
  type DirectiveNode,
  type DocumentNode,
  type ValidationRule,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { acceptsIncrementalDelivery } from '../accept.js';

/**
 * @defer and @stream (docs/decisions.md "Incremental delivery"). Yoga's useDeferStream adds the
 * directives to the schema (the served schema already has them: src/graphql/schema.ts) and their
 * validation rules, and its executor delivers the deferred fragments and streamed items as
 * payloads after the first. This plugin, next to it, settles what it leaves open:
 *
 * - Transports. Over HTTP a result of several payloads needs a response that carries them:
 *   `Accept: multipart/mixed` or `text/event-stream` (Yoga's own rule when it picks the response).
 *   A request accepting neither (JSON only) gets the whole result in one JSON response: the
 *   operation runs without its @defer and @stream, as the defer/stream proposal lets a server do
 *   (clients must accept a response that ignores them), instead of running and then being refused.
 *   graphql-ws carries each payload as a `next` message, so it always gets them incrementally.
 * - Subscriptions. @defer and @stream are not supported in a subscription (the proposal, and
 *   graphql-js 17's DeferStreamDirectiveOnValidOperationsRule): one that uses them without turning
 *   them off (`if: false`, or `if: $variable`) is refused while validating, with a message saying
 *   so. A subscription never delivers incrementally: a directive left on by a variable is ignored.
 * - Validation rules. useDeferStream means its OverlappingFieldsCanBeMergedRule (which also
 *   compares @stream arguments) to replace graphql-js's, but it drops graphql-js's from a copy of
 *   the rule list that envelop does not validate with, so both ran and every field conflict was
 *   reported twice; graphql-js's is taken out of the list here.
 */
export function incrementalDelivery(): Plugin {
  return {
    onValidate({ params, addValidationRule }) {
      // The list envelop validates with (Yoga's engine put graphql-js's rules in it first).
      const rules: ValidationRule[] = params.rules ?? [];
      const own = rules.indexOf(OverlappingFieldsCanBeMergedRule);
      if (own >= 0 && rules.some((rule, i) => i !== own && rule.name === OverlappingFieldsCanBeMergedRule.name)) rules.splice(own, 1);
      addValidationRule(NoDeferStreamInSubscriptionsRule);
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      if (withoutDeferStream(args.document) === args.document || deliversIncrementally(args.contextValue)) return;
      setExecuteFn((execution) => executeFn({ ...execution, document: withoutDeferStream(execution.document) }));
    },
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      if (withoutDeferStream(args.document) === args.document) return;
      setSubscribeFn((subscription) => subscribeFn({ ...subscription, document: withoutDeferStream(subscription.document) }));
    },
  };
}

/**
 * Whether the transport of an operation can carry a result of several payloads: over HTTP, when
 * the request accepts multipart/mixed or text/event-stream; over graphql-ws (which runs operations
 * with the upgrade request, a Node IncomingMessage without a fetch Headers), always.
 */
function deliversIncrementally(context: unknown): boolean {
  const request = (context as { request?: { headers?: { get?: unknown } } } | null | undefined)?.request;
  if (typeof request?.headers?.get !== 'function') return true;
  return acceptsIncrementalDelivery(request as Request);
}

const INCREMENTAL_DIRECTIVES: ReadonlySet<string> = new Set(['defer', 'stream']);

const inlined = new WeakMap<DocumentNode, DocumentNode>();

/**
 * The document without its @defer and @stream: the same fields, merged as the spec merges a
 * fragment, delivered at once. Validation ran on the document as sent; removing these directives
 * cannot make it invalid. Kept per document (Yoga caches parsed documents, so one text is one
 * node), and the document itself when it has none.
 */
export function withoutDeferStream(document: DocumentNode): DocumentNode {
  let plain = inlined.get(document);
  if (!plain) {
    plain = visit(document, { Directive: (node) => (INCREMENTAL_DIRECTIVES.has(node.name.value) ? null : undefined) });
    inlined.set(document, plain);
  }
  return plain;
}

/**
 * @defer and @stream are refused in a subscription operation, and in the fragments it uses,
 * unless `if` turns them off (`false`, or a variable). On the subscription's root field
 * useDeferStream's own rule refuses them already ("cannot be used on root subscription type").
 */
export const NoDeferStreamInSubscriptionsRule: ValidationRule = (context) => {
  const subscriptionType = context.getSchema().getSubscriptionType();
  // Collected before the directives are visited: a fragment may be defined before the operation.
  const fragmentsOfSubscriptions = new Set<string>();
  return {
    Document(document) {
      for (const definition of document.definitions) {
        if (definition.kind !== Kind.OPERATION_DEFINITION || definition.operation !== OperationTypeNode.SUBSCRIPTION) continue;
        for (const fragment of context.getRecursivelyReferencedFragments(definition)) fragmentsOfSubscriptions.add(fragment.name.value);
      }
    },
    Directive(node, _key, _parent, _path, ancestors) {
      if (!INCREMENTAL_DIRECTIVES.has(node.name.value) || canBeOff(node)) return;
      if (subscriptionType && context.getParentType() === subscriptionType) return;
      const definition = ancestors[2];
      const inSubscription =
        definition !== undefined &&
        'kind' in definition &&
        ((definition.kind === Kind.OPERATION_DEFINITION && definition.operation === OperationTypeNode.SUBSCRIPTION) ||
          (definition.kind === Kind.FRAGMENT_DEFINITION && fragmentsOfSubscriptions.has(definition.name.value)));
      if (!inSubscription) return;
      context.reportError(
        new GraphQLError(
          `@${node.name.value} is not supported in a subscription: every event is delivered whole; remove it, or turn it off with \`if: false\``,
          { nodes: node },
        ),
      );
    },
  };
};

/** Whether the directive's `if` argument is `false` or a variable (which may be false). */
function canBeOff(node: DirectiveNode): boolean {
  const condition = node.arguments?.find((argument) => argument.name.value === 'if')?.value;
  return condition !== undefined && ((condition.kind === Kind.BOOLEAN && !condition.value) || condition.kind === Kind.VARIABLE);
}

/**
 * Every rule an operation is validated with on this server (graphql-js's, useDeferStream's in place
 * of graphql-js's field-merging rule, and the subscription rule above), for documents validated
 * outside a request: persisted operations, when the service starts. useDeferStream does not export
 * its rules; its validation hook hands them over.
 */
export function servedValidationRules(): readonly ValidationRule[] {
  const added: ValidationRule[] = [];
  const collect = { params: { rules: [] }, addValidationRule: (rule: ValidationRule) => added.push(rule) };
  useDeferStream().onValidate?.(collect as unknown as Parameters<NonNullable<Plugin['onValidate']>>[0]);
  return [...specifiedRules.filter((rule) => rule !== OverlappingFieldsCanBeMergedRule), ...added, NoDeferStreamInSubscriptionsRule];
}
