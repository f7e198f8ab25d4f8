import { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { BadRequestError, ERROR_CODES, type ErrorCode } from '../../services/kernel/index.js';
import { errorExtensions } from '../errors.js';

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
export function variableRequestErrors(): Plugin {
  type Result = { data?: unknown; errors?: readonly GraphQLError[] };
  const requestError = (error: GraphQLError): GraphQLError => {
    // An error with a path is a resolver's (a subscription's source refused: UNAUTHORIZED, ...): maskError decides it.
    if (error.path !== undefined) return error;
    const given = error.extensions?.code;
    const code: ErrorCode = isErrorCode(given) ? given : error.message.startsWith('Variable "$') ? 'BAD_USER_INPUT' : 'BAD_REQUEST';
    const refusal = new BadRequestError(code, error.message);
    return new GraphQLError(error.message, { nodes: error.nodes, extensions: { ...error.extensions, ...errorExtensions(refusal, { spec: true }) } });
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

const CODES: ReadonlySet<unknown> = new Set(ERROR_CODES);
const isErrorCode = (value: unknown): value is ErrorCode => CODES.has(value);
