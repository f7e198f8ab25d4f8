import { GraphQLError } from 'graphql';
import { AppError } from '../services/kernel/index.js';

export function maskError(error: unknown, _message: string): Error {
  // Executors may wrap an error more than once; the cause is at the bottom of the chain.
  let original: unknown = error;
  while (isGraphQLError(original) && original.originalError) original = original.originalError;
  const located = isGraphQLError(error) ? { nodes: error.nodes, path: error.path } : {};
  if (original instanceof AppError) {
    return new GraphQLError(original.message, {
      ...located,
      extensions: { code: original.code, details: original.details },
    });
  }
  // Errors graphql-js raised itself (syntax, validation, coercion) are meant for the client.
  if (isGraphQLError(original)) return original;
  return new GraphQLError('An internal error occurred; quote the request id to support', {
    ...located,
    extensions: { code: 'INTERNAL_ERROR' },
  });
}

/**
 * By tag rather than instanceof: graphql ships CommonJS and ESM builds, and an error made by one
 * is not an instance of the other's class.
 */
export function isGraphQLError(value: unknown): value is GraphQLError {
  return Object.prototype.toString.call(value) === '[object GraphQLError]';
}
