import { GraphQLError, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { BadRequestError } from '../../services/kernel/index.js';
import { measureOnce } from '../costOnce.js';
import { errorExtensions } from '../errors.js';
import { LIMIT_CODES, LIMIT_MESSAGES } from './limits.js';

/**
 * GRAPHQL_MAX_COST and GRAPHQL_MAX_ANSWER_VALUES: an operation whose documentCost (the points the
 * rate limit charges, with the request's variables: `first: $n` counts n) is over the limit, or
 * whose answer may hold more values than allowed (documentMeasure), is refused while validating,
 * before it runs or is charged (COST_LIMIT_EXCEEDED, ANSWER_LIMIT_EXCEEDED). The check follows
 * validation (a valid document only) on every request, cached validation results included; the refusal is thrown rather than added to the result, so
 * Yoga's validation cache, keyed by the document alone, never keeps it for other variables.
 * `onRefused` hears of each refusal (the operation metrics count it).
 */
export function costLimit(
  limits: { maxCost: number; maxAnswerValues: number },
  onRefused?: (document: DocumentNode, operationName: string | undefined) => void,
): Plugin {
  return {
    onValidate({ params: { documentAST, schema: validatedSchema }, context }) {
      return ({ valid }) => {
        if (!valid) return;
        const params = (context as { params?: { variables?: unknown; operationName?: unknown } }).params;
        const variables = params?.variables && typeof params.variables === 'object' ? (params.variables as Record<string, unknown>) : null;
        const operationName = typeof params?.operationName === 'string' ? params.operationName : undefined;
        const { cost, values } = measureOnce(context, documentAST, variables, {
          schema: validatedSchema,
          operationName,
          stopAbove: limits.maxCost,
          stopAboveValues: limits.maxAnswerValues,
        });
        // The walk stops at the first limit it passes, so the other figure may be short of the whole.
        const kind = cost > limits.maxCost ? 'cost' : values > limits.maxAnswerValues ? 'answer' : undefined;
        if (kind) {
          onRefused?.(documentAST, operationName);
          const [limit, found] = kind === 'cost' ? [limits.maxCost, cost] : [limits.maxAnswerValues, values];
          const refusal = new BadRequestError(LIMIT_CODES[kind], LIMIT_MESSAGES[kind](limit, found), { limit, found });
          throw new GraphQLError(refusal.message, {
            // As Yoga marks validation errors: 400 with application/graphql-response+json.
            extensions: errorExtensions(refusal, { spec: true }),
          });
        }
      };
    },
  };
}
