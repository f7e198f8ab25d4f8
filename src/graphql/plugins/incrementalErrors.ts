import { handleStreamOrSingleExecutionResult, type Plugin, type YogaLogger } from 'graphql-yoga';

type MaskError = (error: unknown, message: string) => Error;

interface Payload {
  result: { incremental?: ReadonlyArray<{ errors?: ReadonlyArray<unknown> }> };
  setResult: (result: never) => void;
}

/**
 * Errors inside the payloads that follow the first of an incremental result (a deferred fragment's
 * or a streamed item's, in `incremental[].errors`) are masked as Yoga masks top-level ones: with the
 * same maskError (src/graphql/maskError.ts: a domain error keeps its code and details, anything
 * else is INTERNAL_ERROR), their path and locations kept, and the original logged when it was
 * replaced. Yoga's masking (envelop's useMaskedErrors) only sees `errors` at the top of each payload,
 * so without this an internal error in a deferred fragment reached the client with its own message.
 */
export function incrementalErrors(maskError: MaskError, message: string): Plugin {
  let logger: YogaLogger | undefined;
  const mask = (error: unknown) => {
    const masked = maskError(error, message);
    if (masked !== error) logger?.error(error);
    return masked;
  };
  const maskPayload = ({ result, setResult }: Payload) => {
    if (!result.incremental?.some((part) => part.errors?.length)) return;
    const incremental = result.incremental.map((part) => (part.errors?.length ? { ...part, errors: part.errors.map(mask) } : part));
    setResult({ ...result, incremental } as never);
  };
  return {
    onYogaInit({ yoga }) {
      logger = yoga.logger;
    },
    onExecute: () => ({
      onExecuteDone: (payload) => handleStreamOrSingleExecutionResult(payload, maskPayload as never),
    }),
    onSubscribe: () => ({
      onSubscribeResult: (payload) => handleStreamOrSingleExecutionResult(payload as never, maskPayload as never),
    }),
  };
}
