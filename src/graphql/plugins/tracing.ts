import { SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Tracing } from '../../telemetry/tracing.js';

/**
 * GraphQL's spans, with tracing on (src/telemetry/tracing.ts): `graphql.parse`,
 * `graphql.validate` and `graphql.execute` (named `query bookings`, `mutation book` when the
 * operation has a name), children of the request's server span. The execution is the active span
 * while resolvers run, so the provider calls and database statements they make are its children.
 *
 * Our own plugin rather than @envelop/opentelemetry: that one brings @opentelemetry/sdk-trace-base
 * 1.x beside the 2.x the service uses, reads the global tracer provider and context manager (the
 * service registers none, so instances in one process keep their traces apart), and wraps every
 * resolver in a span of its own, a cost per field. Last in the plugin list, so the execute
 * function it wraps is the one that runs (graphql-jit's or Yoga's, with the others' wrappers).
 */
export function graphqlTracing(tracing: Tracing): Plugin {
  return {
    onParse() {
      const span = tracing.startSpan('graphql.parse');
      return ({ result }) => {
        if (result instanceof Error) fail(span, result);
        span.end();
      };
    },
    onValidate() {
      const span = tracing.startSpan('graphql.validate');
      return ({ valid, result }) => {
        if (!valid) {
          span.setAttribute('graphql.validation.errors', result.length);
          span.setStatus({ code: SpanStatusCode.ERROR, message: result[0]?.message ?? 'invalid' });
        }
        span.end();
      };
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName);
      const type = operation?.operation ?? 'query';
      const name = operation?.name?.value;
      const span = tracing.startSpan(name ? `${type} ${name}` : 'graphql.execute', {
        attributes: { 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) },
      });
      const inside = trace.setSpan(tracing.active(), span);
      setExecuteFn((execution) => tracing.with(inside, () => executeFn(execution)));
      return {
        onExecuteDone({ result }) {
          // An incremental result (@defer, @stream) ends its span when its first payload is ready.
          const errors = 'errors' in result ? result.errors : undefined;
          if (errors?.length) {
            span.setAttribute('graphql.errors', errors.length);
            span.setStatus({ code: SpanStatusCode.ERROR, message: errors[0]?.message ?? 'error' });
          }
          span.end();
        },
      };
    },
  };
}

function fail(span: Span, error: Error): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
}
