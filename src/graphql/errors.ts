import type { AppError } from '../services/kernel/index.js';

/**
 * The `extensions` of a GraphQL error standing for a kernel error: its code, its details (when it
 * has any) and, unless `http` is false, Yoga's HTTP hint with the error class's status and headers
 * (`spec`: as Yoga marks validation errors, 400 with application/graphql-response+json and 200
 * with plain application/json). The status comes from the class; nothing here writes one.
 */
export function errorExtensions(error: AppError, http: { spec?: boolean } | false = {}): Record<string, unknown> {
  const headers = Object.keys(error.headers).length ? { headers: error.headers } : {};
  return {
    code: error.code,
    ...(error.details !== null && { details: error.details }),
    ...(http && { http: { ...(http.spec && { spec: true }), status: error.status, ...headers } }),
  };
}
