import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { ForbiddenError } from '../../services/kernel/index.js';
import { errorExtensions } from '../errors.js';

/**
 * Yoga's CSRF prevention: a request must be one a browser preflights: a content type other than
 * the three "simple" ones (application/json, as every GraphQL client sends), or a header a page
 * cannot set without a preflight. The credential headers count (X-Api-Key and Authorization are
 * not CORS-safelisted), as do the headers Yoga and Apollo clients send for this purpose. The
 * refusal is 403 CSRF_PREVENTION. GraphiQL's page (a GET for text/html) is served before this.
 */
export const CSRF_HEADERS = ['x-graphql-yoga-csrf', 'graphql-require-preflight', 'apollo-require-preflight', 'x-apollo-operation-name', 'x-api-key', 'authorization'];

export function csrfPrevention(): Plugin {
  const inner = useCSRFPrevention({ requestHeaders: CSRF_HEADERS });
  return {
    onRequestParse(payload) {
      try {
        return inner.onRequestParse!(payload);
      } catch {
        const refusal = new ForbiddenError(
          'This request could be sent by any web page (no preflight): send it with content-type application/json, or with an X-GraphQL-Yoga-CSRF header',
          'CSRF_PREVENTION',
        );
        throw createGraphQLError(refusal.message, { extensions: errorExtensions(refusal) });
      }
    },
  };
}
