import { getNamedType, isObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopedRouteOperations } from '../../rest-adapters/routing.js';
import { schema } from '../../src/schema/index.js';
import { NODE_READS } from '../../src/schema/node.js';
import { operationOf, OPERATIONS, requiredScopes, type Operation } from '../../src/services/access/index.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Each operation's scope is declared once (src/services/access/operations.ts) and used by its REST
 * routes and its GraphQL fields. This checks what the two surfaces really require: the
 * `x-required-scopes` of every documented route and the `authScopes` of every field that has one.
 * It fails when a route or a root field names no operation, when either requires other scopes
 * than its operation's, and so when a REST route and the GraphQL field of one operation disagree.
 */

interface Surface {
  name: string;
  operation: Operation | undefined;
  scopes: readonly string[];
}

let t: TestService;
const rest: Surface[] = [];
const graphql: Surface[] = [];

beforeAll(async () => {
  t = await startTestService();
  const registered = scopedRouteOperations();
  for (const [version, base] of [['v1', '/channel/v1'], ['v2', '/api/channel/v2']] as const) {
    const doc = (await (await t.request(`${base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { 'x-required-scopes'?: string[] }>>;
    };
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        // The token and revocation endpoints authenticate the OAuth client, not a credential.
        if (!op['x-required-scopes']) continue;
        const named = [...new Set(registered.filter((r) => r.version === version && r.method === method && r.path === path).map((r) => r.operation))];
        expect(named.length, `${method.toUpperCase()} ${base}${path} is declared once`).toBeLessThanOrEqual(1);
        rest.push({ name: `${method.toUpperCase()} ${base}${path}`, operation: named[0], scopes: op['x-required-scopes'] });
      }
    }
  }

  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].map((type) => type?.name));
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(getNamedType(type)) || type.name.startsWith('__') || !isObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const authScopes = (field.extensions?.pothosOptions as { authScopes?: { scope?: string | string[] } } | undefined)?.authScopes;
      if (!roots.has(type.name) && !authScopes) continue;
      // Query.node and Query.nodes read each type with its own operation (NODE_READS), below.
      if (type.name === 'Query' && (field.name === 'node' || field.name === 'nodes')) {
        expect(authScopes, `Query.${field.name} needs no scope of its own`).toBeUndefined();
        continue;
      }
      const declared = authScopes?.scope;
      graphql.push({
        name: `${type.name}.${field.name}`,
        operation: operationOf(authScopes),
        scopes: typeof declared === 'string' ? [declared] : (declared ?? []),
      });
    }
  }
});

afterAll(async () => {
  await t?.close();
});

describe('operation scopes (declared once, services/access/operations.ts)', () => {
  it('finds the routes of both documents and the GraphQL fields', () => {
    expect(rest.length).toBeGreaterThan(40);
    expect(graphql.length).toBeGreaterThan(30);
  });

  it('every scoped REST route names an operation and requires exactly its scopes', () => {
    for (const route of rest) {
      expect(route.operation, `${route.name} names no operation (scopedRoute)`).toBeDefined();
      expect(route.scopes, `${route.name} requires other scopes than ${route.operation}`).toEqual([...requiredScopes(OPERATIONS[route.operation!])]);
    }
  });

  it('every GraphQL root field (and every field with authScopes) names an operation and requires exactly its scopes', () => {
    for (const field of graphql) {
      expect(field.operation, `${field.name} names no operation (authScopes: operationScopes(...))`).toBeDefined();
      expect(field.scopes, `${field.name} requires other scopes than ${field.operation}`).toEqual([...requiredScopes(OPERATIONS[field.operation!])]);
    }
  });

  it('the REST routes and GraphQL fields of one operation require the same scopes', () => {
    const byOperation = new Map<string, Surface[]>();
    for (const surface of [...rest, ...graphql]) {
      if (!surface.operation) continue;
      byOperation.set(surface.operation, [...(byOperation.get(surface.operation) ?? []), surface]);
    }
    for (const [operation, surfaces] of byOperation) {
      const [first, ...others] = surfaces;
      for (const other of others) {
        expect(other.scopes, `${operation}: ${other.name} and ${first!.name} disagree`).toEqual(first!.scopes);
      }
    }
  });

  it('Query.node and Query.nodes read each Node type with the operation of its REST read, and every Node type has one', () => {
    const implementations = schema.getPossibleTypes(schema.getType('Node') as never).map((type) => type.name).sort();
    expect(Object.keys(NODE_READS).sort()).toEqual(implementations);
    expect(implementations).toEqual(['Booking', 'Property', 'RatePlan', 'Reservation', 'RoomType', 'WebhookDelivery', 'WebhookEndpoint']);
    const restReads = new Set(rest.filter((route) => route.name.startsWith('GET ')).map((route) => route.operation));
    for (const [type, operation] of Object.entries(NODE_READS)) {
      expect(restReads.has(operation), `${type} is read with ${operation}, which no REST GET route is`).toBe(true);
    }
  });

  it('every operation of the table is served by a route or a field', () => {
    const used = new Set([...rest, ...graphql].map((s) => s.operation));
    for (const operation of Object.keys(OPERATIONS)) expect(used.has(operation as Operation), `${operation} is unused`).toBe(true);
  });
});
