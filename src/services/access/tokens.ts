import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { errors as joseErrors, jwtVerify } from 'jose';
import { z } from 'zod';
import type { Config } from '../../config.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { CANCELLATION_POLICY_TYPES, type Environment, currencySchema } from '../kernel/index.js';

/**
 * Flow tokens (v1 price_check_token and book_token, v2 link tokens) are JWTs signed with HS256
 * under the key of the instance's environment (a sandbox's tokens are refused in production). They carry the server-side offer (property, room, rate, party,
 * dates, KRW amounts), the channel they were issued to and their expiry, so a client can neither
 * forge nor alter one. Each surface maps a TokenError to its own status (docs/spec/channel-api.md §3.2, §7).
 * v2 page tokens (kind `v2_page`) and GraphQL's catalog cursors (kind `catalog_cursor`) are signed
 * the same way and carry the provider's cursor.
 */

export const TOKEN_KINDS = ['price_check', 'book', 'v2_price_check', 'v2_book', 'v2_retrieve', 'v2_cancel', 'v2_page', 'catalog_cursor'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

export type TokenFailure = 'malformed' | 'wrong_type' | 'expired' | 'foreign';

export class TokenError extends Error {
  override name = 'TokenError';
  constructor(readonly reason: TokenFailure) {
    super(`token ${reason}`);
  }
}

const occupancy = z.array(z.object({ adults: z.int().min(1), children_ages: z.array(z.int().min(0).max(17)) })).min(1);

/** The offer a price-check or book token stands for. Amounts are KRW, what the channel pays. */
export const offerClaims = z.object({
  channel_id: z.string(),
  property_id: z.int().positive(),
  roomtype_id: z.string(),
  rateplan_id: z.string(),
  checkin: z.string(),
  checkout: z.string(),
  occupancy,
  currency: currencySchema,
  total_inclusive: z.int().nonnegative(),
  total_exclusive: z.int().nonnegative(),
  /** Book tokens: the policy the price check showed, which the booking keeps. */
  cancellation_policy: z.enum(CANCELLATION_POLICY_TYPES).optional(),
});
export type OfferClaims = z.infer<typeof offerClaims>;

/** The row of the secret before secrets were per environment; adopted by the database's own environment. */
const LEGACY_SETTING_KEY = 'token_signing_secret';

/** The `settings` row of the generated secret of `env`. */
export function signingSecretKey(env: Environment): string {
  return `token_signing_secret:${env}`;
}

/**
 * The key of `env` from a configured TOKEN_SIGNING_SECRET: HKDF-SHA256 with the environment as
 * its info, so the same configured secret on a sandbox and a production instance still gives
 * keys whose tokens do not cross.
 */
export function derivedSigningKey(secret: string, env: Environment): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secret, 'channel-service token signing', `environment:${env}`, 32));
}

/**
 * An HS256 key as a CryptoKey, imported once: given the raw bytes, jose imports them again for
 * every token it verifies, which cost more than the signature itself (issue 18, item 7).
 */
function hmacKey(raw: Uint8Array): Promise<CryptoKey> {
  return globalThis.crypto.subtle.importKey('raw', Uint8Array.from(raw), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

/** The protected header of every token: `{"alg":"HS256"}`, base64url (RFC 7515 §7.1), as jose's SignJWT writes it. */
const HS256_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256' })).toString('base64url');

export class TokenSigner {
  private constructor(
    /** The key's bytes, for signing (node:crypto HMAC, synchronous). */
    private readonly signingKey: Uint8Array,
    /** The same key for jose's verification. */
    private readonly key: CryptoKey,
    /**
     * A configured secret as it was used before keys were per environment: accepted for v2
     * retrieve links only (they never expire and partners keep them; read-only). Null without a
     * configured secret (the stored legacy secret is adopted instead).
     */
    private readonly legacyRetrieveKey: CryptoKey | null = null,
  ) {}

  /**
   * The key of this instance's environment (docs/decisions.md, "Environments"): derived from the
   * configured secret, or the environment's own secret kept in the database (made once, on the
   * first start). Runs after the environment check (environment.ts), so this instance's
   * environment owns the database: the secret of the single `token_signing_secret` row of older
   * versions becomes its secret, so its live tokens keep working.
   */
  static async load(prisma: PrismaClient, config: Config): Promise<TokenSigner> {
    const env = config.env;
    if (config.tokenSigningSecret) {
      const derived = derivedSigningKey(config.tokenSigningSecret, env);
      return new TokenSigner(
        derived,
        await hmacKey(derived),
        await hmacKey(new TextEncoder().encode(config.tokenSigningSecret)),
      );
    }
    const key = signingSecretKey(env);
    // The legacy row is renamed, not copied: one environment adopts it, once (an instance of
    // another environment started later, the record of the database deleted, finds it gone).
    // Instances racing for it update the one row in turn: the first renames it, the others match nothing.
    await prisma.$executeRaw`
      UPDATE "settings" SET "key" = ${key}
      WHERE "key" = ${LEGACY_SETTING_KEY} AND NOT EXISTS (SELECT 1 FROM "settings" WHERE "key" = ${key})`;
    // Several instances may start together: the first insert wins and everyone reads it back.
    await prisma.setting.createMany({ data: [{ key, value: randomBytes(32).toString('base64url') }], skipDuplicates: true });
    const stored = await prisma.setting.findUniqueOrThrow({ where: { key } });
    const raw = new TextEncoder().encode(stored.value);
    return new TokenSigner(raw, await hmacKey(raw));
  }

  /**
   * A compact JWS (RFC 7515 §7.1) of the claims with `kind`, `iat`, a random `jti` and, unless
   * ttlSeconds is null, `exp`: the token jose's SignJWT makes, signed with node:crypto's HMAC,
   * which is synchronous; WebCrypto's HMAC is a job of its own per signature, and an availability
   * answer signs one token per bookable rate (issue 18, item 7). Verified by jose (verify).
   */
  async sign(kind: TokenKind, claims: Record<string, unknown>, options: { now: Date; ttlSeconds: number | null }): Promise<string> {
    const iat = Math.floor(options.now.getTime() / 1000);
    const payload: Record<string, unknown> = { ...claims, kind, iat, jti: randomBytes(12).toString('base64url') };
    if (options.ttlSeconds !== null) payload.exp = iat + options.ttlSeconds;
    const input = `${HS256_HEADER}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
    return `${input}.${createHmac('sha256', this.signingKey).update(input).digest('base64url')}`;
  }

  /** The claims of a genuine, unexpired token of `kind` issued to `channelId`, or a TokenError. */
  async verify<T extends z.ZodType>(
    kind: TokenKind,
    token: string,
    schema: T,
    options: { now: Date; channelId: string },
  ): Promise<z.infer<T> & { jti: string; exp?: number | undefined; iat: number }> {
    let payload: Record<string, unknown>;
    const check = {
      algorithms: ['HS256'],
      currentDate: options.now,
      // Every kind but the v2 retrieve link expires; a token of such a kind without `exp` is not ours.
      requiredClaims: kind === 'v2_retrieve' ? [] : ['exp'],
    };
    try {
      try {
        ({ payload } = await jwtVerify(token, this.key, check));
      } catch (error) {
        // A retrieve link signed before keys were per environment, under the configured secret itself.
        if (!(kind === 'v2_retrieve' && this.legacyRetrieveKey && error instanceof joseErrors.JWSSignatureVerificationFailed)) throw error;
        ({ payload } = await jwtVerify(token, this.legacyRetrieveKey, check));
      }
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) {
        // Expired but genuine: still say "wrong type" before "expired" when it is not this flow's token.
        const claims = error.payload as Record<string, unknown>;
        if (claims.kind !== kind) throw new TokenError('wrong_type');
        if (claims.channel_id !== options.channelId) throw new TokenError('foreign');
        throw new TokenError('expired');
      }
      throw new TokenError('malformed');
    }
    if (payload.kind !== kind) throw new TokenError('wrong_type');
    if (payload.channel_id !== options.channelId) throw new TokenError('foreign');
    const parsed = schema.safeParse(payload);
    if (!parsed.success) throw new TokenError('malformed');
    return { ...(parsed.data as object), jti: String(payload.jti), exp: payload.exp, iat: Number(payload.iat) } as never;
  }
}
