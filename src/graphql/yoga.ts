import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { GraphQLError } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { AppDeps, OperationContext, RequestContext } from '../context.js';
import type { GraphiQLPage } from './graphiql/page.js';
import { maskError } from './maskError.js';
import { costLimit } from './plugins/costLimit.js';
import { streamArguments } from './plugins/streamArguments.js';
import { documentNestingLimit } from './plugins/documentNesting.js';
import { csrfPrevention } from './plugins/csrfPrevention.js';
import { requestErrorLog } from './plugins/errorLog.js';
import { httpRequestErrors } from './plugins/httpRequestErrors.js';
import { incrementalDelivery } from './plugins/incrementalDelivery.js';
import { incrementalErrors } from './plugins/incrementalErrors.js';
import { introspectionDisabled } from './plugins/introspectionDisabled.js';
import { jitExecution } from './plugins/jit.js';
import { operationLanguage } from './plugins/language.js';
import { armorConfig } from './plugins/limits.js';
import { operationMetrics, validationRefusals } from './plugins/metrics.js';
import { persistedOperations } from './plugins/persistedOperations.js';
import { suggestionsHidden } from './plugins/suggestionsHidden.js';
import { graphqlTracing } from './plugins/tracing.js';
import { variableDepthLimit } from './plugins/variableDepth.js';
import { variableRequestErrors } from './plugins/variableRequestErrors.js';
import { useRateLimit } from './rateLimit.js';
import { servedSchema } from './schema.js';

/**
 * The server context handed to Yoga: the operation's context over the request context the HTTP
 * layer (or graphql-ws) built, which envelop extends in place and the resolvers read as the
 * request context (context.ts).
 */
export type GraphQLServerContext = OperationContext;

/** Yoga's default; maskError (maskError.ts) writes its own message and ignores it. */
const ERROR_MESSAGE = 'Unexpected error.';

export type Yoga = YogaServerInstance<GraphQLServerContext, RequestContext>;

/** The GraphQL server, and what graphql-ws needs to apply the same operation rules. */
export interface GraphQLServer {
  yoga: Yoga;
  /**
   * The document text of a graphql-ws subscribe payload under the persisted-operation rules
   * (the HTTP path applies them with Yoga's plugin), or the error refusing it.
   */
  operationSource(payload: { query?: unknown; extensions?: unknown }): string | GraphQLError;
}

/**
 * The GraphQL server over the served schema (schema.ts). Domain errors keep their code and details in
 * `extensions`; anything else is masked as INTERNAL_ERROR with the request id (maskError.ts).
 *
 * Protection (GRAPHQL_* settings, docs/decisions.md "GraphQL limits"): depth, alias, token and
 * directive limits (graphql-armor), a cost limit on the rate limit's documentCost, CSRF prevention,
 * introspection and GraphiQL switches, suggestions hidden, persisted operations. The limits and
 * switches are envelop plugins (one file each under plugins/), so graphql-ws (which runs
 * operations through yoga.getEnveloped) gets the same parse, validate and execute.
 *
 * @defer and @stream (docs/decisions.md "Incremental delivery"): payloads after the first over
 * multipart/mixed, SSE and graphql-ws, with the same masking, limits and rate-limit charge.
 *
 * Languages (docs/decisions.md "Content and languages"): texts are served in the language an
 * operation's @inContext(language:) names, else the one the request's Accept-Language prefers
 * (plugins/language.ts; over graphql-ws, connection_init's Accept-Language: ws.ts).
 *
 * GraphiQL is served when a page is given (renderGraphiQLPage in graphiql/page.ts, made once at
 * start when GRAPHQL_GRAPHIQL is on): the same bytes for every GET of /graphql that accepts HTML.
 */
export function createGraphQL(deps: Pick<AppDeps, 'config' | 'logger'> & Partial<Pick<AppDeps, 'metrics' | 'tracing'>>, graphiql: GraphiQLPage | null = null): GraphQLServer {
  const { config, logger, metrics } = deps;
  const settings = config.graphql;
  const persisted = persistedOperations(settings);
  // The persisted operations' names always get a label of their own.
  metrics?.operationNames.allow(persisted.operationNames);
  // The service's failures in the request's log; refusals (a wrong key, a bad input) not as errors.
  const errorLog = requestErrorLog();
  const yoga = createYoga<GraphQLServerContext, RequestContext>({
    // The Pothos schema with @defer and @stream (src/graphql/schema.ts), as schema.graphql prints it.
    schema: servedSchema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // CORS is decided for every surface at once (rest-adapters/transport.ts, CORS_ORIGINS).
    cors: false,
    graphiql: graphiql ? graphiql.options : false,
    ...(graphiql ? { renderGraphiQL: () => graphiql.body } : {}),
    logging: {
      debug: (...args) => logger.debug(args.length === 1 ? args[0] : args),
      info: (...args) => logger.info(args.length === 1 ? args[0] : args),
      warn: (...args) => logger.warn(args.length === 1 ? args[0] : args),
      error: (...args) => {
        if (args.length === 1 && errorLog.quiet(args[0])) return;
        logger.error(args.length === 1 ? args[0] : args);
      },
    },
    maskedErrors: { maskError, errorMessage: ERROR_MESSAGE },
    // No field takes a file: a multipart/form-data POST is an unsupported media type (415).
    multipart: false,
    // BODY_LIMIT_BYTES is enforced by the front (rest-adapters/front.ts), which reads the body
    // before Yoga does: Yoga's own limit (a TransformStream over every body) is off.
    maxRequestBodySize: false,
    plugins: [
      // graphql-jit for documents that run again (plugins/jit.ts). First: it replaces the execute
      // function, and the plugins below wrap whichever one runs.
      jitExecution(settings),
      // Operations by name and outcome, parse/validate/execute times (plugins/metrics.ts): next, so
      // it times the executor graphql-jit set and sees the rate limit's refusals.
      operationMetrics(metrics),
      // @inContext(language:): the operation's language replaces the request's (Accept-Language).
      operationLanguage(),
      // HTTP-level refusals with a GraphQL error body and a code (415, 406, malformed parameters).
      httpRequestErrors(),
      // Variables nested too deep: refused before anything walks them (plugins/variableDepth.ts).
      variableDepthLimit(),
      // Documents nested too deep (text, and through fragments): refused before they are parsed
      // or validated, so no recursive walk meets them (plugins/documentNesting.ts).
      documentNestingLimit(),
      // No "Did you mean ...?" in any error (before variableRequestErrors, which marks what it answers).
      settings.blockFieldSuggestions ? suggestionsHidden() : {},
      // Variable values that fail coercion: request errors with a code (400).
      variableRequestErrors(),
      EnvelopArmorPlugin(armorConfig(settings)),
      costLimit(settings, validationRefusals(metrics)),
      // @stream(initialCount:) below 0: a validation error, not a failure as it runs.
      streamArguments(),
      csrfPrevention(),
      settings.introspection ? {} : introspectionDisabled(),
      persisted.plugin,
      // @defer and @stream: incremental delivery over multipart/mixed, SSE and graphql-ws; the whole
      // result at once for a client accepting JSON only; refused in subscriptions (incrementalDelivery.ts).
      useDeferStream(),
      incrementalDelivery(),
      // Errors inside deferred and streamed payloads, masked as top-level ones are.
      incrementalErrors(maskError, ERROR_MESSAGE),
      // Charges each operation's cost to the channel's rate limit (src/graphql/rateLimit.ts).
      useRateLimit(),
      // Before Yoga's masking (its plugin comes after these): the errors' causes are still there.
      errorLog.plugin,
      // Spans of parse, validate and execute, with tracing on (plugins/tracing.ts). Last: it wraps
      // the execute function the others have set.
      deps.tracing ? graphqlTracing(deps.tracing) : {},
    ],
  });
  return { yoga, operationSource: persisted.operationSource };
}
