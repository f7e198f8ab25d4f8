import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { offerClaims } from '../../src/services/access/index.js';
import { day } from '../helpers/flow.js';
import { apiKey, startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
let creds: IssuedCredentials;
let other: IssuedCredentials;
const CHECKIN = day(50);
const CHECKOUT = day(53);

beforeAll(async () => {
  t = await startTestService();
  creds = await t.channel();
  other = await t.channel();
});
afterAll(() => t.close());

function get(path: string, headers: Record<string, string> = {}, who: IssuedCredentials = creds) {
  return t.request(`/channel/v1${path}`, { headers: { ...apiKey(who), ...headers } });
}

interface Rate {
  rateplan_id: string;
  available_rooms: number;
  price_check_token: string | null;
  pricing: { totals: { inclusive_amount: number; exclusive_amount: number }; billable_totals: { inclusive_amount: number } };
  cancellation_policy: unknown;
  nightly: { base_rate: number }[];
}

/** A bookable rate for two adults, with its token: at `from` or the next property that has one. */
async function bookableRate(from: number, query = '', who: IssuedCredentials = creds): Promise<Rate & { propertyId: number }> {
  for (let propertyId = from; propertyId < from + 30; propertyId++) {
    const res = await get(`/search/availability/${propertyId}?checkin=${CHECKIN}&checkout=${CHECKOUT}&adults=2${query}`, {}, who);
    const rates: Rate[] = (await res.json()).data.room_types.flatMap((r: { rates: Rate[] }) => r.rates);
    const rate = rates.find((r) => r.price_check_token);
    if (rate) return { ...rate, propertyId };
  }
  throw new Error(`no bookable rate from property ${from}`);
}

describe('GET /search/price-check', () => {
  it('matched: the same pricing and policy, and a book_token carrying the amount to charge', async () => {
    const rate = await bookableRate(31);
    const res = await get(`/search/price-check?token=${encodeURIComponent(rate.price_check_token!)}`);
    expect(res.status).toBe(200);
    const { data } = await res.json();
    expect(data).toMatchObject({ status: 'matched', pricing: rate.pricing, cancellation_policy: rate.cancellation_policy });
    expect(Date.parse(data.expires_at) - Date.now()).toBeGreaterThan(29 * 60_000);
    const claims = await t.service.deps.tokens.verify('book', data.book_token, offerClaims, { now: new Date(), channelId: creds.user_id });
    expect(claims).toMatchObject({ property_id: rate.propertyId, rateplan_id: rate.rateplan_id, checkin: CHECKIN, checkout: CHECKOUT, total_inclusive: rate.pricing.billable_totals.inclusive_amount });
  });

  it('keeps the request currency of the search', async () => {
    const rate = await bookableRate(31, '&currency=EUR');
    const { data } = await (await get(`/search/price-check?token=${rate.price_check_token}`)).json();
    expect(data.pricing.request_currency).toBe('EUR');
    expect(data.pricing).toEqual(rate.pricing);
  });

  it('price_changed (sandbox scenario): the new, higher price is in pricing and in the book_token', async () => {
    const rate = await bookableRate(120);
    const res = await get(`/search/price-check?token=${rate.price_check_token}`, { 'x-test-scenario': 'price_changed' });
    const { data } = await res.json();
    expect(data.status).toBe('price_changed');
    expect(data.pricing.totals.inclusive_amount).toBeGreaterThan(rate.pricing.totals.inclusive_amount);
    const claims = await t.service.deps.tokens.verify('book', data.book_token, offerClaims, { now: new Date(), channelId: creds.user_id });
    expect(claims.total_inclusive).toBe(data.pricing.billable_totals.inclusive_amount);
  });

  it('sold_out when the rooms were taken since the search; no pricing, no book_token', async () => {
    const rate = await bookableRate(60);
    const claims = await t.service.deps.tokens.verify('price_check', rate.price_check_token!, offerClaims, { now: new Date(), channelId: creds.user_id });
    // Someone else books every free room at the provider.
    for (let i = 0; i < rate.available_rooms; i++) {
      const outcome = await t.service.deps.upstream.book({
        reference: `other-${i}-${claims.jti}`,
        property_id: rate.propertyId,
        roomtype_id: claims.roomtype_id,
        rateplan_id: claims.rateplan_id,
        checkin: CHECKIN,
        checkout: CHECKOUT,
        occupancy: claims.occupancy,
        total: claims.total_inclusive,
        guest: { first_name: null, last_name: null, name: 'Other Guest' },
      });
      expect(outcome.ok).toBe(true);
    }
    const { data } = await (await get(`/search/price-check?token=${rate.price_check_token}`)).json();
    expect(data).toEqual({ status: 'sold_out', pricing: null, cancellation_policy: null, book_token: null, expires_at: null });
  });

  it('sold_out (sandbox scenario)', async () => {
    const rate = await bookableRate(90);
    const { data } = await (await get(`/search/price-check?token=${rate.price_check_token}`, { 'x-test-scenario': 'sold_out' })).json();
    expect(data.status).toBe('sold_out');
    expect(data.book_token).toBeNull();
  });

  it('410 TOKEN_EXPIRED for an expired token', async () => {
    const rate = await bookableRate(31);
    const claims = await t.service.deps.tokens.verify('price_check', rate.price_check_token!, offerClaims, { now: new Date(), channelId: creds.user_id });
    const { jti: _j, exp: _e, iat: _i, ...offer } = claims;
    const expired = await t.service.deps.tokens.sign('price_check', offer, { now: new Date(Date.now() - 31 * 60_000), ttlSeconds: 30 * 60 });
    const res = await get(`/search/price-check?token=${expired}`);
    expect(res.status).toBe(410);
    expect((await res.json()).error.code).toBe('TOKEN_EXPIRED');
  });

  it('400 INVALID_TOKEN for a malformed, altered, foreign or wrong-kind token; nothing is asked of the provider', async () => {
    const rate = await bookableRate(31);
    const token = rate.price_check_token!;
    const [header, payload, signature] = token.split('.');
    const altered = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    altered.total_inclusive = 100;
    const { data: checked } = await (await get(`/search/price-check?token=${token}`)).json();
    const cases = [
      'garbage',
      `${header}.${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${signature}`,
      checked.book_token, // a book_token is not a price_check_token
    ];
    for (const bad of cases) {
      const before = t.service.deps.upstream.calls;
      const res = await get(`/search/price-check?token=${encodeURIComponent(bad)}`);
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe('INVALID_TOKEN');
      expect(t.service.deps.upstream.calls).toBe(before);
    }
    const foreign = await get(`/search/price-check?token=${token}`, {}, other);
    expect(foreign.status).toBe(400);
    expect((await foreign.json()).error.code).toBe('INVALID_TOKEN');
  });

  it('400 VALIDATION_ERROR without a token; 502 when the provider fails', async () => {
    const missing = await get('/search/price-check');
    expect(missing.status).toBe(400);
    expect((await missing.json()).error.details.fields[0].field).toBe('token');
    const rate = await bookableRate(31);
    const failed = await get(`/search/price-check?token=${rate.price_check_token}`, { 'x-test-scenario': 'upstream_error' });
    expect(failed.status).toBe(502);
  });

  it('GraphQL priceCheck gives the same answer', async () => {
    const rate = await bookableRate(35);
    const res = await t.graphql(
      'query($token: String!) { priceCheck(token: $token) { status bookToken expiresAt pricing { inclusiveAmount requestCurrency } cancellationPolicy { type } } }',
      { token: rate.price_check_token },
      apiKey(creds),
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.priceCheck).toMatchObject({ status: 'MATCHED', pricing: { inclusiveAmount: rate.pricing.totals.inclusive_amount, requestCurrency: 'KRW' } });
    const bad = await t.graphql('{ priceCheck(token: "nope") { status } }', undefined, apiKey(creds));
    expect(bad.errors?.[0]?.extensions?.code).toBe('INVALID_TOKEN');
  });
});
