import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { getOperationAST, getVariableValues, GraphQLError, parse, validate, type ExecutionArgs, type ValidationRule } from 'graphql';
import { createGraphQLError, createYoga, isAsyncIterable, isPromise, processRegularResult, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Config } from '../config.js';
import type { AppDeps, RequestContext } from '../context.js';
import { useRateLimit } from './rateLimit.js';
import { schema } from '../schema/index.js';
import { AppError } from '../services/kernel/index.js';
import { documentCost } from './cost.js';

/** Server context handed to yoga.fetch: the request context the HTTP layer built. */
export interface GraphQLServerContext {
  ctx: RequestContext;
}

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
 * The GraphQL server over the Pothos schema. Domain errors keep their code and details in
 * `extensions`; anything else is masked as INTERNAL_ERROR with the request id.
 *
 * Protection (GRAPHQL_* settings, docs/decisions.md "GraphQL limits"): depth, alias, token and
 * directive limits (graphql-armor), a cost limit on the rate limit's documentCost, CSRF prevention,
 * introspection and GraphiQL switches, suggestions hidden, persisted operations. The limits and
 * switches are envelop plugins, so graphql-ws (which runs operations through yoga.getEnveloped)
 * gets the same parse, validate and execute.
 */
export function createGraphQL(deps: Pick<AppDeps, 'config' | 'logger'>): GraphQLServer {
  const { config, logger } = deps;
  const settings = config.graphql;
  const persisted = settings.persistedOperationsFile ? loadPersistedOperations(settings.persistedOperationsFile) : null;
  const persistedOperations = persisted
    ? usePersistedOperations({
        getPersistedOperation: (id) => persisted.get(id) ?? null,
        allowArbitraryOperations: !settings.persistedOnly,
        customErrors: {
          notFound: () => persistedErrors.notFound(),
          persistedQueryOnly: () => persistedErrors.only(),
          keyNotFound: () => persistedErrors.missing(),
        },
      })
    : {};
  const yoga = createYoga<GraphQLServerContext, RequestContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // CORS is decided for every surface at once (rest-adapters/transport.ts, CORS_ORIGINS).
    cors: false,
    graphiql: settings.graphiql ? { title: 'Channel API', defaultQuery: '{ channel { userId name tier } }' } : false,
    context: ({ ctx }) => ctx,
    logging: {
      debug: (...args) => logger.debug(args.length === 1 ? args[0] : args),
      info: (...args) => logger.info(args.length === 1 ? args[0] : args),
      warn: (...args) => logger.warn(args.length === 1 ? args[0] : args),
      error: (...args) => logger.error(args.length === 1 ? args[0] : args),
    },
    maskedErrors: { maskError },
    // No field takes a file: a multipart/form-data POST is an unsupported media type (415).
    multipart: false,
    plugins: [
      // HTTP-level refusals with a GraphQL error body and a code (415, 406, malformed parameters).
      httpRequestErrors(),
      // No "Did you mean ...?" in any error (before variableRequestErrors, which marks what it answers).
      settings.blockFieldSuggestions ? suggestionsHidden() : {},
      // Variable values that fail coercion: request errors with a code (400).
      variableRequestErrors(),
      EnvelopArmorPlugin(armorConfig(settings)),
      costLimit(settings.maxCost),
      csrfPrevention(),
      settings.introspection ? {} : introspectionDisabled(),
      persistedOperations,
      // Charges each operation's cost to the channel's rate limit (src/graphql/rateLimit.ts).
      useRateLimit(),
    ],
  });
  return {
    yoga,
    operationSource(payload) {
      const query = typeof payload.query === 'string' && payload.query !== '' ? payload.query : undefined;
      if (query !== undefined) return persisted && settings.persistedOnly ? persistedErrors.only() : query;
      const id = persisted ? persistedOperationId(payload.extensions) : null;
      if (id === null) return persistedErrors.missing();
      return persisted!.get(id) ?? persistedErrors.notFound();
    },
  };
}

type Limits = Config['graphql'];
type ArmorConfig = NonNullable<Parameters<typeof EnvelopArmorPlugin>[0]>;

/** Codes of the limit errors: one per limit, with `details.limit` (and `details.found`). */
export const LIMIT_CODES = {
  depth: 'DEPTH_LIMIT_EXCEEDED',
  aliases: 'ALIAS_LIMIT_EXCEEDED',
  tokens: 'TOKEN_LIMIT_EXCEEDED',
  directives: 'DIRECTIVE_LIMIT_EXCEEDED',
  cost: 'COST_LIMIT_EXCEEDED',
} as const;

/**
 * graphql-armor's plugins with our limits. Each refusal becomes an error with a code of its own
 * instead of armor's "Syntax Error: ..." message: validation rules report it to the validation
 * context (so it is an ordinary validation error: HTTP 400 with application/graphql-response+json),
 * the token limit, enforced while parsing, throws it as a parse error.
 */
function armorConfig(limits: Limits): ArmorConfig {
  const refuse = (kind: keyof typeof LIMIT_CODES, limit: number) => ({
    propagateOnRejection: false,
    exposeLimits: true,
    onReject: [
      (context: import('graphql').ValidationContext | null, error: GraphQLError) => {
        const refusal = limitError(kind, limit, error.message);
        if (context) context.reportError(refusal);
        else throw refusal;
      },
    ],
  });
  return {
    // Fragments and inline fragments (the booking mutations' result unions) add no level.
    maxDepth: { n: limits.maxDepth, flattenFragments: true, ignoreIntrospection: true, ...refuse('depth', limits.maxDepth) },
    maxAliases: { n: limits.maxAliases, ...refuse('aliases', limits.maxAliases) },
    maxTokens: { n: limits.maxTokens, ...refuse('tokens', limits.maxTokens) },
    maxDirectives: { n: limits.maxDirectives, ...refuse('directives', limits.maxDirectives) },
    // The cost limit is ours (costLimit below), on the cost the rate limit charges.
    costLimit: { enabled: false },
    // Armor's only covers some validation errors (not enum values, not variables): suggestionsHidden does it all.
    blockFieldSuggestion: { enabled: false },
  };
}

const LIMIT_MESSAGES: Record<keyof typeof LIMIT_CODES, (limit: number, found: number | undefined) => string> = {
  depth: (limit, found) => `The operation is nested ${found} levels deep; at most ${limit} are allowed`,
  aliases: (limit, found) => `The operation uses ${found} aliases; at most ${limit} are allowed`,
  tokens: (limit) => `The document has more than ${limit} tokens; at most ${limit} are allowed`,
  directives: (limit, found) => `The operation uses ${found} directives; at most ${limit} are allowed`,
  cost: (limit, found) => `The operation costs ${found} points; at most ${limit} are allowed`,
};

function limitError(kind: keyof typeof LIMIT_CODES, limit: number, armorMessage: string): GraphQLError {
  const match = /found (\d+(?:\.\d+)?)/.exec(armorMessage);
  const found = match ? Number(match[1]) : undefined;
  return new GraphQLError(LIMIT_MESSAGES[kind](limit, found), {
    extensions: { code: LIMIT_CODES[kind], details: found === undefined ? { limit } : { limit, found } },
  });
}

/**
 * GRAPHQL_BLOCK_FIELD_SUGGESTIONS: no "Did you mean ...?" in any error, so a schema whose
 * introspection is off cannot be guessed name by name. graphql-js's own `hideSuggestions` option,
 * given to every validation (every rule: fields, arguments, input object fields, enum values,
 * types, directive arguments) and to every execution and subscription; graphql-js then leaves the
 * suggestion out and writes the rest of the message as before. Validation, execution and
 * subscription go through this envelop, over HTTP (GET, POST, SSE) and graphql-ws alike.
 *
 * Variables: Yoga's executor (@graphql-tools/executor 2.1) coerces them with graphql-js's
 * coerceInputValue without handing hideSuggestions on, so an enum value or an input object field
 * in variables would still be suggested. They are coerced here first, by graphql-js's
 * getVariableValues with the option: variables that fail are answered with its errors (the
 * executor's, less the suggestion) and the operation goes no further; variables that pass go on
 * to the executor unchanged.
 */
function suggestionsHidden(): Plugin {
  const hidden = { hideSuggestions: true } satisfies Pick<ExecutionArgs, 'hideSuggestions'>;
  type Run = (args: Pick<ExecutionArgs, 'schema' | 'document' | 'operationName' | 'variableValues'>) => unknown;
  const withoutSuggestions =
    <F extends Run>(run: F) =>
    (args: Parameters<F>[0]) => {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.variableDefinitions?.length) {
        const coerced = getVariableValues(args.schema, operation.variableDefinitions, args.variableValues ?? {}, hidden);
        if (coerced.errors) return { errors: coerced.errors };
      }
      return run(Object.assign({}, args, hidden));
    };
  return {
    onValidate({ validateFn, setValidationFn }) {
      setValidationFn((schema, documentAST, rules, options, typeInfo) =>
        validateFn(schema, documentAST, rules, { ...options, ...hidden }, typeInfo),
      );
    },
    onExecute({ executeFn, setExecuteFn }) {
      setExecuteFn(withoutSuggestions(executeFn));
    },
    onSubscribe({ subscribeFn, setSubscribeFn }) {
      setSubscribeFn(withoutSuggestions(subscribeFn));
    },
  };
}

/**
 * GRAPHQL_MAX_COST: an operation whose documentCost (the points the rate limit charges, with the
 * request's variables: `first: $n` counts n) is over the limit is refused while validating, before
 * it runs or is charged. The check follows validation (a valid document only) on every request,
 * cached validation results included; the refusal is thrown rather than added to the result, so
 * Yoga's validation cache, keyed by the document alone, never keeps it for other variables.
 */
function costLimit(limit: number): Plugin {
  return {
    onValidate({ params: { documentAST, schema: validatedSchema }, context }) {
      return ({ valid }) => {
        if (!valid) return;
        const params = (context as { params?: { variables?: unknown; operationName?: unknown } }).params;
        const variables = params?.variables && typeof params.variables === 'object' ? (params.variables as Record<string, unknown>) : null;
        const operationName = typeof params?.operationName === 'string' ? params.operationName : undefined;
        const cost = documentCost(documentAST, variables, { schema: validatedSchema, operationName });
        if (cost > limit) {
          throw new GraphQLError(LIMIT_MESSAGES.cost(limit, cost), {
            // As Yoga marks validation errors: 400 with application/graphql-response+json.
            extensions: { code: LIMIT_CODES.cost, details: { limit, found: cost }, http: { spec: true, status: 400 } },
          });
        }
      };
    },
  };
}

/**
 * Request errors graphql-js reports while starting an execution (execute or subscribe returns
 * `{ errors }` without `data`): a variable value that fails coercion (wrong type, invalid enum
 * value, a bad DateTime or Money, a missing or null required variable) is BAD_USER_INPUT, an
 * operation that cannot be chosen (several without operationName, an unknown name) BAD_REQUEST.
 * Marked as Yoga marks validation errors: HTTP 400 with application/graphql-response+json, 200
 * with plain application/json. Rebuilt without originalError, so maskError keeps the message
 * (which names the variable) rather than unwrapping it to the scalar's bare reason. Errors with a
 * path (a subscription resolver refusing before its stream starts) are left to maskError.
 */
function variableRequestErrors(): Plugin {
  type Result = { data?: unknown; errors?: readonly GraphQLError[] };
  const requestError = (error: GraphQLError): GraphQLError => {
    // An error with a path is a resolver's (a subscription's source refused: UNAUTHORIZED, ...): maskError decides it.
    if (error.path !== undefined) return error;
    const code = error.extensions?.code ?? (error.message.startsWith('Variable "$') ? 'BAD_USER_INPUT' : 'BAD_REQUEST');
    return new GraphQLError(error.message, { nodes: error.nodes, extensions: { ...error.extensions, code, http: { spec: true, status: 400 } } });
  };
  const mark = <T>(result: T): T => {
    if (!result || typeof result !== 'object' || isAsyncIterable(result)) return result;
    const r = result as Result;
    if ('data' in r || !r.errors?.length) return result;
    return { ...r, errors: r.errors.map(requestError) } as T;
  };
  return {
    onExecute({ executeFn, setExecuteFn }) {
      setExecuteFn(async (args) => mark(await executeFn(args)));
    },
    onSubscribe({ subscribeFn, setSubscribeFn }) {
      setSubscribeFn(async (args) => mark(await subscribeFn(args)));
    },
  };
}

const JSON_MEDIA_TYPES = ['application/graphql-response+json', 'application/json'] as const;

/**
 * The JSON media type Yoga would answer in for this Accept header (the first entry that admits
 * one; a wildcard means application/json), or null when it admits none. As Yoga reads it:
 * parameters dropped, an entry with a charset other than utf-8 skipped, no header is any.
 */
function acceptedJsonType(request: Request): (typeof JSON_MEDIA_TYPES)[number] | null {
  const entries = (request.headers.get('accept') || '*/*').replace(/\s/g, '').toLowerCase().split(',');
  for (const entry of entries) {
    const [type = '', ...params] = entry.split(';');
    const charset = params.find((p) => p.includes('charset='));
    if (charset !== undefined && charset !== 'charset=utf-8') continue;
    if (type === JSON_MEDIA_TYPES[0]) return JSON_MEDIA_TYPES[0];
    const [pre, suf] = type.split('/');
    if ((pre === '*' || pre === 'application') && (suf === '*' || suf === 'json')) return 'application/json';
  }
  return null;
}

/**
 * Refusals Yoga makes at the HTTP level, given a GraphQL error body with a code (Yoga answers the
 * first two with an empty body, and the third as a masked SyntaxError, INTERNAL_ERROR with 200):
 * - a POST in a media type no parser reads (text/plain, multipart/form-data, none): 415
 *   UNSUPPORTED_MEDIA_TYPE;
 * - a GET, or a form POST, whose `variables` or `extensions` parameter is not JSON: 400 BAD_REQUEST;
 * - a subscription from a client accepting JSON only (a subscription is an event stream): 406
 *   NOT_ACCEPTABLE. An Accept that admits no JSON keeps the empty 406: nothing it reads can say why.
 */
function httpRequestErrors(): Plugin {
  const malformed = () =>
    createGraphQLError('The `variables` and `extensions` parameters must be JSON objects', {
      extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
    });
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (!requestParser) {
        // Thrown when Yoga parses, after its method check (405 for a method it does not serve).
        setRequestParser(() => {
          const type = request.headers.get('content-type');
          throw createGraphQLError(
            `${type ? `The media type ${type.split(';')[0]!.trim()} is not supported` : 'The request has no content type'}: send a POST as application/json (or a GET with query parameters)`,
            { extensions: { code: 'UNSUPPORTED_MEDIA_TYPE', http: { status: 415 } } },
          );
        });
        return;
      }
      const parse = requestParser;
      // Yoga's query-string parser (GET, application/x-www-form-urlencoded) throws JSON.parse's SyntaxError.
      const refuse = (error: unknown): never => {
        throw error instanceof SyntaxError ? malformed() : error;
      };
      setRequestParser((req) => {
        try {
          const parsed = parse(req);
          return isPromise(parsed) ? parsed.catch(refuse) : parsed;
        } catch (error) {
          return refuse(error);
        }
      });
    },
    onResultProcess({ request, result, resultProcessor, setResult, setResultProcessor }) {
      if (resultProcessor) return;
      const type = acceptedJsonType(request);
      if (!type) return;
      // Only an event stream can carry what ran (a subscription); end it, as nobody will read it.
      if (isAsyncIterable(result)) void result[Symbol.asyncIterator]().return?.();
      setResult({
        errors: [
          createGraphQLError('A subscription is answered as an event stream: send Accept: text/event-stream, or subscribe over graphql-ws', {
            extensions: { code: 'NOT_ACCEPTABLE', http: { status: 406 } },
          }),
        ],
      });
      setResultProcessor(processRegularResult, type);
    },
  };
}

/**
 * Yoga's CSRF prevention: a request must be one a browser preflights: a content type other than
 * the three "simple" ones (application/json, as every GraphQL client sends), or a header a page
 * cannot set without a preflight. The credential headers count (X-Api-Key and Authorization are
 * not CORS-safelisted), as do the headers Yoga and Apollo clients send for this purpose. The
 * refusal is 403 CSRF_PREVENTION. GraphiQL's page (a GET for text/html) is served before this.
 */
export const CSRF_HEADERS = ['x-graphql-yoga-csrf', 'graphql-require-preflight', 'apollo-require-preflight', 'x-apollo-operation-name', 'x-api-key', 'authorization'];

function csrfPrevention(): Plugin {
  const inner = useCSRFPrevention({ requestHeaders: CSRF_HEADERS });
  return {
    onRequestParse(payload) {
      try {
        return inner.onRequestParse!(payload);
      } catch {
        throw createGraphQLError(
          'This request could be sent by any web page (no preflight): send it with content-type application/json, or with an X-GraphQL-Yoga-CSRF header',
          { extensions: { code: 'CSRF_PREVENTION', http: { status: 403 } } },
        );
      }
    },
  };
}

/** GRAPHQL_INTROSPECTION=false: __schema and __type are refused (__typename stays). */
function introspectionDisabled(): Plugin {
  // The two entry points into the introspection types; what is selected under them is refused with them.
  const rule: ValidationRule = (context) => ({
    Field(node) {
      if (node.name.value === '__schema' || node.name.value === '__type') {
        context.reportError(
          new GraphQLError(`Introspection is disabled on this server (field "${node.name.value}"); the schema is published as schema.graphql`, {
            nodes: node,
            extensions: { code: 'INTROSPECTION_DISABLED' },
          }),
        );
      }
    },
  });
  return { onValidate: ({ addValidationRule }) => addValidationRule(rule) };
}

const persistedErrors = {
  notFound: () =>
    createGraphQLError('No persisted operation has this hash', {
      extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { status: 400 } },
    }),
  only: () =>
    createGraphQLError('This server runs only persisted operations: send extensions.persistedQuery.sha256Hash instead of a query', {
      extensions: { code: 'PERSISTED_QUERY_ONLY', http: { status: 400 } },
    }),
  missing: () =>
    createGraphQLError('Send a query, or the hash of a persisted operation in extensions.persistedQuery.sha256Hash', {
      extensions: { code: 'QUERY_REQUIRED', http: { status: 400 } },
    }),
};

/** The Apollo convention Yoga's plugin reads: extensions.persistedQuery = { version: 1, sha256Hash }. */
function persistedOperationId(extensions: unknown): string | null {
  const pq = (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | null | undefined)?.persistedQuery;
  return pq && pq.version === 1 && typeof pq.sha256Hash === 'string' ? pq.sha256Hash : null;
}

/**
 * The persisted operations in GRAPHQL_PERSISTED_OPERATIONS_FILE: an object of hash -> document
 * (the shape of GraphQL Code Generator's persisted-documents.json) or an array of documents, each
 * stored under the SHA-256 (hex) of its text. Every document must parse and validate against the
 * schema, or the service does not start.
 */
export function loadPersistedOperations(path: string): ReadonlyMap<string, string> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`GRAPHQL_PERSISTED_OPERATIONS_FILE ${path}: ${(error as Error).message}`);
  }
  if (!raw || typeof raw !== 'object') {
    throw new Error(`GRAPHQL_PERSISTED_OPERATIONS_FILE ${path}: expected an object of hash -> document or an array of documents`);
  }
  const entries: [string, unknown][] = Array.isArray(raw)
    ? raw.map((doc, i) => [typeof doc === 'string' ? operationHash(doc) : `#${i}`, doc])
    : Object.entries(raw);
  const operations = new Map<string, string>();
  for (const [id, doc] of entries) {
    if (typeof doc !== 'string') throw new Error(`GRAPHQL_PERSISTED_OPERATIONS_FILE ${path}: ${id} is not a document string`);
    let errors: readonly GraphQLError[];
    try {
      errors = validate(schema, parse(doc));
    } catch (error) {
      errors = [error as GraphQLError];
    }
    if (errors.length) {
      throw new Error(`GRAPHQL_PERSISTED_OPERATIONS_FILE ${path}: operation ${id} is not valid: ${errors.map((e) => e.message).join('; ')}`);
    }
    operations.set(id, doc);
  }
  return operations;
}

/** The id a client sends for a document: SHA-256 of its exact text, in hex. */
export function operationHash(document: string): string {
  return createHash('sha256').update(document).digest('hex');
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
