import { builder } from './builder.js';

// Subscription.bookingEvents: being written.
void builder;
