import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError } from 'graphql';
import type { Config } from '../../config.js';

type Limits = Config['graphql'];
type ArmorConfig = NonNullable<Parameters<typeof EnvelopArmorPlugin>[0]>;

/** Codes of the limit errors: one per limit, with `details.limit` (and `details.found`). */
export const LIMIT_CODES = {
  depth: 'DEPTH_LIMIT_EXCEEDED',
  aliases: 'ALIAS_LIMIT_EXCEEDED',
  tokens: 'TOKEN_LIMIT_EXCEEDED',
  directives: 'DIRECTIVE_LIMIT_EXCEEDED',
  cost: 'COST_LIMIT_EXCEEDED',
  answer: 'ANSWER_LIMIT_EXCEEDED',
} as const;

/**
 * graphql-armor's plugins with our limits. Each refusal becomes an error with a code of its own
 * instead of armor's "Syntax Error: ..." message: validation rules report it to the validation
 * context (so it is an ordinary validation error: HTTP 400 with application/graphql-response+json),
 * the token limit, enforced while parsing, throws it as a parse error.
 */
export function armorConfig(limits: Limits): ArmorConfig {
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

export const LIMIT_MESSAGES: Record<keyof typeof LIMIT_CODES, (limit: number, found: number | undefined) => string> = {
  depth: (limit, found) => `The operation is nested ${found} levels deep; at most ${limit} are allowed`,
  aliases: (limit, found) => `The operation uses ${found} aliases; at most ${limit} are allowed`,
  tokens: (limit) => `The document has more than ${limit} tokens; at most ${limit} are allowed`,
  directives: (limit, found) => `The operation uses ${found} directives; at most ${limit} are allowed`,
  cost: (limit, found) => `The operation costs ${found} points; at most ${limit} are allowed`,
  answer: (limit, found) =>
    `The operation's answer may hold ${found} values (fields and list items, pages assumed full); at most ${limit} are allowed: ` +
    'ask for smaller pages or fewer fields',
};

function limitError(kind: keyof typeof LIMIT_CODES, limit: number, armorMessage: string): GraphQLError {
  const match = /found (\d+(?:\.\d+)?)/.exec(armorMessage);
  const found = match ? Number(match[1]) : undefined;
  return new GraphQLError(LIMIT_MESSAGES[kind](limit, found), {
    extensions: { code: LIMIT_CODES[kind], details: found === undefined ? { limit } : { limit, found } },
  });
}
