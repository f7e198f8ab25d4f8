import { readFileSync } from 'node:fs';
import { getNamedType, isObjectType, printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';
import { SCOPES } from '../../src/services/access/index.js';

describe('schema.graphql', () => {
  it('is the schema printed from the code (run `npm run schema:print` after changing it)', () => {
    const checkedIn = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(checkedIn).toBe(`${printSchema(schema)}\n`);
  });

  it('declares known scopes on every root field (deny by default): one, or a list all of which are needed', () => {
    const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(
      (t): t is NonNullable<typeof t> => t != null && isObjectType(getNamedType(t)),
    );
    // Query.node and Query.nodes answer null for a type the credential may not read (NODE_READS,
    // test/contract/scopes.test.ts); the Query type itself needs an authenticated caller.
    const fields = roots
      .flatMap((root) => Object.values(root.getFields()).map((f) => [root.name, f] as const))
      .filter(([root, field]) => !(root === 'Query' && (field.name === 'node' || field.name === 'nodes')));
    expect(fields.length).toBeGreaterThan(0);
    for (const [root, field] of fields) {
      const options = field.extensions?.pothosOptions as { authScopes?: { scope?: string | string[] } } | undefined;
      const declared = options?.authScopes?.scope;
      const scopes = typeof declared === 'string' ? [declared] : (declared ?? []);
      expect(scopes.length, `${root}.${field.name} must declare authScopes: { scope }`).toBeGreaterThan(0);
      for (const scope of scopes) expect(SCOPES, `${root}.${field.name} must declare authScopes: { scope }`).toContain(scope);
    }
  });
});
