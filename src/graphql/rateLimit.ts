import type { DocumentNode, ExecutionResult, GraphQLError, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RequestContext } from '../context.js';
import { measureOnce } from './costOnce.js';
import { rateLimitHeaders } from '../services/access/index.js';
import {
  charge,
  chargeOf,
  rateLimitError,
  rateLimitExtension,
  rateLimitRefusal,
  requestContextOf,
  spentRefusal,
  type Charge,
} from './charges.js';

export { shareCharge } from './charges.js';

/**
 * The channel rate limit of GraphQL (the REST side is rest-adapters/rateLimit.ts): an operation
 * is charged its documentCost, over HTTP when it is about to run and over graphql-ws when it is
 * subscribed, and reported in `extensions.rateLimit` and the X-RateLimit-* headers. Each event a
 * live subscription executes is charged again (charges.ts chargeEvent). A request or operation
 * of a channel this instance knows has no point left is refused before anything is parsed
 * (docs/decisions.md, "Hardening: subscriptions and refused work").
 */

function withExtension<T extends ExecutionResult>(result: T, charged: Charge): T {
  return { ...result, extensions: { ...result.extensions, rateLimit: rateLimitExtension(charged) } };
}

function isExecutionResult(value: unknown): value is ExecutionResult {
  return typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);
}

/** The HTTP answer of a refused charge: 429 with Retry-After, one RATE_LIMIT_EXCEEDED error, `extensions.rateLimit`. */
function refusalResponse(charged: Charge): Response {
  const { message, extensions } = rateLimitError(charged, false).toJSON();
  const refusal = rateLimitRefusal(charged);
  return Response.json(
    { errors: [{ message, extensions }], extensions: { rateLimit: rateLimitExtension(charged) } },
    { status: refusal.status, headers: refusal.headers },
  );
}

/**
 * Yoga plugin: charges each operation its documentCost when it is about to run (a refused one
 * does not run), reports `extensions.rateLimit { cost, limit, remaining, reset }` (on the first
 * payload of an incremental result: an operation with @defer or @stream is charged once, not per
 * payload) and sets the X-RateLimit headers. A request that never reaches an operation (a document that does not parse
 * or validate, a malformed body) costs 1 point. A request of a channel this instance knows has
 * no point left is answered 429 before its parameters are read. Over graphql-ws the charge is made
 * when the operation is subscribed (chargeWsOperation) and this plugin only reports it.
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
      measureOnce(args.contextValue, args.document, args.variableValues as Record<string, unknown> | undefined, {
        schema: args.schema,
        operationName: args.operationName,
      }).cost,
    );
    if (charged && !charged.decision.allowed) {
      setResultAndStopExecution(withExtension({ errors: [rateLimitError(charged, true)] }, charged));
    }
  };
  return {
    onRequestParse({ serverContext, endResponse }) {
      // Nothing of the request is parsed, validated or walked for a channel with no point left.
      const spent = spentRefusal(requestContextOf(serverContext), 'graphql');
      if (spent) endResponse(refusalResponse(spent));
    },
    async onExecute(payload) {
      await onOperation(payload);
      return {
        onExecuteDone({ result, setResult }) {
          const charged = chargeOf(requestContextOf(payload.args.contextValue));
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
        answer = refusalResponse(late);
        setResponse(answer);
      }
      const charged = chargeOf(ctx);
      if (charged) for (const [name, value] of Object.entries(rateLimitHeaders(charged.decision))) answer.headers.set(name, value);
    },
  };
}

/**
 * graphql-ws: the refusal of an operation whose channel this instance knows has no point left
 * (RATE_LIMIT_EXCEEDED), before its document is parsed; null when it may go on.
 */
export function refuseSpentWs(ctx: RequestContext): readonly GraphQLError[] | null {
  const spent = spentRefusal(ctx, 'graphql_ws');
  return spent ? [rateLimitError(spent, false)] : null;
}

/**
 * graphql-ws: an operation refused before it runs (it does not parse, validate or pass a limit) costs
 * 1 point, as the same document over HTTP does. Returns its errors, or RATE_LIMIT_EXCEEDED when the
 * channel's points do not cover that point either.
 */
export async function chargeWsRefusal(ctx: RequestContext, errors: readonly GraphQLError[]): Promise<readonly GraphQLError[]> {
  const charged = await charge(ctx, () => 1, 'graphql_ws');
  return charged && !charged.decision.allowed ? [rateLimitError(charged, false)] : errors;
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
    () => measureOnce(operation.contextValue, operation.document, operation.variables, { schema: operation.schema, operationName: operation.operationName }).cost,
    'graphql_ws',
  );
  return charged && !charged.decision.allowed ? [rateLimitError(charged, false)] : null;
}
