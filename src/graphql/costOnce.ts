import type { DocumentNode } from 'graphql';
import { documentMeasure, type DocumentMeasure, type QueryCostOptions } from './cost.js';

/** The cost already worked out for an operation's context (the cost limit's), so the rate limit does not walk the document again. */
const known = new WeakMap<object, { document: DocumentNode; variables: unknown; operationName: unknown; measure: DocumentMeasure }>();

/**
 * documentMeasure (cost.ts), once per operation: the cost limit (while validating) and the rate limit
 * (when the operation runs over HTTP, or when it is subscribed over graphql-ws) ask for the same
 * document, variables and operation name in one GraphQL context (envelop's: the object
 * getEnveloped was given, which the context factory extends). No variables and no operation
 * name are the same however they are spelt (null or undefined).
 */
export function measureOnce(
  context: unknown,
  document: DocumentNode,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  options: QueryCostOptions = {},
): DocumentMeasure {
  const key = typeof context === 'object' && context !== null ? context : null;
  const found = key ? known.get(key) : undefined;
  const given = variables ?? null;
  const operationName = options.operationName ?? undefined;
  if (found && found.document === document && found.variables === given && found.operationName === operationName) return found.measure;
  const measure = documentMeasure(document, given, options);
  if (key) known.set(key, { document, variables: given, operationName, measure });
  return measure;
}
