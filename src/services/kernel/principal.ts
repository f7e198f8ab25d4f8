/**
 * What a service needs of a request: its caller and its provider call options. Generic over the
 * context so the kernel depends on no other module (src/context.ts builds the context itself).
 */

/** The provider call options of a request: its abort signal and sandbox scenario. */
export function callOptions<S>(ctx: { readonly signal: AbortSignal | undefined; readonly scenario: S }): {
  signal: AbortSignal | undefined;
  scenario: S;
} {
  return { signal: ctx.signal, scenario: ctx.scenario };
}

/** Narrows a context whose route or field already required authentication. */
export function principalOf<P>(ctx: { readonly principal: P | null }): P {
  if (!ctx.principal) throw new Error('principalOf called on an unauthenticated context');
  return ctx.principal;
}
