import { randomBytes } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import type { Config } from '../config.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { currencySchema } from './money.js';

/**
 * Flow tokens (v1 price_check_token and book_token, v2 link tokens) are JWTs signed with HS256
 * under one service secret. They carry the server-side offer (property, room, rate, party,
 * dates, KRW amounts), the channel they were issued to and their expiry, so a client can neither
 * forge nor alter one. Each surface maps a TokenError to its own status (spec §3.2, §7).
 * v2 page tokens (kind `v2_page`) are signed the same way and carry the provider's cursor.
 */

export const TOKEN_KINDS = ['price_check', 'book', 'v2_price_check', 'v2_book', 'v2_retrieve', 'v2_cancel', 'v2_page'] as const;
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
  cancellation_policy: z.enum(['flexible', 'moderate', 'strict', 'non_refundable']).optional(),
});
export type OfferClaims = z.infer<typeof offerClaims>;

const SETTING_KEY = 'token_signing_secret';

export class TokenSigner {
  private constructor(private readonly key: Uint8Array) {}

  /** The configured secret, or the one kept in the database (made once, on first start). */
  static async load(prisma: PrismaClient, config: Config): Promise<TokenSigner> {
    if (config.tokenSigningSecret) return new TokenSigner(new TextEncoder().encode(config.tokenSigningSecret));
    // Several instances may start together: the first insert wins and everyone reads it back.
    await prisma.setting.createMany({
      data: [{ key: SETTING_KEY, value: randomBytes(32).toString('base64url') }],
      skipDuplicates: true,
    });
    const stored = await prisma.setting.findUniqueOrThrow({ where: { key: SETTING_KEY } });
    return new TokenSigner(new TextEncoder().encode(stored.value));
  }

  async sign(kind: TokenKind, claims: Record<string, unknown>, options: { now: Date; ttlSeconds: number | null }): Promise<string> {
    const issuedAt = Math.floor(options.now.getTime() / 1000);
    const jwt = new SignJWT({ ...claims, kind })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt(issuedAt)
      .setJti(randomBytes(12).toString('base64url'));
    if (options.ttlSeconds !== null) jwt.setExpirationTime(issuedAt + options.ttlSeconds);
    return jwt.sign(this.key);
  }

  /** The claims of a genuine, unexpired token of `kind` issued to `channelId`, or a TokenError. */
  async verify<T extends z.ZodType>(
    kind: TokenKind,
    token: string,
    schema: T,
    options: { now: Date; channelId: string },
  ): Promise<z.infer<T> & { jti: string; exp?: number | undefined; iat: number }> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        currentDate: options.now,
        // Every kind but the v2 retrieve link expires; a token of such a kind without `exp` is not ours.
        requiredClaims: kind === 'v2_retrieve' ? [] : ['exp'],
      }));
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
