import { readFileSync } from 'node:fs';
import { buildClientSchema, getIntrospectionQuery, getNamedType, isObjectType, printSchema, type IntrospectionQuery } from 'graphql';
import { describe, expect, it } from 'vitest';
import { servedSchema } from '../../src/graphql/index.js';
import { SCOPES } from '../../src/services/access/index.js';
import { apiKey, startTestService } from '../helpers/service.js';

const checkedIn = () => readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');

describe('schema.graphql', () => {
  it('is the served schema printed from the code (run `npm run schema:print` after changing it)', () => {
    expect(checkedIn()).toBe(`${printSchema(servedSchema)}\n`);
  });

  it('is what the server serves: introspection shows the same schema, @defer and @stream included', async () => {
    const t = await startTestService();
    try {
      const key = apiKey(await t.channel());
      const query = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true });
      const res = await t.graphql(query, undefined, key);
      expect(res.status).toBe(200);
      expect(res.errors).toBeUndefined();
      const introspected = buildClientSchema(res.data as unknown as IntrospectionQuery);
      expect(introspected.getDirective('defer')?.locations).toEqual(['FRAGMENT_SPREAD', 'INLINE_FRAGMENT']);
      expect(introspected.getDirective('stream')?.args.map((a) => a.name)).toEqual(['if', 'label', 'initialCount']);
      expect(`${printSchema(introspected)}\n`).toBe(checkedIn());
    } finally {
      await t.close();
    }
  });

  it('declares known scopes on every root field (deny by default): one, or a list all of which are needed', () => {
    const schema = servedSchema;
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
