import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ValidationError } from '../../services/kernel/index.js';
import { errorExtensions } from '../errors.js';

/**
 * The nesting that `variables` may have, in objects and lists together: the deepest input the
 * schema takes is a few levels, and code that walks a value recursively (graphql-js's coercion,
 * the graphql-ws sharing key) must never meet one deep enough to overflow the stack (docs/decisions.md,
 * "Hardening: subscriptions and refused work").
 */
export const MAX_VARIABLE_DEPTH = 64;

/**
 * Whether `value` nests objects or lists more than `limit` levels (the value itself is level 1
 * when it is an object or a list). Iterative, and it stops at the first branch found too deep:
 * its work is bounded by the value's size whatever its shape.
 */
export function nestedDeeperThan(value: unknown, limit: number = MAX_VARIABLE_DEPTH): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  while (stack.length) {
    const { value: current, depth } = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > limit) return true;
    const children: unknown[] = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}

/** The refusal of variables nested too deep: 400 VALIDATION_ERROR naming `variables`. */
export function variablesTooDeep(): ValidationError {
  const reason = `nested more than ${MAX_VARIABLE_DEPTH} levels deep (objects and lists)`;
  return new ValidationError([{ field: 'variables', reason }], `The variables are ${reason}`);
}

/**
 * Yoga plugin: a request whose `variables` nest more than MAX_VARIABLE_DEPTH levels is a request
 * error, 400 VALIDATION_ERROR (whatever the Accept), before its document is parsed or its
 * variables read; it costs 1 point as any request that reaches no operation. graphql-ws applies
 * the same check to its subscribe payloads (ws.ts).
 */
export function variableDepthLimit(): Plugin {
  return {
    onParams({ params, setResult }) {
      if (!nestedDeeperThan(params.variables)) return;
      const refusal = variablesTooDeep();
      setResult({ errors: [new GraphQLError(refusal.message, { extensions: errorExtensions(refusal) })] });
    },
  };
}
