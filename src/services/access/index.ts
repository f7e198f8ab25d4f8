/**
 * The public face of access: credentials, tokens, OAuth, scopes, secrets and rate limits. Other
 * modules import only this file.
 */
export { MAX_IP_ALLOW_LIST, appRules, getOwnApp, replaceOwnIpAllowList, type AppView } from './apps.js';
export {
  CREDENTIAL_MAX_CHARS,
  CredentialCache,
  authenticate,
  createCredentialCache,
  type CredentialChange,
  type CredentialHeaders,
  type Principal,
} from './auth.js';
export { OAuthError, issueAccessToken, revokeAccessToken, type OAuthErrorCode } from './oauth.js';
export {
  ChannelRateLimits,
  addressRefusal,
  batchCost,
  createRateLimiter,
  rateLimitHeaders,
  type RateDecision,
  type RateLimiter,
} from './rateLimits.js';
export { SCOPES, missingScope, requiredScopes, sortScopes, type Scope, type ScopeRequirement } from './scopes.js';
export { PREFIX, digest, matchesDigest, newSecret } from './secrets.js';
export {
  TokenError,
  TokenSigner,
  derivedSigningKey,
  offerClaims,
  type OfferClaims,
  type TokenFailure,
} from './tokens.js';
export { OPERATIONS, operationOf, operationScopes, scopesOf, type Operation } from './operations.js';
