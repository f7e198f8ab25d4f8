import type { Voucher, VoucherRoom } from './model.js';

// ---------------------------------------------------------------------------------------------
// The layout both formats draw

export interface VoucherRow {
  label: string;
  value: string;
  /** A stable name for the value (the HTML's data-field), so a page can be checked field by field. */
  field?: string;
}

export interface VoucherSection {
  title: string;
  rows: VoucherRow[];
  /** The price section is drawn larger. */
  emphasis?: boolean;
}

function rows(entries: [label: string, value: string | number | null | undefined, field?: string][]): VoucherRow[] {
  return entries.flatMap(([label, value, field]) =>
    value === null || value === undefined || value === '' ? [] : [{ label, value: String(value), ...(field ? { field } : {}) }],
  );
}

function utcMinute(at: Date): string {
  return `${at.toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

/** What the voucher says, in order: the HTML and the PDF draw exactly these sections. */
export function voucherSections(v: Voucher): VoucherSection[] {
  const one = v.rooms.length === 1 ? v.rooms[0]! : null;
  const roomDetails = (r: VoucherRoom, prefix: string) =>
    rows([
      ['Room type', r.roomType, `${prefix}room-type`],
      ['Rate plan', r.ratePlan, `${prefix}rate-plan`],
      ['Meals', r.mealPlan, `${prefix}meals`],
    ]);
  const cancellation = (r: VoucherRoom, prefix: string) =>
    rows([
      ['Cancellation policy', r.cancellation.words, `${prefix}policy`],
      ['Cancelled on', r.cancellation.cancelledAt ? utcMinute(r.cancellation.cancelledAt) : null],
      ['Cancellation fee', r.cancellation.fee?.label, `${prefix}cancellation-fee`],
      ['Refund', r.cancellation.refund?.label, `${prefix}refund`],
    ]);

  const sections: VoucherSection[] = [
    {
      title: 'Booking',
      rows: rows([
        [one ? 'Booking number' : 'Reservation number', v.reservationId, 'booking-number'],
        ['Confirmation number', v.confirmationNumber, 'confirmation-number'],
        ['Provider confirmation', one ? (one.providerConfirmation ?? 'not yet issued') : null, 'provider-confirmation'],
        ['Your reference', v.partnerReference, 'partner-reference'],
        ['Status', v.statusLabel, 'status'],
      ]),
    },
    {
      title: 'Property',
      rows: rows([
        ['Name', v.property.name, 'property-name'],
        ['Address', v.property.address, 'property-address'],
        ['City', [v.property.city, v.property.country].filter(Boolean).join(', ')],
        ['Time zone', v.property.timezone, 'timezone'],
      ]),
    },
    {
      title: 'Stay',
      rows: [
        ...rows([
          ['Check-in', `${v.checkin.label} (${v.checkin.date}), from ${v.checkin.time}`, 'checkin'],
          ['Expected arrival', v.arrivalTime, 'arrival-time'],
          ['Check-out', `${v.checkout.label} (${v.checkout.date})`, 'checkout'],
          ['Nights', v.nights, 'nights'],
          ['Rooms', v.roomCount, 'rooms'],
        ]),
        ...(one ? roomDetails(one, '') : []),
      ],
    },
    {
      title: 'Guests',
      rows: rows([
        ['Booked by', v.booker.name, 'booker'],
        ['Guest', one?.guest, 'guest'],
        ['Party', v.party, 'party'],
        ['E-mail', v.booker.email, 'email'],
        ['Phone', v.booker.phone, 'phone'],
      ]),
    },
  ];
  if (!one) {
    const unit = v.rooms.every((r) => r.roomCount === 1) ? 'Room' : 'Booking';
    v.rooms.forEach((r, i) => {
      const prefix = `room-${i + 1}-`;
      sections.push({
        title: `${unit} ${i + 1} of ${v.rooms.length}`,
        rows: [
          ...rows([
            ['Booking number', r.bookingId, `${prefix}booking-number`],
            ['Provider confirmation', r.providerConfirmation, `${prefix}provider-confirmation`],
            ['Status', r.statusLabel, `${prefix}status`],
            ['Rooms', r.roomCount > 1 ? r.roomCount : null],
          ]),
          ...roomDetails(r, prefix),
          ...rows([
            ['Guest', r.guest, `${prefix}guest`],
            ['Party', r.party, `${prefix}party`],
            ['Dates', r.checkin !== v.checkin.date || r.checkout !== v.checkout.date ? `${r.checkin} to ${r.checkout}` : null],
            [r.price.kind === 'sale' ? 'Price' : 'Paid', r.price.label, `${prefix}price`],
          ]),
          ...cancellation(r, prefix),
          ...rows([['Special requests', r.specialRequests, `${prefix}special-requests`]]),
        ],
      });
    });
  }
  sections.push({
    title: 'Price',
    emphasis: true,
    rows: rows([
      [priceLabel(v.price), v.price.label, 'price'],
      [
        'Not included',
        v.excludedRooms > 0 ? `${v.excludedRooms} cancelled ${v.excludedRooms === 1 ? 'room' : 'rooms'} (fee and refund shown with each room)` : null,
        'price-excludes',
      ],
    ]),
  });
  if (one) {
    sections.push({ title: 'Cancellation', rows: cancellation(one, '') });
    sections.push({ title: 'Special requests', rows: rows([['Requests', one.specialRequests, 'special-requests']]) });
  }
  return sections.filter((s) => s.rows.length > 0);
}

function priceLabel(price: Voucher['price']): string {
  if (price.covers === 'booked') return price.kind === 'sale' ? 'Price when booked' : 'Paid when booked';
  return price.kind === 'sale' ? 'Total price' : 'Total paid';
}

/** The small print under the sections. */
export function voucherFooter(v: Voucher): string {
  return (
    `Issued ${utcMinute(v.issuedAt)}. Check-in and cancellation times are the property's local time ` +
    `(${v.property.timezone}). Please show this voucher at check-in.`
  );
}
