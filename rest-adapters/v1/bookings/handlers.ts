import { cancelBooking, cancellationQuote, createBooking, getBooking, listBookings, readBooking, toBookingRecord, updateBooking } from '../../../src/services/bookings/index.js';
import { NotImplementedError } from '../../../src/services/kernel/index.js';
import { ok } from '../../envelope.js';
import type { AppRouteHandler } from '../../env.js';
import { paginationToWire } from '../search/wire.js';
import type * as routes from './routes.js';
import { cancelledToWire, feeToWire, policyOf } from './wire.js';

/** v1 booking handlers (docs/spec/channel-api.md §4.5): parse, call the booking service, map to the wire. */

export const create: AppRouteHandler<typeof routes.createRoute> = async (c) => {
  const b = c.req.valid('json');
  const booking = await createBooking(c.get('ctx'), {
    bookToken: b.book_token,
    bookerName: b.booker_name,
    bookerEmail: b.booker_email,
    guestFirstName: b.guest_first_name,
    guestLastName: b.guest_last_name,
    guestPhone: b.guest_phone,
    guestCountry: b.guest_country,
    guestsAdult: b.guests_adult,
    guestsChild: b.guests_child,
    propertyName: b.property_name,
    roomType: b.room_type,
    ratePlan: b.rate_plan,
    specialRequests: b.special_requests,
    saleAmount: b.sale_amount,
    channelBookingNumber: b.channel_booking_number,
  });
  c.header('Location', `/channel/v1/bookings/${booking.id}`);
  return ok(c, toBookingRecord(booking), 201);
};

export const list: AppRouteHandler<typeof routes.listRoute> = async (c) => {
  const q = c.req.valid('query');
  const page = await listBookings(
    c.get('ctx'),
    {
      status: q.status,
      checkinFrom: q.checkin_from,
      checkinTo: q.checkin_to,
      createdFrom: q.created_from,
      createdTo: q.created_to,
      channelBookingNumber: q.affiliate_reference_id,
      page: q.page,
      perPage: q.per_page,
    },
    { checkinFrom: 'checkin_from', checkinTo: 'checkin_to', createdFrom: 'created_from', createdTo: 'created_to' },
  );
  return ok(c, page.items.map(toBookingRecord), 200, { pagination: paginationToWire(page) });
};

export const get: AppRouteHandler<typeof routes.getRoute> = async (c) =>
  ok(c, toBookingRecord(await readBooking(c.get('ctx'), c.req.valid('param').id)));

export const patch: AppRouteHandler<typeof routes.patchRoute> = async (c) => {
  const b = c.req.valid('json');
  const booking = await updateBooking(c.get('ctx'), c.req.valid('param').id, {
    bookerName: b.booker_name,
    bookerEmail: b.booker_email,
    guestFirstName: b.guest_first_name,
    guestLastName: b.guest_last_name,
    guestPhone: b.guest_phone,
    guestCountry: b.guest_country,
    specialRequests: b.special_requests,
  });
  return ok(c, toBookingRecord(booking));
};

export const fee: AppRouteHandler<typeof routes.feeRoute> = async (c) =>
  ok(c, feeToWire(await cancellationQuote(c.get('ctx'), c.req.valid('param').id)));

export const policy: AppRouteHandler<typeof routes.policyRoute> = async (c) =>
  ok(c, policyOf(await getBooking(c.get('ctx'), c.req.valid('param').id)));

export const cancel: AppRouteHandler<typeof routes.cancelRoute> = async (c) =>
  ok(c, cancelledToWire(await cancelBooking(c.get('ctx'), c.req.valid('param').id)));

export const voucher: AppRouteHandler<typeof routes.voucherRoute> = async (c) => {
  // The booking must be the caller's (404 otherwise) before the contract's 501.
  await getBooking(c.get('ctx'), c.req.valid('param').id);
  throw new NotImplementedError('Vouchers are not available in v1');
};

export const taxInvoices: AppRouteHandler<typeof routes.taxInvoicesRoute> = async () => {
  throw new NotImplementedError('Tax invoices are not available in v1');
};
