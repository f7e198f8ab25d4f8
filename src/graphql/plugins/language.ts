import {
  getDirectiveValues,
  getOperationAST,
  getVariableValues,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { OperationContext } from '../../context.js';
import { isLanguage, type Language } from '../../services/kernel/index.js';
import { IN_CONTEXT } from '../../schema/content.js';

/**
 * `@inContext(language:)` (src/schema/content.ts): the language of the operation's texts. Before
 * the operation runs (execute or subscribe, whichever executor: Yoga's or graphql-jit's), the
 * directive's value becomes the operation's language (context.ts's OperationContext.serveIn;
 * otherwise it reads the request's, negotiated from Accept-Language). An operation without the
 * directive keeps the request's language. Validation has checked the directive (known, on an
 * operation, a Language value); a variable's value is read as graphql-js coerces it. Over HTTP
 * the response carries `Content-Language`, the language the operation was served in, and `Vary:
 * Accept-Language`.
 */
export function operationLanguage(): Plugin {
  // The language each HTTP request's operation was served in, by request context (Content-Language).
  const served = new WeakMap<object, Language>();
  const set = ({ args }: { args: OperationArgs }) => {
    const context = args.contextValue;
    if (!(context instanceof OperationContext)) return;
    const language = languageOf(args);
    if (language !== undefined) context.serveIn(language);
    served.set(context.ctx, context.language);
  };
  return {
    onExecute: set,
    onSubscribe: set,
    // The answer says which language its texts are in, as REST's do (no operation ran: no header).
    onResponse({ serverContext, response }) {
      const request = (serverContext as { ctx?: unknown } | undefined)?.ctx;
      const language = typeof request === 'object' && request !== null ? served.get(request) : undefined;
      if (language) {
        response.headers.set('Content-Language', language);
        // A GET (a persisted or cacheable query) differs by Accept-Language unless @inContext fixed it.
        response.headers.append('Vary', 'Accept-Language');
      }
    },
  };
}

interface OperationArgs {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null | undefined;
  variableValues?: Readonly<Record<string, unknown>> | null | undefined;
  contextValue?: unknown;
}

/** The language @inContext names on the operation that runs, or undefined (none, or a value execution will refuse). */
export function languageOf(args: OperationArgs): Language | undefined {
  const operation = getOperationAST(args.document, args.operationName);
  const node = operation?.directives?.find((d) => d.name.value === IN_CONTEXT);
  const directive = node && args.schema.getDirective(IN_CONTEXT);
  if (!operation || !directive) return undefined;
  const variables = coercedVariables(args.schema, operation, args.variableValues);
  if (!variables) return undefined;
  try {
    const value = getDirectiveValues(directive, operation, variables)?.['language'];
    return typeof value === 'string' && isLanguage(value) ? value : undefined;
  } catch {
    // A variable the directive cannot take: the executor refuses the operation itself.
    return undefined;
  }
}

function coercedVariables(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  given: Readonly<Record<string, unknown>> | null | undefined,
): Record<string, unknown> | undefined {
  if (!operation.variableDefinitions?.length) return {};
  const coerced = getVariableValues(schema, operation.variableDefinitions, given ?? {}, { maxErrors: 1 });
  return 'coerced' in coerced ? coerced.coerced : undefined;
}
