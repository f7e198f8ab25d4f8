import { getOperationAST, type DocumentNode, type ExecutionResult, type GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { UNKNOWN, type GraphQLOutcome, type Metrics } from '../../metrics/index.js';
import { AppError } from '../../services/kernel/index.js';

/**
 * GraphQL operations in the service's metrics (src/metrics): parse and validate times, and each
 * operation by name, type and outcome with its execute time, over HTTP and graphql-ws alike (both
 * run through Yoga's envelop). Our own plugin rather than @envelop/prometheus: that one labels
 * with the operation name the client sends, unbounded, and times with Date.now() (milliseconds,
 * where a cached parse takes microseconds). Names are bounded by metrics.operationNames (the
 * persisted operations', then the first 100 that valid operations with a credential ran, then
 * `other`: a stranger's names and those of refused documents take no label of their own).
 *
 * Second in Yoga's list, after graphql-jit (which sets the execute function this one times), and
 * before the rate limit, so a refused operation is seen with its refusal. A document that does not
 * parse counts as `unknown` / parse_error; one that does not validate as validation_error. The
 * shared execution of multiplexed graphql-ws subscriptions (multiplex.ts) is not an operation of
 * its own: its subscribers are counted.
 */
export function operationMetrics(metrics: Metrics | undefined): Plugin {
  if (!metrics) return {};
  const describe = describer(metrics);
  return {
    onParse() {
      const started = performance.now();
      return ({ result }) => {
        metrics.graphqlParsed((performance.now() - started) / 1000);
        if (result instanceof Error || result === null) metrics.graphqlOperation(UNKNOWN, UNKNOWN, 'parse_error');
      };
    },
    onValidate({ params: { documentAST }, context }) {
      const started = performance.now();
      return ({ valid }) => {
        metrics.graphqlValidated((performance.now() - started) / 1000);
        if (valid) return;
        const { name, type } = describe(documentAST, (context as { params?: { operationName?: unknown } }).params?.operationName, false);
        metrics.graphqlOperation(name, type, 'validation_error');
      };
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      const { name, type } = describe(args.document, args.operationName, credentialed(args.contextValue));
      let seconds: number | undefined;
      // Timed around the executor itself (graphql-jit's or Yoga's), not the plugins' own hooks.
      setExecuteFn((execArgs) => {
        const started = performance.now();
        const result = executeFn(execArgs);
        const done = () => (seconds = (performance.now() - started) / 1000);
        if (result instanceof Promise) return result.finally(done);
        done();
        return result;
      });
      return {
        onExecuteDone({ result }) {
          metrics.graphqlOperation(name, type, outcomeOf(result), seconds);
        },
      };
    },
    onSubscribe({ args }) {
      if ((args.contextValue as { sharing?: { role?: string } } | undefined)?.sharing?.role === 'group') return;
      const { name, type } = describe(args.document, args.operationName, credentialed(args.contextValue));
      const started = performance.now();
      return {
        onSubscribeResult({ result }) {
          metrics.graphqlOperation(name, type, outcomeOf(result), (performance.now() - started) / 1000);
        },
        onSubscribeError() {
          metrics.graphqlOperation(name, type, 'server_error');
        },
      };
    },
  };
}

/** True when a partner's credential runs the operation (a request context with a principal). */
function credentialed(context: unknown): boolean {
  return (context as { principal?: unknown } | undefined)?.principal != null;
}

/**
 * The bounded name and the type of the operation a document and operation name select; a name not
 * labelled yet gets a label of its own only when `admit` (a valid operation a credential runs).
 */
function describer(metrics: Metrics) {
  const names = metrics.operationNames;
  return (document: DocumentNode, operationName: unknown, admit: boolean) => {
    const operation = getOperationAST(document, typeof operationName === 'string' ? operationName : undefined);
    return { name: names.label(operation?.name?.value, admit), type: operation?.operation ?? UNKNOWN };
  };
}

/**
 * What a later validation rule that throws (the cost limit, src/graphql/plugins/costLimit.ts)
 * reports: the operation refused while validating, counted as validation_error, since the throw
 * stops the validate hooks before this plugin's would see it.
 */
export function validationRefusals(metrics: Metrics | undefined): ((document: DocumentNode, operationName: string | undefined) => void) | undefined {
  if (!metrics) return undefined;
  const describe = describer(metrics);
  return (document, operationName) => {
    const { name, type } = describe(document, operationName, false);
    metrics.graphqlOperation(name, type, 'validation_error');
  };
}

/** Codes of a failure of the service or its provider, not of the request. */
const SERVER_CODES = new Set(['INTERNAL_ERROR', 'UPSTREAM_ERROR', 'SERVICE_UNAVAILABLE', 'REQUEST_TIMEOUT', 'NOT_IMPLEMENTED', 'MAIL_DELIVERY_FAILED']);

/**
 * ok without errors (or a stream that started); rate_limited when refused by the rate limit;
 * server_error when any error is the service's (an unexpected error is masked as INTERNAL_ERROR
 * later); client_error otherwise. Seen before masking: a domain error is still its AppError.
 */
export function outcomeOf(result: ExecutionResult | AsyncIterable<unknown>): GraphQLOutcome {
  if (isAsyncIterable(result)) return 'ok';
  const errors = (result as ExecutionResult).errors;
  if (!errors?.length) return 'ok';
  let outcome: GraphQLOutcome = 'client_error';
  for (const error of errors) {
    const code = codeOf(error);
    if (code === 'RATE_LIMIT_EXCEEDED') return 'rate_limited';
    if (code === null || SERVER_CODES.has(code)) outcome = 'server_error';
  }
  return outcome;
}

/** The error's code; null for an unexpected error (one that will be masked). */
function codeOf(error: GraphQLError): string | null {
  const code = error.extensions?.code;
  if (typeof code === 'string') return code;
  const original = error.originalError;
  if (original instanceof AppError) return original.code;
  // graphql-js's own errors (a variable that does not coerce) carry no original error.
  return original && !(original as { extensions?: unknown }).extensions ? null : 'BAD_REQUEST';
}
