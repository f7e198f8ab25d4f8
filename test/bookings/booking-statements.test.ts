import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { statementsOf } from '../helpers/counters.js';
import { isBook, startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { checkInvariants } from '../helpers/bookingInvariants.js';
import { day, v1 } from '../helpers/flow.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * What a v1 booking costs the database (issue 18, item 7): the row with its charge in one
 * statement, the provider, then the move to confirmed with its events in one statement. No
 * interactive transaction, no row read back. Counted at the driver, in the request's own
 * asynchronous context (the outbox dispatcher the commit wakes is not the request's).
 */

let production: TestService;
let sandbox: TestService;
let simulator: RunningSimulator;
let proxy: FaultProxy;

beforeAll(async () => {
  simulator = await startSimulator({ port: 0, onError: () => {} });
  proxy = await startFaultProxy(simulator.url);
  [production, sandbox] = await Promise.all([
    startTestService({ CHANNEL_ENV: 'production', UPSTREAM_URL: proxy.url }),
    startTestService({ CHANNEL_ENV: 'sandbox' }),
  ]);
});
afterAll(async () => {
  await Promise.all([production?.close(), sandbox?.close()]);
  await proxy?.close();
  await simulator?.close();
});

const START = 100_000_000n;

describe('database statements per booking', () => {
  it('production: two statements, the row with its charge and the confirmation with its events; money and events as before', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    // Warm: the credential and the catalog are cached by the first booking.
    expect((await api.book({ book_token: (await api.offer({ checkin: day(30), checkout: day(31) })).bookToken, booker_name: 'Warm' })).status).toBe(201);
    const offer = await api.offer({ checkin: day(32), checkout: day(33) });

    const { result, statements } = await statementsOf(() => api.book({ book_token: offer.bookToken, booker_name: 'Counted' }));

    expect(result.status).toBe(201);
    const booking = (await result.json()).data;
    expect(booking.status).toBe('confirmed');
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatch(/^WITH moved AS \( UPDATE "channels" .* INSERT INTO "bookings" .* INSERT INTO "ledger_entries"/);
    expect(statements[1]).toMatch(/^WITH moved AS \( UPDATE "bookings" .* INSERT INTO "outbox_events"/);
    expect(statements.some((s) => /^(BEGIN|COMMIT)/i.test(s))).toBe(false);

    const state = await checkInvariants(production, who.user_id);
    expect(state.balance).toBe(START - BigInt(state.bookings.reduce((sum, b) => sum + b.totalAmount, 0n)));
    const mine = state.events.filter((e) => e.bookingId === booking.id);
    expect(mine.map((e) => e.type)).toEqual(['reservation.created', 'reservation.confirmed']);
    // Settled: the row is no longer in flight, so no instance's recovery claims it.
    expect(state.bookings.find((b) => b.id === booking.id)).toMatchObject({ status: 'confirmed', leaseOwner: null });
    // The events carry the record as it reads now.
    const read = (await (await api.get(booking.id)).json()).data;
    for (const e of mine) expect(e.payload).toEqual(read);
  });

  it('sandbox: two statements, the row (no money moves) and the confirmation with its events', async () => {
    const who = await sandbox.channel({});
    const api = v1(sandbox, who);
    expect((await api.book({ book_token: (await api.offer({ checkin: day(30), checkout: day(31) })).bookToken, booker_name: 'Warm' })).status).toBe(201);
    const offer = await api.offer({ checkin: day(32), checkout: day(33) });

    const { result, statements } = await statementsOf(() => api.book({ book_token: offer.bookToken, booker_name: 'Counted' }));

    expect(result.status).toBe(201);
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatch(/^INSERT INTO "bookings"/);
    expect(statements[1]).toMatch(/^WITH moved AS \( UPDATE "bookings" .* INSERT INTO "outbox_events"/);
  });

  it('a row changed while the provider books: the settle falls back to a transaction and keeps the change (confirmed, events once)', async () => {
    const who = await production.channel({ balance: START });
    const api = v1(production, who);
    const offer = await api.offer({ checkin: day(34), checkout: day(35) });
    // The booking reaches the provider 400 ms late, while the row is `processing`.
    proxy.rule = (r) => (isBook(r) ? { forward: true, delayMs: 400 } : 'forward');
    try {
      const pending = statementsOf(() => api.book({ book_token: offer.bookToken, booker_name: 'Touched' }));
      const prisma = production.service.deps.db.prisma;
      let row = null;
      for (let i = 0; i < 200 && !row; i++) {
        row = await prisma.booking.findFirst({ where: { channelId: who.user_id, status: 'processing' } });
        if (!row) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(row).not.toBeNull();
      // A change a partner can see (as every such change, it sets updatedAt).
      await prisma.booking.update({ where: { id: row!.id }, data: { specialRequests: 'late pillow', updatedAt: new Date(row!.updatedAt.getTime() + 1) } });

      const { result, statements } = await pending;
      expect(result.status).toBe(201);
      const booking = (await result.json()).data;
      expect(booking).toMatchObject({ id: row!.id, status: 'confirmed', specialRequests: 'late pillow' });
      // The one-statement settle matched nothing, then the transaction did it.
      expect(statements.filter((s) => /^WITH moved AS \( UPDATE "bookings"/.test(s))).toHaveLength(1);
      expect(statements.some((s) => /^BEGIN/i.test(s))).toBe(true);
      const state = await checkInvariants(production, who.user_id);
      const mine = state.events.filter((e) => e.bookingId === booking.id);
      expect(mine.map((e) => e.type)).toEqual(['reservation.created', 'reservation.confirmed']);
      for (const e of mine) expect(e.payload).toMatchObject({ specialRequests: 'late pillow', status: 'confirmed' });
    } finally {
      proxy.heal();
      await proxy.settled();
    }
  });
});
