import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestContext } from '../../src/context.js';
import { authenticate } from '../../src/services/access/index.js';
import { bookOffers, verifyBookToken } from '../../src/services/bookings/index.js';
import { runBookingSync } from '../../src/services/reservations/index.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import type { RoomOccupancy } from '../../src/upstream/protocol.js';
import { checkInvariants } from '../helpers/bookingInvariants.js';
import { isBook, startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { day, v1 } from '../helpers/flow.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Several rooms booked as one itinerary (the service v2's multi-room booking stands on), in
 * production: one charge per room, all or nothing at the provider and in the ledger.
 */

let simulator: RunningSimulator;
let proxy: FaultProxy;
let t: TestService;
let who: IssuedCredentials;
const START = 50_000_000n;

beforeAll(async () => {
  simulator = await startSimulator({ port: 0, host: '127.0.0.1' });
  proxy = await startFaultProxy(simulator.url);
  t = await startTestService({ CHANNEL_ENV: 'production', UPSTREAM_URL: proxy.url });
  who = await t.channel({ balance: START });
});
afterAll(async () => {
  await t?.close();
  await proxy?.close();
  await simulator?.close();
});

/** Books a two-room offer as two bookings of one itinerary through the service layer. */
async function bookTwoRooms(from: number) {
  const api = v1(t, who);
  const offer = await api.offer({ from, checkin: day(30), checkout: day(32), query: '&rooms=2', adults: 4 });
  const ctx = createRequestContext(t.service.deps, {
    requestId: crypto.randomUUID(),
    logger: t.service.deps.logger,
    principal: await authenticate(t.service.deps.db.prisma, { apiKey: who.api_key }),
    authError: null,
    signal: undefined,
  });
  const claims = await verifyBookToken(ctx, offer.bookToken);
  const rooms = (claims.occupancy as RoomOccupancy[]).map((occupancy, i) => ({
    occupancy: [occupancy],
    details: { bookerName: `Room ${i + 1}`, guestFirstName: `Guest${i + 1}` },
  }));
  return { offer, run: () => bookOffers(ctx, [{ offer: claims, rooms }]) };
}

describe('itineraries', () => {
  it('two rooms of one token: two bookings of one itinerary, each charged its share, together the token amount', async () => {
    const { offer, run } = await bookTwoRooms(60);
    const bookings = await run();
    expect(bookings).toHaveLength(2);
    expect(new Set(bookings.map((b) => b.itineraryId)).size).toBe(1);
    expect(bookings[0]!.id).toBe(bookings[0]!.itineraryId);
    expect(bookings.map((b) => b.status)).toEqual(['confirmed', 'confirmed']);
    expect(bookings.reduce((sum, b) => sum + b.totalAmount, 0n)).toBe(BigInt(offer.amount));
    const state = await checkInvariants(t, who.user_id);
    expect(state.balance).toBe(START - BigInt(offer.amount));
    // Each is its own provider booking and its own v1 booking record.
    for (const b of bookings) expect((await t.service.deps.upstream.getBooking(b.id))?.rooms).toBe(1);
    const list = await (await v1(t, who).call('GET', '/bookings')).json();
    expect(list.data.map((b: { id: string }) => b.id)).toEqual(expect.arrayContaining(bookings.map((b) => b.id)));
  });

  it('the provider fails the second room: the first is cancelled there, both void, nothing charged; the token books again', async () => {
    const { run } = await bookTwoRooms(70);
    const before = (await checkInvariants(t, who.user_id)).balance;
    let books = 0;
    proxy.rule = (r) => (isBook(r) && ++books >= 2 ? 'fail' : 'forward'); // the retry fails too
    await expect(run()).rejects.toMatchObject({ status: 502, code: 'UPSTREAM_ERROR' });
    proxy.heal();
    const state = await checkInvariants(t, who.user_id);
    expect(state.balance).toBe(before);
    // The two rows of the attempt share a creation time: order them by room.
    const attempt = state.bookings.slice(-2).sort((a, b) => a.tokenRoom - b.tokenRoom);
    expect(attempt.map((b) => b.status)).toEqual(['void', 'void']);
    expect((await t.service.deps.upstream.getBooking(attempt[0]!.id))?.status).toBe('cancelled');
    // The 503 answer was a failure, so the second room is watched until no request can arrive.
    await runBookingSync(t.service.deps);
    const again = await run();
    expect(again.map((b) => b.status)).toEqual(['confirmed', 'confirmed']);
    await checkInvariants(t, who.user_id);
  });

  it('the provider refuses the second room (sold out): 409 SOLD_OUT, the first cancelled there, everything given back', async () => {
    const { run } = await bookTwoRooms(80);
    const before = (await checkInvariants(t, who.user_id)).balance;
    let books = 0;
    proxy.rule = (r) => (isBook(r) && ++books === 2 ? { forward: true, scenario: 'sold_out' } : 'forward');
    await expect(run()).rejects.toMatchObject({ status: 409, code: 'SOLD_OUT' });
    proxy.heal();
    const state = await checkInvariants(t, who.user_id);
    expect(state.balance).toBe(before);
    expect(state.bookings.slice(-2).map((b) => [b.status, b.upstreamCleanup])).toEqual([
      ['void', false],
      ['void', false],
    ]);
  });
});
