import { builder } from './builder.js';

// GraphQL twins of /channel/v1/webhooks: being written.
void builder;
