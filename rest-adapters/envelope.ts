import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ZodError } from 'zod';
import {
  AppError,
  BadRequestError,
  ConflictError,
  HttpRefusalError,
  InsufficientScopeError,
  InternalError,
  NotFoundError,
  NotImplementedError,
  PayloadTooLargeError,
  RateLimitError,
  RequestTimeoutError,
  ServiceUnavailableError,
  toAppError,
  TokenExpiredError,
  UnauthorizedError,
  UnprocessableError,
  UnsupportedMediaTypeError,
  UpstreamError,
  ValidationError,
  type FieldIssue,
} from '../src/services/kernel/index.js';
import { OAuthError } from '../src/services/access/index.js';
import { InsufficientBalanceError } from '../src/services/bookings/index.js';
import type { Level, Logger } from 'pino';
import type { HttpEnv } from './env.js';
import { credentialRefused, exchange } from './http.js';

/**
 * The envelopes of docs/spec/channel-api.md §2.1 and the one mapping from errors to responses. Every REST response,
 * success or failure, is shaped here.
 */

export function meta(c: Context<HttpEnv>) {
  return { request_id: c.get('requestId'), timestamp: new Date().toISOString() };
}

/** `{ data, ...extra, meta }` with the given status. */
export function ok<T, S extends ContentfulStatusCode = 200, E extends object = Record<never, never>>(
  c: Context<HttpEnv>,
  data: T,
  status: S = 200 as S,
  extra: E = {} as E,
) {
  return c.json({ data, ...extra, meta: meta(c) } as { data: T; meta: ReturnType<typeof meta> } & E, status);
}

/**
 * ok(c, data) with `data` already serialised (its JSON text): the same bytes and headers, for an
 * answer whose data is the same for many requests (a cached property) and is serialised once.
 */
export function okJson(c: Context<HttpEnv>, json: string): Response {
  return c.body(`{"data":${json},"meta":${JSON.stringify(meta(c))}}`, 200, { 'Content-Type': 'application/json' });
}

export function zodIssues(error: ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.join('.') : '(body)',
    reason: issue.message,
  }));
}

function fieldIssuesFrom(error: ZodError, target?: string): FieldIssue[] {
  return zodIssues(error).map((f) =>
    // A query or path parameter is named as it is sent.
    f.field === '(body)' && target && target !== 'json' && target !== 'form' ? { ...f, field: `(${target})` } : f,
  );
}

export function validationErrorFrom(error: ZodError, target?: string): ValidationError {
  return new ValidationError(fieldIssuesFrom(error, target));
}

/**
 * v2's name for a bad request (docs/spec/DECISIONS.md "v2 details"): 400 `INVALID_REQUEST`, with the same
 * `details.fields` as v1's VALIDATION_ERROR.
 */
export function invalidRequest(fields: FieldIssue[], message = 'The request is not valid'): AppError {
  return new BadRequestError('INVALID_REQUEST', message, { fields });
}

export function invalidRequestFrom(error: ZodError, target?: string): AppError {
  return invalidRequest(fieldIssuesFrom(error, target));
}

/**
 * An error as v2 answers it: v1's VALIDATION_ERROR (thrown by a service rule, or a malformed JSON
 * body) becomes INVALID_REQUEST with the same details; everything else is unchanged.
 */
export function v2Error(error: unknown): AppError {
  const appError = classify(error);
  return appError.code === 'VALIDATION_ERROR'
    ? new BadRequestError('INVALID_REQUEST', appError.message, appError.details)
    : appError;
}

/** Anything thrown while serving a request, as the client should see it. */
export function classify(error: unknown): AppError {
  if (error instanceof HTTPException) {
    // A refusal of ours raised through Hono's middleware (the request deadline).
    if (error.cause instanceof AppError) return error.cause;
    // Hono's own refusals: a body that is not the JSON it claims to be.
    if (error.status === ValidationError.status) return new ValidationError([{ field: '(body)', reason: 'malformed JSON' }]);
    // A JSON route sent another content type.
    if (error.status === UnsupportedMediaTypeError.status) return new UnsupportedMediaTypeError('application/json');
    return new HttpRefusalError(error.status, error.message || 'The request could not be processed');
  }
  return toAppError(error);
}

export function errorResponse(c: Context<HttpEnv>, error: unknown): Response {
  const appError = classify(error);
  logFailure(exchange(c), error, appError);
  for (const [name, value] of Object.entries(appError.headers)) c.header(name, value);
  c.header('X-Request-Id', c.get('requestId'));
  return c.json(errorBody(appError, c.get('requestId')), appError.status as ContentfulStatusCode);
}

/** The §2.1 error envelope of an error (also written where there is no Hono context: a refused upgrade). */
export function errorBody(error: AppError, requestId: string) {
  return {
    error: { code: error.code, message: error.message, details: error.details },
    meta: { request_id: requestId, timestamp: new Date().toISOString() },
  };
}

/** The RFC 6749 form of the token and revocation endpoints: `{ error, error_description }`. */
export function oauthErrorResponse(c: Context<HttpEnv>, error: unknown): Response {
  const appError = error instanceof OAuthError ? error : classify(error);
  logFailure(exchange(c), error, appError);
  for (const [name, value] of Object.entries(appError.headers)) c.header(name, value);
  if (!(appError instanceof OAuthError) && appError.status < 500) {
    const invalid = new OAuthError('invalid_request', appError.message);
    return c.json({ error: invalid.code, error_description: invalid.message }, invalid.status as ContentfulStatusCode);
  }
  // An outage (503, Retry-After) is RFC 6749's temporarily_unavailable; any other fault server_error.
  const code = appError instanceof OAuthError ? appError.code : appError.status === ServiceUnavailableError.status ? 'temporarily_unavailable' : 'server_error';
  return c.json({ error: code, error_description: appError.message }, appError.status as ContentfulStatusCode);
}

/**
 * A failure in the request's log (the request's logger: its id, and trace id with tracing on):
 * errors of the service at `error` with their stack; a missing or refused credential at `info`,
 * without a stack (credentialRefused); other refusals at `debug` (the logger child made only then).
 */
export function logFailure(ex: { readonly logger: Logger; logs(level: Level): boolean }, original: unknown, mapped: AppError): void {
  if (mapped.status >= 500) ex.logger.error({ err: original, code: mapped.code }, 'request failed');
  else if (mapped.status === UnauthorizedError.status) credentialRefused(ex, mapped);
  else if (ex.logs('debug')) ex.logger.debug({ code: mapped.code }, 'request refused');
}

// OpenAPI components of the envelopes.
export const Meta = z
  .object({ request_id: z.uuid(), timestamp: z.iso.datetime() })
  .openapi('Meta');

export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'VALIDATION_ERROR' }),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).nullable(),
    }),
    meta: Meta,
  })
  .openapi('ErrorEnvelope');

export function dataEnvelope<T extends z.ZodType>(schema: T) {
  return z.object({ data: schema, meta: Meta });
}

/** What each error status means on every route; a route may say more (a tuple in errorResponses). */
export const errorDescriptions: Readonly<Record<number, string>> = {
  [ValidationError.status]: 'VALIDATION_ERROR: the request is not valid; details.fields lists each bad field with a reason',
  [UnauthorizedError.status]: 'UNAUTHORIZED: no credential, or an unknown or revoked key, a revoked or expired token or a suspended app',
  [InsufficientBalanceError.status]: 'INSUFFICIENT_BALANCE: the channel balance does not cover the charge (production only); details.required and details.available',
  [InsufficientScopeError.status]: 'INSUFFICIENT_SCOPE: the credential lacks a scope of this route (details.required_scope names it); IP_NOT_ALLOWED: the caller\'s address is outside its app\'s IP allow list (details.client_ip); HTTPS_REQUIRED: plain HTTP is refused',
  [NotFoundError.status]: 'NOT_FOUND: no such resource of this channel (another channel\'s resource is also 404)',
  [ConflictError.status]: 'Conflict with the current state',
  [TokenExpiredError.status]: 'TOKEN_EXPIRED: search again for a new token',
  [PayloadTooLargeError.status]: 'PAYLOAD_TOO_LARGE: the request body exceeds the limit (1 MiB by default; details.limit_bytes)',
  [UnsupportedMediaTypeError.status]: 'UNSUPPORTED_MEDIA_TYPE: the request body is not sent as application/json',
  [UnprocessableError.status]: 'The request is well-formed but cannot be processed',
  [RateLimitError.status]: 'RATE_LIMIT_EXCEEDED: too many requests for the channel\'s tier; retry after Retry-After seconds (details.retry_after)',
  [InternalError.status]: 'INTERNAL_ERROR: a fault of the service, masked; quote meta.request_id to support',
  [NotImplementedError.status]: 'NOT_IMPLEMENTED',
  [UpstreamError.status]: 'UPSTREAM_ERROR: the inventory provider failed or did not answer in time',
  [ServiceUnavailableError.status]: 'SERVICE_UNAVAILABLE: the instance is shutting down, or the database is unreachable (Retry-After, details.retry_after; details.booking_id names a booking whose outcome is being settled); retry',
  [RequestTimeoutError.status]: 'REQUEST_TIMEOUT: no answer within the request deadline (30 s by default); the work may still complete: look before repeating it (requests with an Idempotency-Key are never cut off)',
};

export const v2ErrorDescriptions: Readonly<Record<number, string>> = {
  ...errorDescriptions,
  [BadRequestError.status]: 'INVALID_REQUEST: a missing or malformed parameter (details.fields lists each)',
  [InsufficientScopeError.status]: 'INSUFFICIENT_SCOPE (details.required_scope), IP_NOT_ALLOWED or HTTPS_REQUIRED',
  [ConflictError.status]: 'TOKEN_ALREADY_USED: restart at step 1; or a conflict with the current state',
  [TokenExpiredError.status]: 'TOKEN_EXPIRED: restart at step 1',
};

/** An error class, whose status is read without an instance (services/kernel/errors.ts, a domain's errors.ts). */
export interface ErrorClass<S extends number = number> {
  readonly status: S;
}

/** An error class, or an error class with what its status means on this route. */
export type ErrorStatus = ErrorClass | readonly [error: ErrorClass, description: string];

function responsesOf(descriptions: Readonly<Record<number, string>>, statuses: ErrorStatus[]) {
  return Object.fromEntries(
    statuses.map((entry) => {
      const [status, description] = 'status' in entry ? [entry.status, descriptions[entry.status] ?? 'Error'] : [entry[0].status, entry[1]];
      return [status, { description, content: { 'application/json': { schema: ErrorEnvelope } } }];
    }),
  );
}

/**
 * One OpenAPI `responses` entry under the status of an error class, for a response that is not
 * the error envelope (the RFC 6749 form of the token endpoints): spread it into `responses`.
 */
export function errorResponseOf<S extends number, R>(error: ErrorClass<S>, response: R): { [K in S]: R } {
  return { [error.status]: response } as { [K in S]: R };
}

/**
 * OpenAPI `responses` entries for the given error statuses, all in the error envelope. A tuple
 * `[ConflictError, 'BOOKING_ALREADY_CANCELLED or ...']` names the codes of that route. A route lists only its
 * own: scopedRoute (rest-adapters/routing.ts) adds 401, 403 and 429 to every scoped route, and the
 * statuses every route can answer (403 HTTPS_REQUIRED, 413 for a body, 415 for a JSON body, 500, 503, 504)
 * are added to each operation by the document itself (rest-adapters/docs.ts).
 */
export function errorResponses(...statuses: ErrorStatus[]) {
  return responsesOf(errorDescriptions, statuses);
}

/** The same for v2 routes, whose codes differ (INVALID_REQUEST, the token errors of docs/spec/channel-api.md §7). */
export function v2ErrorResponses(...statuses: ErrorStatus[]) {
  return responsesOf(v2ErrorDescriptions, statuses);
}
