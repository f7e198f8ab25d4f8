import { GraphQLError } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { RequestContext } from './context.js';
import { useRateLimit } from '../rest-adapters/rateLimit.js';
import { schema } from './schema/index.js';
import { AppError } from './services/errors.js';

/** Server context handed to yoga.fetch: the request context the HTTP layer built. */
export interface GraphQLServerContext {
  ctx: RequestContext;
}

export type Yoga = YogaServerInstance<GraphQLServerContext, RequestContext>;

/**
 * The GraphQL server over the Pothos schema. Domain errors keep their code and details in
 * `extensions`; anything else is masked as INTERNAL_ERROR with the request id.
 */
export function createGraphQL(logger: Logger): Yoga {
  return createYoga<GraphQLServerContext, RequestContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: { title: 'Channel API', defaultQuery: '{ channel { userId name tier } }' },
    context: ({ ctx }) => ctx,
    logging: {
      debug: (...args) => logger.debug(args.length === 1 ? args[0] : args),
      info: (...args) => logger.info(args.length === 1 ? args[0] : args),
      warn: (...args) => logger.warn(args.length === 1 ? args[0] : args),
      error: (...args) => logger.error(args.length === 1 ? args[0] : args),
    },
    maskedErrors: { maskError },
    // Charges each operation's cost to the channel's rate limit (rest-adapters/rateLimit.ts).
    plugins: [useRateLimit()],
  });
}

export function maskError(error: unknown, _message: string): Error {
  // Executors may wrap an error more than once; the cause is at the bottom of the chain.
  let original: unknown = error;
  while (isGraphQLError(original) && original.originalError) original = original.originalError;
  const located = isGraphQLError(error) ? { nodes: error.nodes, path: error.path } : {};
  if (original instanceof AppError) {
    return new GraphQLError(original.message, {
      ...located,
      extensions: { code: original.code, details: original.details },
    });
  }
  // Errors graphql-js raised itself (syntax, validation, coercion) are meant for the client.
  if (isGraphQLError(original)) return original;
  return new GraphQLError('An internal error occurred; quote the request id to support', {
    ...located,
    extensions: { code: 'INTERNAL_ERROR' },
  });
}

/**
 * By tag rather than instanceof: graphql ships CommonJS and ESM builds, and an error made by one
 * is not an instance of the other's class.
 */
function isGraphQLError(value: unknown): value is GraphQLError {
  return Object.prototype.toString.call(value) === '[object GraphQLError]';
}
