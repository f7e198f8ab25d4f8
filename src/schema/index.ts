import { builder } from './builder.js';
import { withInContext } from './content.js';
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

// With the @inContext operation directive, which Pothos cannot declare (src/schema/content.ts).
export const schema = withInContext(builder.toSchema({ sortSchema: true }));
