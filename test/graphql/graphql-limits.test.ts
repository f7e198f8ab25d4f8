import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getIntrospectionQuery, parse } from 'graphql';
import { serverAudits } from 'graphql-http';
import type { Client } from 'graphql-ws';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createGraphQL, operationHash } from '../../src/graphql/index.js';
import { documentCost } from '../../src/graphql/cost.js';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { gql, graphqlWsClient } from '../helpers/graphql.js';
import { apiKey, startTestService, testEnv, type GraphQLResult, type TestService } from '../helpers/service.js';

/** A production configuration as loadConfig takes it (production needs its public origin). */
const PRODUCTION = { CHANNEL_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com' } as const;

/**
 * GraphQL protection (docs/spec/DECISIONS.md "GraphQL", issue 7 part 3): depth, alias, token, directive and
 * cost limits refuse an operation just over them and accept one at them, over HTTP and graphql-ws;
 * CSRF prevention; introspection, GraphiQL and field suggestions by environment; persisted
 * operations by hash and the persisted-only mode; the graphql-http audit suite.
 */

// ---- documents at and just over each default limit ----

/**
 * `__type(name: "Query") { ofType { ofType ... { name } } }`, `depth` levels: the schema has no
 * cycle, and graphql-js caps the list fields of introspection (fields, interfaces) at 3 levels.
 */
function depthQuery(depth: number): string {
  const path = ['__type(name: "Query")', ...Array<string>(depth - 2).fill('ofType')];
  return `{ ${path.join(' { ')} { name }${' }'.repeat(path.length - 1)} }`;
}

/** `n` aliased root fields. */
const aliasQuery = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: channel { userId }`).join(' ')} }`;

/**
 * A document of exactly `n` lexical tokens: aliased `properties(ids: [...]) { edges { node { id } } }`,
 * 18 tokens and one per id each (graphql-js itself refuses many repeats of one field).
 */
function tokenQuery(n: number): string {
  const parts: string[] = [];
  for (let left = n - 2; left > 0; ) {
    const ids = Math.min(100, left - 18);
    parts.push(`a${parts.length}: properties(ids: [${Array.from({ length: ids }, (_, i) => i + 1).join(' ')}]) { edges { node { id } } }`);
    left -= 18 + ids;
  }
  return `{ ${parts.join(' ')} }`;
}

/** `n` directives. */
const directiveQuery = (n: number) => `{ channel { userId ${Array(n).fill('__typename @include(if: true)').join(' ')} } }`;

/**
 * 600 points with $n = 40 (the default GRAPHQL_MAX_COST), 601 with $n = 41: five full pages of
 * properties with their room types and rate plans (111 points each) and one of $n.
 */
const CATALOG = 'edges { node { id roomTypes { id ratePlans { id } } } }';
const COST_QUERY = `query Catalog($n: Int!) {
  ${Array.from({ length: 5 }, (_, i) => `p${i}: properties(first: 100) { ${CATALOG} }`).join('\n  ')}
  last: properties(first: $n) { ${CATALOG} }
}`;

const codes = (res: { errors?: { extensions?: { code?: string } }[] }) => res.errors?.map((e) => e.extensions?.code);

// ---- graphql-ws ----

interface WsResult {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string; details?: Record<string, unknown> } }[];
}

const clients: Client[] = [];

const wsClient = (port: number, credentials: IssuedCredentials): Client => graphqlWsClient(port, credentials, clients);

/** One operation over graphql-ws: its first result, or the errors it was refused with. */
function overWs(client: Client, payload: { query: string; variables?: Record<string, unknown>; extensions?: Record<string, unknown> }): Promise<WsResult> {
  return new Promise((resolve, reject) => {
    let first: WsResult | undefined;
    client.subscribe(payload, {
      next: (result) => (first ??= result as WsResult),
      error: (error) => (Array.isArray(error) ? resolve({ errors: error as WsResult['errors'] }) : reject(error as Error)),
      complete: () => resolve(first ?? {}),
    });
  });
}

afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
});

// ---- the default limits, in the sandbox ----

describe('limits (defaults) over HTTP and graphql-ws', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  let ws: Client;

  beforeAll(async () => {
    t = await startTestService();
    creds = await t.channel();
    ws = wsClient(await t.service.listen(0), creds);
  });
  afterAll(() => t?.close());

  it('has the documented defaults', () => {
    expect(t.config.graphql).toMatchObject({
      maxDepth: 10,
      maxAliases: 15,
      maxTokens: 1000,
      maxDirectives: 20,
      maxCost: 600,
      introspection: true,
      graphiql: true,
      blockFieldSuggestions: false,
      persistedOperationsFile: undefined,
      persistedOnly: false,
    });
  });

  it('depth: 10 levels run, 11 are refused with DEPTH_LIMIT_EXCEEDED', async () => {
    const ok = await gql(t, creds, depthQuery(10));
    expect(ok.errors).toBeUndefined();
    expect(ok.data).toEqual({ __type: { ofType: null } });
    const refused = await gql(t, creds, depthQuery(11));
    expect(refused.status).toBe(400);
    expect(refused.data).toBeUndefined();
    expect(refused.errors).toEqual([
      expect.objectContaining({
        message: 'The operation is nested 11 levels deep; at most 10 are allowed',
        extensions: { code: 'DEPTH_LIMIT_EXCEEDED', details: { limit: 10, found: 11 } },
      }),
    ]);
  });

  it('aliases: 15 run, 16 are refused with ALIAS_LIMIT_EXCEEDED', async () => {
    const ok = await gql(t, creds, aliasQuery(15));
    expect(ok.errors).toBeUndefined();
    expect(Object.keys(ok.data!)).toHaveLength(15);
    const refused = await gql(t, creds, aliasQuery(16));
    expect(refused.status).toBe(400);
    expect(refused.errors).toEqual([
      expect.objectContaining({
        message: 'The operation uses 16 aliases; at most 15 are allowed',
        extensions: { code: 'ALIAS_LIMIT_EXCEEDED', details: { limit: 15, found: 16 } },
      }),
    ]);
  });

  it('tokens: a document of 1000 tokens runs, one of 1001 is refused with TOKEN_LIMIT_EXCEEDED', async () => {
    const ok = await gql(t, creds, tokenQuery(1000));
    expect(ok.errors).toBeUndefined();
    expect(Object.keys(ok.data!)).toHaveLength(9);
    const refused = await gql(t, creds, tokenQuery(1001));
    expect(refused.status).toBe(400);
    expect(refused.errors).toEqual([
      expect.objectContaining({ extensions: { code: 'TOKEN_LIMIT_EXCEEDED', details: { limit: 1000 } } }),
    ]);
  });

  it('directives: 20 run, 21 are refused with DIRECTIVE_LIMIT_EXCEEDED', async () => {
    const ok = await gql(t, creds, directiveQuery(20));
    expect(ok.errors).toBeUndefined();
    const refused = await gql(t, creds, directiveQuery(21));
    expect(refused.status).toBe(400);
    expect(refused.errors).toEqual([
      expect.objectContaining({ extensions: { code: 'DIRECTIVE_LIMIT_EXCEEDED', details: { limit: 20, found: 21 } } }),
    ]);
  });

  it('cost: the rate limit\'s documentCost with the request\'s variables; 600 points run, 601 are refused with COST_LIMIT_EXCEEDED', async () => {
    const document = parse(COST_QUERY);
    expect(documentCost(document, { n: 40 })).toBe(600);
    expect(documentCost(document, { n: 41 })).toBe(601);
    // The same document, refused and accepted by turns: a refusal is never cached for the document.
    for (let round = 0; round < 2; round++) {
      const refused = await gql(t, creds, COST_QUERY, { n: 41 });
      expect(refused.status).toBe(400);
      expect(refused.errors).toEqual([
        expect.objectContaining({
          message: 'The operation costs 601 points; at most 600 are allowed',
          extensions: { code: 'COST_LIMIT_EXCEEDED', details: { limit: 600, found: 601 } },
        }),
      ]);
      const ok = await gql(t, creds, COST_QUERY, { n: 40 });
      expect(ok.errors).toBeUndefined();
      expect((ok.data!.last as { edges: unknown[] }).edges).toHaveLength(40);
    }
  });

  it('cost: a variable named after an Object.prototype member costs what the operation runs with (issue 15, finding 8)', async () => {
    const shape = (v: string) => `query($${v}: Int) { properties(first: $${v}) { edges { node { roomTypes { id } } } } }`;
    // No value: the field's default page (20 properties, 10 room types each counted): 220 items, 3 points.
    const unset = documentCost(parse(shape('v')), {});
    expect(unset).toBe(3);
    // graphql-js cannot set `__proto__` on its variables object: the field runs with its default
    // page, so a client sending {"__proto__": 1} is charged for that page, not for 1 property.
    const sent = JSON.parse('{"__proto__": 1}') as Record<string, unknown>;
    expect(documentCost(parse(shape('__proto__')), sent)).toBe(unset);
    const res = await gql(t, creds, shape('__proto__'), sent);
    expect(res.errors).toBeUndefined();
    expect((res.data!.properties as { edges: unknown[] }).edges).toHaveLength(20);
    expect((res as { extensions?: { rateLimit?: { cost?: number } } }).extensions?.rateLimit?.cost).toBe(unset);
    // A variable without a value has none, whatever its name (not Object.prototype's member).
    for (const name of ['constructor', 'toString', 'valueOf']) expect(documentCost(parse(shape(name)), {}), name).toBe(unset);
    expect(documentCost(parse(shape('constructor')), { constructor: 1 })).toBe(1);
  });

  it('the deepest real query (6 levels) and fragments, which add no level, are within the limits', async () => {
    const res = await gql(t, creds, `{ properties(first: 2) { edges { node { ... on Property { roomTypes { ...RT } } } } } }
      fragment RT on RoomType { id ratePlans { id cancellationPolicy } }`);
    expect(res.errors).toBeUndefined();
  });

  it('over graphql-ws: the same limits refuse with the same codes, and accept at the limit', async () => {
    expect((await overWs(ws, { query: aliasQuery(15) })).errors).toBeUndefined();
    expect(codes(await overWs(ws, { query: aliasQuery(16) }))).toEqual(['ALIAS_LIMIT_EXCEEDED']);
    expect((await overWs(ws, { query: depthQuery(10) })).errors).toBeUndefined();
    expect(codes(await overWs(ws, { query: depthQuery(11) }))).toEqual(['DEPTH_LIMIT_EXCEEDED']);
    expect((await overWs(ws, { query: tokenQuery(1000) })).errors).toBeUndefined();
    expect(codes(await overWs(ws, { query: tokenQuery(1001) }))).toEqual(['TOKEN_LIMIT_EXCEEDED']);
    expect((await overWs(ws, { query: directiveQuery(20) })).errors).toBeUndefined();
    expect(codes(await overWs(ws, { query: directiveQuery(21) }))).toEqual(['DIRECTIVE_LIMIT_EXCEEDED']);
    expect(codes(await overWs(ws, { query: COST_QUERY, variables: { n: 41 } }))).toEqual(['COST_LIMIT_EXCEEDED']);
    expect((await overWs(ws, { query: COST_QUERY, variables: { n: 40 } })).errors).toBeUndefined();
    // A syntax error is refused as an error of the operation; the connection stays usable.
    expect((await overWs(ws, { query: '{ channel {' })).errors?.[0]?.message).toMatch(/^Syntax Error/);
    expect((await overWs(ws, { query: '{ channel { userId } }' })).data).toEqual({ channel: { userId: creds.user_id } });
  });

  it('GraphiQL\'s full introspection query is within every limit', async () => {
    const query = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true });
    const res = await t.graphql(query);
    expect(res.errors).toBeUndefined();
    expect((res.data!.__schema as { types: unknown[] }).types.length).toBeGreaterThan(20);
  });

  it('field suggestions are shown in the sandbox', async () => {
    const res = await gql(t, creds, '{ channel { userIdd } }');
    expect(res.errors?.[0]?.message).toMatch(/Did you mean "userId"\?/);
  });

  it('masking is unchanged: limit refusals and client errors keep their messages, domain errors their codes', async () => {
    const unauthenticated = await t.graphql('{ channel { userId } }');
    expect(codes(unauthenticated)).toEqual(['UNAUTHORIZED']);
    const syntax = await gql(t, creds, '{ channel {');
    expect(syntax.status).toBe(400);
    expect(syntax.errors?.[0]?.message).toMatch(/^Syntax Error: Expected Name/);
  });
});

// ---- CSRF prevention ----

describe('CSRF prevention', () => {
  let t: TestService;
  let creds: IssuedCredentials;

  beforeAll(async () => {
    t = await startTestService();
    creds = await t.channel();
  });
  afterAll(() => t?.close());

  const expectRefused = async (res: Response) => {
    expect(res.status).toBe(403);
    const body = (await res.json()) as GraphQLResult;
    expect(codes(body)).toEqual(['CSRF_PREVENTION']);
  };

  it('refuses requests a page can send without a preflight: simple POST bodies and bare GETs', async () => {
    const body = JSON.stringify({ query: '{ __typename }' });
    await expectRefused(await t.request('/graphql', { method: 'POST', headers: { 'content-type': 'text/plain' }, body }));
    await expectRefused(
      await t.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'query=%7B__typename%7D',
      }),
    );
    const form = new FormData();
    form.set('operations', body);
    await expectRefused(await t.request('/graphql', { method: 'POST', body: form }));
    await expectRefused(await t.request('/graphql?query=%7B__typename%7D'));
  });

  it('accepts application/json, and a GET or simple POST with a preflight header or a credential header', async () => {
    const json = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(json.status).toBe(200);
    expect(((await json.json()) as GraphQLResult).data).toEqual({ __typename: 'Query' });
    for (const headers of [{ 'x-graphql-yoga-csrf': '1' }, { 'apollo-require-preflight': 'true' }, apiKey(creds)]) {
      const get = await t.request('/graphql?query=%7B__typename%7D', { headers });
      expect(get.status).toBe(200);
      expect(((await get.json()) as GraphQLResult).data).toEqual({ __typename: 'Query' });
    }
    const form = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-graphql-yoga-csrf': '1' },
      body: 'query=%7B__typename%7D',
    });
    expect(form.status).toBe(200);
  });

  it('serves the GraphiQL page to a browser in the sandbox', async () => {
    const res = await t.request('/graphql', { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain('Channel API');
  });

  it('leaves REST alone', async () => {
    const res = await t.request('/channel/v1/channels/me', { headers: apiKey(creds) });
    expect(res.status).toBe(200);
  });
});

// ---- production defaults ----

describe('production: introspection and GraphiQL off, field suggestions hidden', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  let ws: Client;

  beforeAll(async () => {
    t = await startTestService({ CHANNEL_ENV: 'production' });
    creds = await t.channel();
    ws = wsClient(await t.service.listen(0), creds);
  });
  afterAll(() => t?.close());

  it('has the production defaults', () => {
    expect(t.config.graphql).toMatchObject({ introspection: false, graphiql: false, blockFieldSuggestions: true });
  });

  it('refuses __schema and __type with INTROSPECTION_DISABLED (over HTTP and graphql-ws); __typename still works', async () => {
    for (const query of ['{ __schema { queryType { name } } }', '{ __type(name: "Query") { name } }']) {
      const res = await t.graphql(query, {}, apiKey(creds));
      expect(res.status).toBe(400);
      expect(codes(res)).toEqual(['INTROSPECTION_DISABLED']);
      expect(codes(await overWs(ws, { query }))).toEqual(['INTROSPECTION_DISABLED']);
    }
    expect((await t.graphql('{ __typename channel { userId } }', {}, apiKey(creds))).data).toEqual({
      __typename: 'Query',
      channel: { userId: creds.user_id },
    });
  });

  it('serves no GraphiQL page', async () => {
    const res = await t.request('/graphql', { headers: { accept: 'text/html' } });
    expect(res.headers.get('content-type') ?? '').not.toContain('text/html');
    expect(res.status).toBeGreaterThanOrEqual(400);
  });

  it('hides field suggestions (over HTTP and graphql-ws)', async () => {
    const res = await t.graphql('{ channel { userIdd } }', {}, apiKey(creds));
    expect(res.errors?.[0]?.message).toBe('Cannot query field "userIdd" on type "Channel".');
    expect((await overWs(ws, { query: '{ channel { userIdd } }' })).errors?.[0]?.message).toBe(
      'Cannot query field "userIdd" on type "Channel".',
    );
  });

  it('the switches turn introspection and GraphiQL back on', async () => {
    const on = loadConfig({ ...PRODUCTION, GRAPHQL_INTROSPECTION: 'true', GRAPHQL_GRAPHIQL: 'true' });
    expect(on.graphql).toMatchObject({ introspection: true, graphiql: true });
    const off = loadConfig({ GRAPHQL_INTROSPECTION: 'false', GRAPHQL_GRAPHIQL: 'false', GRAPHQL_BLOCK_FIELD_SUGGESTIONS: 'true' });
    expect(off.graphql).toMatchObject({ introspection: false, graphiql: false, blockFieldSuggestions: true });
  });
});

// ---- persisted operations ----

const CHANNEL_DOC = 'query Me { channel { userId name } }';
const PROPERTY_DOC = 'query Property($id: ID!) { property(id: $id) { propertyId name } }';
const UNKNOWN_HASH = 'f'.repeat(64);

function persistedBody(hash: string, variables?: Record<string, unknown>) {
  return JSON.stringify({ variables, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
}

function persistedFile(name: string, content: unknown): string {
  const path = join(tmpdir(), `persisted-${process.pid}-${name}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

describe('persisted operations', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  const post = (body: string) =>
    t.request('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...apiKey(creds) }, body });

  beforeAll(async () => {
    // The object form: hash -> document.
    const file = persistedFile('map', { [operationHash(CHANNEL_DOC)]: CHANNEL_DOC, [operationHash(PROPERTY_DOC)]: PROPERTY_DOC });
    t = await startTestService({ GRAPHQL_PERSISTED_OPERATIONS_FILE: file });
    creds = await t.channel();
  });
  afterAll(() => t?.close());

  it('runs a stored operation by its SHA-256 hash, with variables', async () => {
    const res = await post(persistedBody(operationHash(CHANNEL_DOC)));
    expect(res.status).toBe(200);
    expect(((await res.json()) as GraphQLResult).data).toEqual({ channel: { userId: creds.user_id, name: 'Test Channel' } });
    const withVars = await post(persistedBody(operationHash(PROPERTY_DOC), { id: 3 }));
    expect(((await withVars.json()) as GraphQLResult).data).toEqual({ property: { propertyId: 3, name: expect.any(String) } });
  });

  it('refuses an unknown hash with 400 PERSISTED_QUERY_NOT_FOUND', async () => {
    const res = await post(persistedBody(UNKNOWN_HASH));
    expect(res.status).toBe(400);
    expect(codes((await res.json()) as GraphQLResult)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
  });

  it('still runs free-form queries when not in persisted-only mode', async () => {
    const res = await post(JSON.stringify({ query: '{ channel { userId } }' }));
    expect(((await res.json()) as GraphQLResult).data).toEqual({ channel: { userId: creds.user_id } });
  });

  it('a request with neither a query nor a hash is 400 QUERY_REQUIRED', async () => {
    const res = await post(JSON.stringify({ variables: {} }));
    expect(res.status).toBe(400);
    expect(codes((await res.json()) as GraphQLResult)).toEqual(['QUERY_REQUIRED']);
  });

  it('refuses to start on a file with an invalid operation, and persisted-only without a file', () => {
    const bad = persistedFile('bad', ['{ channel { nope } }']);
    const config = loadConfig({ ...testEnv(), GRAPHQL_PERSISTED_OPERATIONS_FILE: bad });
    expect(() => createGraphQL({ config, logger: pino({ level: 'silent' }) })).toThrow(/is not valid: Cannot query field "nope"/);
    expect(() => loadConfig({ GRAPHQL_PERSISTED_ONLY: 'true' })).toThrow(/GRAPHQL_PERSISTED_ONLY: needs GRAPHQL_PERSISTED_OPERATIONS_FILE/);
  });
});

describe('persisted-only mode (production)', () => {
  let t: TestService;
  let creds: IssuedCredentials;
  let ws: Client;
  const post = (body: string) =>
    t.request('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...apiKey(creds) }, body });

  beforeAll(async () => {
    // The list form: each document is stored under the SHA-256 of its text.
    const file = persistedFile('list', [CHANNEL_DOC, PROPERTY_DOC]);
    t = await startTestService({ CHANNEL_ENV: 'production', GRAPHQL_PERSISTED_OPERATIONS_FILE: file, GRAPHQL_PERSISTED_ONLY: 'true' });
    creds = await t.channel();
    ws = wsClient(await t.service.listen(0), creds);
  });
  afterAll(() => t?.close());

  it('refuses a free-form query with 400 PERSISTED_QUERY_ONLY, even one equal to a stored document', async () => {
    for (const query of ['{ channel { userId } }', CHANNEL_DOC]) {
      const res = await post(JSON.stringify({ query }));
      expect(res.status).toBe(400);
      expect(codes((await res.json()) as GraphQLResult)).toEqual(['PERSISTED_QUERY_ONLY']);
    }
  });

  it('runs the stored operations by hash and refuses an unknown hash', async () => {
    const res = await post(persistedBody(operationHash(CHANNEL_DOC)));
    expect(((await res.json()) as GraphQLResult).data).toEqual({ channel: { userId: creds.user_id, name: 'Test Channel' } });
    const unknown = await post(persistedBody(UNKNOWN_HASH));
    expect(unknown.status).toBe(400);
    expect(codes((await unknown.json()) as GraphQLResult)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
  });

  it('applies the same rules over graphql-ws', async () => {
    const persisted = await overWs(ws, {
      query: '',
      variables: { id: 3 },
      extensions: { persistedQuery: { version: 1, sha256Hash: operationHash(PROPERTY_DOC) } },
    });
    expect(persisted.data).toEqual({ property: { propertyId: 3, name: expect.any(String) } });
    expect(codes(await overWs(ws, { query: '{ channel { userId } }' }))).toEqual(['PERSISTED_QUERY_ONLY']);
    expect(
      codes(await overWs(ws, { query: '', extensions: { persistedQuery: { version: 1, sha256Hash: UNKNOWN_HASH } } })),
    ).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
  });
});

// ---- configuration ----

describe('configuration', () => {
  let t: TestService;
  let creds: IssuedCredentials;

  beforeAll(async () => {
    t = await startTestService({
      GRAPHQL_MAX_DEPTH: '4',
      GRAPHQL_MAX_ALIASES: '2',
      GRAPHQL_MAX_TOKENS: '50',
      GRAPHQL_MAX_DIRECTIVES: '1',
      GRAPHQL_MAX_COST: '3',
    });
    creds = await t.channel();
  });
  afterAll(() => t?.close());

  it('each limit is configurable', async () => {
    // A connection's edges and node are levels of their own: 4 levels reach the node's scalars, its room types are a 5th.
    expect((await gql(t, creds, '{ properties(first: 1) { edges { node { id } } } }', {})).errors).toBeUndefined();
    expect(codes(await gql(t, creds, '{ properties(first: 1) { edges { node { roomTypes { id } } } } }', {}))).toEqual(['DEPTH_LIMIT_EXCEEDED']);
    expect((await gql(t, creds, aliasQuery(2), {})).errors).toBeUndefined();
    expect(codes(await gql(t, creds, aliasQuery(3), {}))).toEqual(['ALIAS_LIMIT_EXCEEDED']);
    expect((await gql(t, creds, tokenQuery(50), {})).errors).toBeUndefined();
    expect(codes(await gql(t, creds, tokenQuery(51), {}))).toEqual(['TOKEN_LIMIT_EXCEEDED']);
    expect((await gql(t, creds, directiveQuery(1), {})).errors).toBeUndefined();
    expect(codes(await gql(t, creds, directiveQuery(2), {}))).toEqual(['DIRECTIVE_LIMIT_EXCEEDED']);
    expect((await gql(t, creds, '{ a: channel { userId } b: channel { userId } }', {})).errors).toBeUndefined();
    // 100 properties with their room types: 100 + 1,000 items, 11 points. Through the catalog connection that is 5
    // levels deep (over the depth limit here), so the 100 properties are asked for by their global ids: nodes(ids:)
    // counts one item per id, as properties(first: 100) counts its page.
    const catalog = await gql(t, creds, '{ properties(first: 100) { edges { node { id } } } }', {});
    expect(catalog.errors).toBeUndefined();
    const ids = (catalog.data!.properties as { edges: { node: { id: string } }[] }).edges.map((e) => e.node.id);
    expect(ids).toHaveLength(100);
    const rooms = 'query($ids: [ID!]!) { nodes(ids: $ids) { ... on Property { roomTypes { id } } } }';
    expect(documentCost(parse(rooms), { ids })).toBe(11);
    expect(codes(await gql(t, creds, rooms, { ids }))).toEqual(['COST_LIMIT_EXCEEDED']);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => loadConfig({ GRAPHQL_MAX_ALIASES: '0' })).toThrow(/GRAPHQL_MAX_ALIASES/);
    expect(() => loadConfig({ GRAPHQL_MAX_DEPTH: 'deep' })).toThrow(/GRAPHQL_MAX_DEPTH/);
  });
});

// ---- GraphQL over HTTP conformance ----

describe('graphql-http audit suite (GraphQL over HTTP)', () => {
  let t: TestService;
  let url: string;

  beforeAll(async () => {
    t = await startTestService();
    url = `http://127.0.0.1:${await t.service.listen(0)}/graphql`;
  });
  afterAll(() => t?.close());

  it('passes every MUST audit over HTTP', async () => {
    const results = await Promise.all(serverAudits({ url }).map((audit) => audit.fn()));
    const failures = results.filter((r) => r.status === 'error').map((r) => `${r.name}: ${'reason' in r ? r.reason : ''}`);
    expect(failures).toEqual([]);
    expect(results.filter((r) => r.name.startsWith('MUST')).length).toBeGreaterThan(10);
  });
});
