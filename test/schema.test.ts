import { readFileSync } from 'node:fs';
import { getNamedType, isObjectType, printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../src/schema/index.js';
import { SCOPES } from '../src/services/scopes.js';

describe('schema.graphql', () => {
  it('is the schema printed from the code (run `npm run schema:print` after changing it)', () => {
    const checkedIn = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');
    expect(checkedIn).toBe(`${printSchema(schema)}\n`);
  });

  it('declares a known scope on every root field (deny by default)', () => {
    const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(
      (t): t is NonNullable<typeof t> => t != null && isObjectType(getNamedType(t)),
    );
    const fields = roots.flatMap((root) => Object.values(root.getFields()).map((f) => [root.name, f] as const));
    expect(fields.length).toBeGreaterThan(0);
    for (const [root, field] of fields) {
      const options = field.extensions?.pothosOptions as { authScopes?: { scope?: string } } | undefined;
      expect(SCOPES, `${root}.${field.name} must declare authScopes: { scope }`).toContain(options?.authScopes?.scope);
    }
  });
});
