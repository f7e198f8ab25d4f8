import { GraphQLError } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { RequestContext } from './context.js';
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
  });
}

export function maskError(error: unknown, _message: string): Error {
  const graphQLError = error instanceof GraphQLError ? error : undefined;
  const original = graphQLError?.originalError ?? error;
  if (original instanceof AppError) {
    return new GraphQLError(original.message, {
      nodes: graphQLError?.nodes,
      path: graphQLError?.path,
      extensions: { code: original.code, details: original.details },
    });
  }
  // Errors graphql-js raised itself (syntax, validation, coercion) are meant for the client.
  if (graphQLError && !graphQLError.originalError) return graphQLError;
  return new GraphQLError('An internal error occurred; quote the request id to support', {
    nodes: graphQLError?.nodes,
    path: graphQLError?.path,
    extensions: { code: 'INTERNAL_ERROR' },
  });
}
