import { GraphQLError, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { BadRequestError } from '../../services/kernel/index.js';
import { costOnce } from '../costOnce.js';
import { errorExtensions } from '../errors.js';
import { LIMIT_CODES, LIMIT_MESSAGES } from './limits.js';

/**
 * GRAPHQL_MAX_COST: an operation whose documentCost (the points the rate limit charges, with the
 * request's variables: `first: $n` counts n) is over the limit is refused while validating, before
 * it runs or is charged. The check follows validation (a valid document only) on every request,
 * cached validation results included; the refusal is thrown rather than added to the result, so
 * Yoga's validation cache, keyed by the document alone, never keeps it for other variables.
 * `onRefused` hears of each refusal (the operation metrics count it).
 */
export function costLimit(limit: number, onRefused?: (document: DocumentNode, operationName: string | undefined) => void): Plugin {
  return {
    onValidate({ params: { documentAST, schema: validatedSchema }, context }) {
      return ({ valid }) => {
        if (!valid) return;
        const params = (context as { params?: { variables?: unknown; operationName?: unknown } }).params;
        const variables = params?.variables && typeof params.variables === 'object' ? (params.variables as Record<string, unknown>) : null;
        const operationName = typeof params?.operationName === 'string' ? params.operationName : undefined;
        const cost = costOnce(context, documentAST, variables, { schema: validatedSchema, operationName, stopAbove: limit });
        if (cost > limit) {
          onRefused?.(documentAST, operationName);
          const refusal = new BadRequestError(LIMIT_CODES.cost, LIMIT_MESSAGES.cost(limit, cost), { limit, found: cost });
          throw new GraphQLError(refusal.message, {
            // As Yoga marks validation errors: 400 with application/graphql-response+json.
            extensions: errorExtensions(refusal, { spec: true }),
          });
        }
      };
    },
  };
}
