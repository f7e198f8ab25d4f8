/**
 * The one error hierarchy of the service. Services throw these; REST maps them in
 * rest-adapters/envelope.ts and GraphQL carries `code` and `details` in `extensions`.
 * No other place decides a status code.
 */

import { isDatabaseUnavailable } from './prisma.js';

/** A configuration the process refuses to start with (src/config.ts, the environment check). */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type ErrorDetails = Record<string, unknown> | null;

/**
 * Every code the API answers in REST's `error.code` and GraphQL's `extensions.code` (and so
 * `DomainError.code`, the GraphQL enum ErrorCode), written once. A code an error is made with must be
 * one of these (the constructors take ErrorCode), so the list cannot fall behind. The RFC 6749
 * codes of the token endpoint (OAuthError, lower case) are not in it: they have their own form.
 */
export const ERROR_CODES = [
  // The request
  'VALIDATION_ERROR',
  'INVALID_REQUEST',
  'BAD_REQUEST',
  'BAD_USER_INPUT',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'NOT_ACCEPTABLE',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  // Credentials and transport
  'UNAUTHORIZED',
  'INSUFFICIENT_SCOPE',
  'FORBIDDEN',
  'HTTPS_REQUIRED',
  'IP_NOT_ALLOWED',
  'IP_ALLOW_LIST_LOCKOUT',
  'CSRF_PREVENTION',
  'RATE_LIMIT_EXCEEDED',
  // GraphQL documents (Yoga's own codes, the limits, persisted operations, introspection)
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'DEPTH_LIMIT_EXCEEDED',
  'ALIAS_LIMIT_EXCEEDED',
  'TOKEN_LIMIT_EXCEEDED',
  'DIRECTIVE_LIMIT_EXCEEDED',
  'COST_LIMIT_EXCEEDED',
  'ANSWER_LIMIT_EXCEEDED',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_ONLY',
  'QUERY_REQUIRED',
  'INTROSPECTION_DISABLED',
  'SUBSCRIPTION_LIMIT_EXCEEDED',
  // Search, tokens and bookings
  'INVALID_TOKEN',
  'TOKEN_EXPIRED',
  'TOKEN_ALREADY_USED',
  'BOOK_TOKEN_USED',
  'BOOK_TOKEN_INVALID',
  'BOOK_TOKEN_EXPIRED',
  'SOLD_OUT',
  'PRICE_CHANGED',
  'INSUFFICIENT_BALANCE',
  'BOOKING_ALREADY_CANCELLED',
  'BOOKING_NOT_CANCELLABLE',
  'BOOKING_NOT_MODIFIABLE',
  'BOOKING_CHANGED',
  'INVALID_TRANSITION',
  'MODIFICATION_NOT_ALLOWED',
  'MODIFICATION_IN_PROGRESS',
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_KEY_IN_PROGRESS',
  // Vouchers and webhooks
  'VOUCHER_MAIL_LIMIT_EXCEEDED',
  'VOUCHER_RECIPIENT_NOT_ALLOWED',
  'MAIL_DELIVERY_FAILED',
  'MESSAGE_TOO_LARGE',
  'WEBHOOK_LIMIT_REACHED',
  'WEBHOOK_DISABLED',
  'DELIVERY_PENDING',
  'DELIVERY_HELD',
  // The service
  'NOT_IMPLEMENTED',
  'UPSTREAM_ERROR',
  'SERVICE_UNAVAILABLE',
  'REQUEST_TIMEOUT',
  'INTERNAL_ERROR',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly status: number,
    /** One of ERROR_CODES; a lower-case code is an RFC 6749 code of the token endpoint (OAuthError). */
    readonly code: ErrorCode | Lowercase<string>,
    message: string,
    readonly details: ErrorDetails = null,
    /** Extra response headers the error implies (Retry-After, WWW-Authenticate). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export interface FieldIssue {
  field: string;
  reason: string;
}

export class ValidationError extends AppError {
  static readonly status = 400;
  constructor(fields: FieldIssue[], message = 'The request is not valid') {
    super(ValidationError.status, 'VALIDATION_ERROR', message, { fields });
  }
}

export class UnauthorizedError extends AppError {
  static readonly status = 401;
  constructor(message = 'Authentication is required: send X-Api-Key or Authorization: Bearer') {
    super(UnauthorizedError.status, 'UNAUTHORIZED', message, null, { 'WWW-Authenticate': 'Bearer realm="channel"' });
  }
}

export class InsufficientScopeError extends AppError {
  static readonly status = 403;
  constructor(requiredScope: string) {
    super(InsufficientScopeError.status, 'INSUFFICIENT_SCOPE', `This credential lacks the scope ${requiredScope}`, {
      required_scope: requiredScope,
    });
  }
}

export class ForbiddenError extends AppError {
  static readonly status = 403;
  constructor(message = 'This operation is not allowed for this credential', code: ErrorCode = 'FORBIDDEN') {
    super(ForbiddenError.status, code, message);
  }
}

/** REQUIRE_HTTPS: the request came over plain HTTP (docs/spec/channel-api.md §5.7). */
export class HttpsRequiredError extends AppError {
  static readonly status = 403;
  constructor() {
    super(HttpsRequiredError.status, 'HTTPS_REQUIRED', 'Plain HTTP is refused; call the same URL with https://');
  }
}

/** The caller's address is outside its app's IP allow list (docs/spec/channel-api.md §5.7). */
export class IpNotAllowedError extends AppError {
  static readonly status = 403;
  constructor(address: string | undefined) {
    super(IpNotAllowedError.status, 'IP_NOT_ALLOWED', `Requests of this app are not accepted from ${address ?? 'this address'}`, {
      client_ip: address ?? null,
    });
  }
}

export class NotFoundError extends AppError {
  static readonly status = 404;
  constructor(message = 'The requested resource was not found') {
    super(NotFoundError.status, 'NOT_FOUND', message);
  }
}

/** A method the path does not serve (PUT, PATCH, DELETE on /graphql); Allow names those it does. */
export class MethodNotAllowedError extends AppError {
  static readonly status = 405;
  constructor(method: string, path: string, allowed: readonly string[]) {
    super(MethodNotAllowedError.status, 'METHOD_NOT_ALLOWED', `${path} does not answer ${method}; use ${allowed.join(', ')}`, { allowed: [...allowed] }, {
      Allow: allowed.join(', '),
    });
  }
}

export class ConflictError extends AppError {
  static readonly status = 409;
  constructor(code: ErrorCode, message: string, details: ErrorDetails = null) {
    super(ConflictError.status, code, message, details);
  }
}

/** A well-formed request the current state refuses (a used, invalid or expired book_token). */
export class UnprocessableError extends AppError {
  static readonly status = 422;
  constructor(code: ErrorCode, message: string, details: ErrorDetails = null) {
    super(UnprocessableError.status, code, message, details);
  }
}

/** A flow token (price-check, book, v2 link) that is malformed, altered, of another kind or channel. */
export class InvalidTokenError extends AppError {
  static readonly status = 400;
  constructor(message = 'The token is not valid; search again for a new one') {
    super(InvalidTokenError.status, 'INVALID_TOKEN', message);
  }
}

export class TokenExpiredError extends AppError {
  static readonly status = 410;
  constructor(message = 'The token has expired; search again for a new one') {
    super(TokenExpiredError.status, 'TOKEN_EXPIRED', message);
  }
}

export class PayloadTooLargeError extends AppError {
  static readonly status = 413;
  constructor(limitBytes: number, message = `The request body exceeds ${limitBytes} bytes`) {
    super(PayloadTooLargeError.status, 'PAYLOAD_TOO_LARGE', message, { limit_bytes: limitBytes });
  }
}

export class UnsupportedMediaTypeError extends AppError {
  static readonly status = 415;
  constructor(expected: string, message = `The request body must be ${expected}`) {
    super(UnsupportedMediaTypeError.status, 'UNSUPPORTED_MEDIA_TYPE', message);
  }
}

/**
 * A request the protocol refuses before any domain rule, with a code of its own (GraphQL: a
 * malformed parameter or variable, a persisted operation missing, a cost over the limit).
 */
export class BadRequestError extends AppError {
  static readonly status = 400;
  constructor(code: ErrorCode, message: string, details: ErrorDetails = null) {
    super(BadRequestError.status, code, message, details);
  }
}

/**
 * A refusal the HTTP framework raised itself (Hono's HTTPException) with a status of its own
 * choosing, other than the malformed body (400) and content type (415) mapped to their classes.
 */
export class HttpRefusalError extends AppError {
  constructor(status: number, message: string) {
    super(status, 'BAD_REQUEST', message);
  }
}

/** No media type the Accept header allows can carry the answer (GraphQL: a subscription asked for as JSON). */
export class NotAcceptableError extends AppError {
  static readonly status = 406;
  constructor(code: ErrorCode, message: string, details: ErrorDetails = null) {
    super(NotAcceptableError.status, code, message, details);
  }
}

export class RateLimitError extends AppError {
  static readonly status = 429;
  constructor(retryAfterSeconds: number, message = 'Too many requests; retry later', details: Record<string, unknown> = {}) {
    super(RateLimitError.status, 'RATE_LIMIT_EXCEEDED', message, { retry_after: retryAfterSeconds, ...details }, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

/**
 * SUBSCRIPTIONS_MAX_PER_CONNECTION, SUBSCRIPTIONS_MAX_PER_CHANNEL or SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CHANNEL
 * reached (GraphQL only: extensions.code and details.limit, or a graphql-ws close reason).
 */
export class SubscriptionLimitError extends AppError {
  static readonly status = 429;
  constructor(message: string, limit: number) {
    super(SubscriptionLimitError.status, 'SUBSCRIPTION_LIMIT_EXCEEDED', message, { limit });
  }
}

export class NotImplementedError extends AppError {
  static readonly status = 501;
  constructor(message = 'This endpoint is not implemented') {
    super(NotImplementedError.status, 'NOT_IMPLEMENTED', message);
  }
}

export class UpstreamError extends AppError {
  static readonly status = 502;
  constructor(message = 'The inventory provider failed to answer', details: ErrorDetails = null) {
    super(UpstreamError.status, 'UPSTREAM_ERROR', message, details);
  }
}

export class ServiceUnavailableError extends AppError {
  static readonly status = 503;
  constructor(message = 'The service is shutting down or not ready', details: ErrorDetails = null, headers: Readonly<Record<string, string>> = {}) {
    super(ServiceUnavailableError.status, 'SERVICE_UNAVAILABLE', message, details, headers);
  }
}

/**
 * Seconds a client waits before retrying after an outage of the database (Retry-After and
 * `details.retry_after`): about a restart of PostgreSQL, and more than the recovery pass
 * (BOOKING_RECOVERY_INTERVAL_MS) needs to settle what the outage cut short once it is back.
 */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

/**
 * The database could not be reached or the connection was lost (isDatabaseUnavailable): an
 * outage, which a retry after Retry-After may not meet. `bookingId`: a booking the request wrote
 * before the outage, whose outcome is being settled (read it; it reads `pending` until then).
 */
export class DatabaseUnavailableError extends ServiceUnavailableError {
  constructor(bookingId?: string) {
    super(
      bookingId
        ? `The database became unreachable while booking ${bookingId} was being recorded; it reads pending until its outcome is settled: read it, or retry after Retry-After seconds`
        : 'The database is unreachable for now; retry after Retry-After seconds',
      { retry_after: OUTAGE_RETRY_AFTER_SECONDS, ...(bookingId && { booking_id: bookingId }) },
      { 'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS) },
    );
  }
}

/** The request ran past REQUEST_TIMEOUT_MS; work it started may still finish. */
export class RequestTimeoutError extends AppError {
  static readonly status = 504;
  constructor(timeoutMs: number) {
    super(
      RequestTimeoutError.status,
      'REQUEST_TIMEOUT',
      `The request did not finish within ${timeoutMs} ms; its work may still complete: look for its result before repeating it (writes sent with an Idempotency-Key are never cut off)`,
      { timeout_ms: timeoutMs },
    );
  }
}

/** Anything that is not an AppError, as a client may see it: masked. */
export class InternalError extends AppError {
  static readonly status = 500;
  constructor(message = 'An internal error occurred; quote the request id to support') {
    super(InternalError.status, 'INTERNAL_ERROR', message);
  }
}

/** What a client may see of any error: AppErrors as they are, a database outage as 503, anything else masked. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  // A database outage is not a fault of the service's code: 503 with Retry-After (prisma.ts).
  if (isDatabaseUnavailable(error)) return new DatabaseUnavailableError();
  return new InternalError();
}
