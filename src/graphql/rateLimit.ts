import { GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RequestContext } from '../context.js';
import { costOnce } from './costOnce.js';
import { rateLimitHeaders, type RateDecision } from '../services/access/index.js';
import { RateLimitError } from '../services/kernel/index.js';
import { errorExtensions } from './errors.js';

/**
 * The channel rate limit of GraphQL (the REST side is rest-adapters/rateLimit.ts): an operation
 * is charged its documentCost, over HTTP when it is about to run and over graphql-ws when it is
 * subscribed, and reported in `extensions.rateLimit` and the X-RateLimit-* headers.
 */

interface Charge {
  cost: number;
  decision: RateDecision;
}

/** What each request (HTTP) or operation (graphql-ws) was charged, by its request context. */
const charges = new WeakMap<RequestContext, Charge>();

/**
 * Charges an operation's cost to the caller's channel, once per request context. Null when the
 * context has no caller (nothing is charged) or was charged already.
 */
async function charge(ctx: RequestContext | undefined, cost: () => number, surface: 'graphql' | 'graphql_ws' = 'graphql'): Promise<Charge | null> {
  if (!ctx?.principal || charges.has(ctx)) return null;
  const points = cost();
  const decision = await ctx.deps.limiters.api.charge(ctx.principal.channelId, points);
  const charged = { cost: points, decision };
  charges.set(ctx, charged);
  if (!decision.allowed) ctx.deps.metrics.rateLimited(surface);
  return charged;
}

/** `extensions.rateLimit` of a GraphQL response. */
function rateLimitExtension({ cost, decision }: Charge) {
  return { cost, limit: decision.limit, remaining: decision.remaining, reset: decision.resetSeconds };
}

/**
 * The refusal of an operation. With `http`, Yoga makes the response a 429 with Retry-After (and
 * leaves `extensions.http` out of the body); graphql-ws has no status to set.
 */
function rateLimitError(charged: Charge, http: boolean): GraphQLError {
  const refusal = rateLimitRefusal(charged);
  return new GraphQLError(refusal.message, { extensions: errorExtensions(refusal, http && {}) });
}

/** The kernel error of a refused charge: RATE_LIMIT_EXCEEDED with retry_after, cost and limit, and Retry-After. */
function rateLimitRefusal({ cost, decision }: Charge): RateLimitError {
  const retryAfter = decision.resetSeconds;
  const message =
    cost > decision.limit
      ? `This operation costs ${cost} points, more than this channel's limit of ${decision.limit} per window; ask for fewer items`
      : `Rate limit exceeded: this operation costs ${cost} points and ${decision.remaining} are left; retry in ${retryAfter} s`;
  return new RateLimitError(retryAfter, message, { cost, limit: decision.limit });
}

function withExtension<T extends ExecutionResult>(result: T, charged: Charge): T {
  return { ...result, extensions: { ...result.extensions, rateLimit: rateLimitExtension(charged) } };
}

function isExecutionResult(value: unknown): value is ExecutionResult {
  return typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);
}

/** The request context Yoga and graphql-ws carry in the GraphQL context (GraphQLServerContext). */
function requestContextOf(context: unknown): RequestContext | undefined {
  return (context as { ctx?: RequestContext } | null | undefined)?.ctx;
}

/**
 * Yoga plugin: charges each operation its documentCost when it is about to run (a refused one
 * does not run), reports `extensions.rateLimit { cost, limit, remaining, reset }` (on the first
 * payload of an incremental result: an operation with @defer or @stream is charged once, not per
 * payload) and sets the X-RateLimit headers. A request that never reaches an operation (a document that does not parse
 * or validate, a malformed body) costs 1 point. Over graphql-ws the charge is made when the
 * operation is subscribed (chargeWsOperation) and this plugin only reports it.
 */
export function useRateLimit(): Plugin {
  const onOperation = async ({
    args,
    setResultAndStopExecution,
  }: {
    args: { contextValue: unknown; document: DocumentNode; variableValues?: unknown; operationName?: string | null; schema: GraphQLSchema };
    setResultAndStopExecution: (result: ExecutionResult) => void;
  }) => {
    const ctx = requestContextOf(args.contextValue);
    const charged = await charge(ctx, () =>
      // Worked out once: the cost limit did it while validating (costOnce.ts).
      costOnce(args.contextValue, args.document, args.variableValues as Record<string, unknown> | undefined, {
        schema: args.schema,
        operationName: args.operationName,
      }),
    );
    if (charged && !charged.decision.allowed) {
      setResultAndStopExecution(withExtension({ errors: [rateLimitError(charged, true)] }, charged));
    }
  };
  return {
    async onExecute(payload) {
      await onOperation(payload);
      return {
        onExecuteDone({ result, setResult }) {
          const charged = chargeOf(payload.args.contextValue);
          if (!charged) return;
          if (isExecutionResult(result)) {
            setResult(withExtension(result, charged));
            return;
          }
          // An incremental result (@defer, @stream), charged once: reported on its first payload.
          let first = true;
          return {
            onNext({ result: part, setResult: setPart }) {
              if (!first) return;
              first = false;
              setPart(withExtension(part, charged));
            },
          };
        },
      };
    },
    async onSubscribe(payload) {
      await onOperation(payload);
    },
    async onExecutionResult({ context, result, setResult }) {
      // Charges only when no operation ran (a parse or validation error): 1 point.
      const charged = await charge(requestContextOf(context), () => 1);
      if (!charged || !isExecutionResult(result)) return;
      setResult(withExtension(charged.decision.allowed ? result : { errors: [rateLimitError(charged, true)] }, charged));
    },
    async onResponse({ serverContext, response, setResponse }) {
      const ctx = requestContextOf(serverContext);
      // Charges only when the request failed before any operation (a malformed body): 1 point.
      const late = await charge(ctx, () => 1);
      let answer = response;
      if (late && !late.decision.allowed) {
        const { message, extensions } = rateLimitError(late, false).toJSON();
        const refusal = rateLimitRefusal(late);
        answer = Response.json(
          { errors: [{ message, extensions }], extensions: { rateLimit: rateLimitExtension(late) } },
          { status: refusal.status, headers: refusal.headers },
        );
        setResponse(answer);
      }
      const charged = ctx && charges.get(ctx);
      if (charged) for (const [name, value] of Object.entries(rateLimitHeaders(charged.decision))) answer.headers.set(name, value);
    },
  };
}

function chargeOf(context: unknown): Charge | undefined {
  const ctx = requestContextOf(context);
  return ctx ? charges.get(ctx) : undefined;
}

/**
 * graphql-ws: charges an operation its documentCost when it is subscribed (the cost limit's, worked
 * out while validating in the same GraphQL context `contextValue`). Returns the errors to refuse it
 * with (code RATE_LIMIT_EXCEEDED), or null when it may run.
 */
export async function chargeWsOperation(
  ctx: RequestContext,
  operation: {
    contextValue: unknown;
    document: DocumentNode;
    variables?: Record<string, unknown> | null | undefined;
    operationName?: string | null | undefined;
    schema: GraphQLSchema;
  },
): Promise<readonly GraphQLError[] | null> {
  const charged = await charge(
    ctx,
    () => costOnce(operation.contextValue, operation.document, operation.variables, { schema: operation.schema, operationName: operation.operationName }),
    'graphql_ws',
  );
  return charged && !charged.decision.allowed ? [rateLimitError(charged, false)] : null;
}

/**
 * graphql-ws: the one execution that the subscribers of a shared subscription share
 * (src/graphql/multiplex.ts) is no operation of its own: it carries the charge of the subscription
 * that started it, so it is not charged again.
 */
export function shareCharge(shared: RequestContext, from: RequestContext): void {
  const charged = charges.get(from);
  if (charged) charges.set(shared, charged);
}
