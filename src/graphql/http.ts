import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendNodeResponse } from '@whatwg-node/server';
import { exchangeOf, requestContextOf, type Exchange } from '../../rest-adapters/http.js';
import { presentsCredential, publicRefusal, refuse } from '../../rest-adapters/front.js';
import { withDeadline, type TransportRules } from '../../rest-adapters/transport.js';
import { OperationContext, type AppDeps } from '../context.js';
import { MethodNotAllowedError, type RequestTimeoutError } from '../services/kernel/index.js';
import type { Yoga } from './yoga.js';

const METHODS = ['GET', 'POST', 'OPTIONS'];

/**
 * POST and GET /graphql, served by Yoga's node adapter straight from node:http, behind the front
 * (rest-adapters/front.ts: request id, HTTPS, shutdown gate, body limit, headers, already applied).
 * Here: the credential (the same request context as REST, lenient: a refused credential is kept
 * for the fields that need a caller, and the request charged to its address as one without a
 * credential is), the request deadline, and Yoga. The body the front read is
 * handed to Yoga whole, so Yoga's own body-size transform is off (yoga.ts). Any other method is
 * 405 in the error envelope, outside GraphQL.
 */
export function graphqlSurface(deps: AppDeps, rules: TransportRules, yoga: Yoga) {
  const limit = deps.config.bodyLimitBytes;
  return (req: IncomingMessage, res: ServerResponse, ex: Exchange = exchangeOf(req)!): void => {
    const method = req.method ?? 'GET';
    // HEAD goes to Yoga as a GET's (Hono's GET routes answered it before).
    if (!METHODS.includes(method) && method !== 'HEAD') return refuse(ex, new MethodNotAllowedError(method, '/graphql', METHODS), limit);
    void serve(req, res, ex).catch((error: unknown) => refuse(ex, error, limit));
  };

  async function serve(req: IncomingMessage, res: ServerResponse, ex: Exchange): Promise<void> {
    const ctx = await requestContextOf(deps, ex, { lenient: true });
    // A refused credential runs without a caller, as none does: charged to the address as the
    // front charges a request without one (introspection, GraphiQL), before Yoga reads anything.
    if (!ctx.principal && presentsCredential(req)) {
      const refused = await publicRefusal(deps, ex);
      if (refused) return refuse(ex, refused, limit);
    }
    const body = (req as IncomingMessage & { rawBody?: Buffer }).rawBody;
    // Yoga's adapter reads `body` when it is given (the front read it), and the stream otherwise.
    const input = body?.length ? { raw: req, method: req.method, headers: req.headers, url: req.url, body } : req;
    const answer = Promise.resolve(yoga.handleNodeRequestAndResponse(input as IncomingMessage, res, new OperationContext(ctx)));
    // GraphQL has no idempotency: no header exempts an operation from the request deadline.
    const deadline = rules.deadlineOf(req.method ?? 'GET', undefined);
    const winner = await withDeadline<{ response: Response } | { error: RequestTimeoutError }>(
      answer.then((response) => ({ response })),
      deadline,
      (error) => ({ error }),
    );
    if ('error' in winner) {
      refuse(ex, winner.error, limit);
      // A late answer is dropped; a stream (a subscription) is ended.
      void answer.then((late) => late.body?.cancel()).catch(() => undefined);
      return;
    }
    await sendNodeResponse(winner.response, res, req, true);
  }
}
