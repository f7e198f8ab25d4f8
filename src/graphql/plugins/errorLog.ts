import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { AppError } from '../../services/kernel/index.js';
import { isGraphQLError } from '../maskError.js';

/**
 * GraphQL's failures in the request's log. Yoga logs every error it masks with its own logger, so
 * without the request id, and at `error` with a stack even for a refusal the client is meant to
 * see (a wrong API key, a validation error). Here, when an operation's result is ready (before
 * masking), each error the service made (not an AppError, or one of 5xx) is logged at `error` by
 * the request's logger (its request id, and trace id with tracing on); the refusals are the
 * client's business and not logged again (a refused credential has its `info` line from the
 * credential check). `quiet` tells yoga.ts's logging which errors need no line of Yoga's.
 */
export function requestErrorLog(): { plugin: Plugin; quiet(error: unknown): boolean } {
  const logged = new WeakSet<object>();
  // One hooks object for every operation: nothing is made per operation that has no error.
  const done: ReturnType<NonNullable<Plugin['onExecute']>> = {
    onExecuteDone({ args, result }) {
      const errors = 'errors' in result ? result.errors : undefined;
      if (!errors?.length) return;
      let logger: Logger | undefined;
      for (const error of errors) {
        const original = rootOf(error);
        if (isRefusal(original) || isGraphQLError(original)) continue;
        logger ??= (args.contextValue as { logger?: Logger }).logger;
        if (!logger) return;
        logger.error({ err: original, path: error.path?.join('.') }, 'GraphQL operation failed');
        logged.add(error);
      }
    },
  };
  const plugin: Plugin = { onExecute: () => done };
  return {
    plugin,
    quiet: (error) => typeof error === 'object' && error !== null && (logged.has(error) || (isGraphQLError(error) && isRefusal(rootOf(error)))),
  };
}

function rootOf(error: GraphQLError): unknown {
  let original: unknown = error;
  while (isGraphQLError(original) && original.originalError) original = original.originalError;
  return original;
}

function isRefusal(error: unknown): boolean {
  return error instanceof AppError && error.status < 500;
}
