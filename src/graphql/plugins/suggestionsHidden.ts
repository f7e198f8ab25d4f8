import { getOperationAST, getVariableValues, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';

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
export function suggestionsHidden(): Plugin {
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
