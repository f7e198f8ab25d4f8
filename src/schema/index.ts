import { builder } from './builder.js';
import './node.js';
import './channel.js';
import './apps.js';
import './properties.js';
import './search.js';
import './batchRates.js';
import './bookingTypes.js';
import './bookings.js';
import './bookingErrors.js';
import './reservationTypes.js';
import './reservations.js';
import './modifyDates.js';
import './vouchers.js';
import './webhookTypes.js';
import './webhooks.js';
import './events.js';

export const schema = builder.toSchema({ sortSchema: true });
