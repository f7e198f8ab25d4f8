import { GraphQLError } from 'graphql';
import { AppError, toAppError } from '../services/kernel/index.js';

export function maskError(error: unknown, _message: string): Error {
  // Executors may wrap an error more than once; the cause is at the bottom of the chain.
  let original: unknown = error;
  while (isGraphQLError(original) && original.originalError) original = original.originalError;
  const located = isGraphQLError(error) ? { nodes: error.nodes, path: error.path } : {};
  // Errors graphql-js raised itself (syntax, validation, coercion) are meant for the client.
  if (!(original instanceof AppError) && isGraphQLError(original)) return original;
  // A kernel error as it is; a database outage as 503 SERVICE_UNAVAILABLE; anything else masked.
  const mapped = toAppError(original);
  const masked = !(original instanceof AppError) && mapped.code === 'INTERNAL_ERROR';
  return new GraphQLError(mapped.message, {
    ...located,
    extensions: masked ? { code: mapped.code } : { code: mapped.code, details: mapped.details },
  });
}

/**
 * By tag rather than instanceof: graphql ships CommonJS and ESM builds, and an error made by one
 * is not an instance of the other's class.
 */
export function isGraphQLError(value: unknown): value is GraphQLError {
  return Object.prototype.toString.call(value) === '[object GraphQLError]';
}
