/**
 * What a service needs of a request: its caller and its provider call options. Generic over the
 * context so the kernel depends on no other module (src/context.ts builds the context itself).
 */

/**
 * The provider call options of a request: its abort signal and sandbox scenario, and the request
 * itself as `log` (its `logger`, with the request id, made only if the provider call logs a line).
 */
export function callOptions<S, L>(ctx: { readonly signal: AbortSignal | undefined; readonly scenario: S; readonly logger: L }): {
  signal: AbortSignal | undefined;
  scenario: S;
  log: { readonly logger: L };
} {
  return { signal: ctx.signal, scenario: ctx.scenario, log: ctx };
}

/** Narrows a context whose route or field already required authentication. */
export function principalOf<P>(ctx: { readonly principal: P | null }): P {
  if (!ctx.principal) throw new Error('principalOf called on an unauthenticated context');
  return ctx.principal;
}
