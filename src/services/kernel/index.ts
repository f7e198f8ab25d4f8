/**
 * The public face of the kernel: what every module shares (errors and their status codes, money,
 * text, HTML, IP ranges, the principal and call options of a request, shared enumerations, Prisma
 * error mapping). Other modules import only this file.
 */
export {
  AMENITY_GROUPS,
  CANCELLATION_POLICY_TYPES,
  DEFAULT_LANGUAGE,
  IMAGE_CATEGORIES,
  IMAGE_SIZES,
  IMAGE_WIDTHS,
  LANGUAGES,
  MEAL_PLANS,
  ROOM_VIEWS,
  type AmenityGroup,
  type ImageCategory,
  type ImageSize,
  type Language,
  type RoomView,
  PROVIDER_BOOKING_STATUSES,
  VISIBLE_BOOKING_STATUSES,
  type CancellationPolicyType,
  type MealPlan,
  type ProviderBookingStatus,
  type VisibleBookingStatus,
} from './enums.js';
export { EnvironmentMismatchError, checkEnvironment, claimEnvironment, type Environment } from './environment.js';
export {
  AppError,
  ConfigError,
  BadRequestError,
  ConflictError,
  DatabaseUnavailableError,
  ForbiddenError,
  HttpRefusalError,
  HttpsRequiredError,
  InsufficientScopeError,
  InternalError,
  InvalidTokenError,
  IpNotAllowedError,
  MethodNotAllowedError,
  NotFoundError,
  NotAcceptableError,
  NotImplementedError,
  PayloadTooLargeError,
  RateLimitError,
  RequestTimeoutError,
  ServiceUnavailableError,
  SubscriptionLimitError,
  TokenExpiredError,
  UnauthorizedError,
  UnprocessableError,
  UnsupportedMediaTypeError,
  UpstreamError,
  ValidationError,
  toAppError,
  ERROR_CODES,
  OUTAGE_RETRY_AFTER_SECONDS,
  type ErrorCode,
  type ErrorDetails,
  type FieldIssue,
} from './errors.js';
export { escapeHtml } from './html.js';
export { ACCEPT_LANGUAGE_MAX_CHARS, isLanguage, languageOf, negotiateLanguage, textIn, type LocalizedText } from './language.js';
export { clientAddress, isHttps, isInRanges, isLoopback, normalizeIpEntry, type ConnectionFacts } from './ipRanges.js';
export {
  CURRENCIES,
  MINOR_DIGITS,
  amountToNumber,
  convertFromKrw,
  currencySchema,
  positiveAmount,
  type Amount,
  type Currency,
} from './money.js';
export { callOptions, principalOf } from './principal.js';
export { addTraceSource, currentTraceparent } from './traceContext.js';
export { againWhenUnavailable, isDatabaseUnavailable, isUniqueViolation, rowForSql } from './prisma.js';
export { isUuid, rowsById } from './ids.js';
export { cursorOf, keysetQuery, keysetSql, positionOf, type CursorWindow, type ListOrder, type Position, type WindowedList } from './keyset.js';
export { storableText } from './text.js';
