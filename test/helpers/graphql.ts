import { createClient, type Client } from 'graphql-ws';
import { expect } from 'vitest';
import WebSocket from 'ws';
import type { IssuedCredentials } from '../../src/services/channels/index.js';
import { apiKey, type GraphQLResult, type TestService } from './service.js';

/** A GraphQL object as a test reads it. */
export type Gql = Record<string, any>;

/** A GraphQL request to `t` with the API key of `who` (and any further headers). */
export function gql(
  t: TestService,
  who: IssuedCredentials,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<GraphQLResult> {
  return t.graphql(query, variables, { ...apiKey(who), ...headers });
}

/**
 * A GraphQL POST to `t` as it answers it (status, headers, body unread), with the given headers and
 * from the given client address: for tests of what rides on the response (rate-limit headers) or on
 * the caller's address (IP allow lists).
 */
export function graphqlResponse(
  t: TestService,
  query: string,
  variables?: Record<string, unknown>,
  options: { headers?: Record<string, string>; ip?: string } = {},
): Promise<Response> {
  return t.request('/graphql', {
    method: 'POST',
    ...(options.ip === undefined ? {} : { ip: options.ip }),
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...options.headers },
    body: JSON.stringify({ query, variables }),
  });
}

/** The data of a result with no top-level errors. */
export function dataOf(res: GraphQLResult): Gql {
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data as Gql;
}

/** The first top-level error of a result that has one. */
export function topError(res: GraphQLResult) {
  expect(res.errors?.length, JSON.stringify(res.data)).toBeGreaterThan(0);
  return res.errors![0]!;
}

/** The nodes of a connection's edges, in order. */
export function edgesNodes<T = Gql>(connection: { edges: { node: T }[] }): T[] {
  return connection.edges.map((e) => e.node);
}

/**
 * A Date variable that is not a calendar day: refused while the variables are read (HTTP 400, no
 * data, BAD_USER_INPUT), the message naming the variable's path.
 */
export function expectBadDateVariable(res: GraphQLResult, path: string): void {
  expect(res.status).toBe(400);
  expect(res.data).toBeUndefined();
  const error = topError(res);
  expect(error.extensions?.code).toBe('BAD_USER_INPUT');
  expect(error.message).toContain(`"${path}"`);
}

/**
 * A graphql-ws client of the service listening on `port`, with the API key of `who` in
 * connection_init (or the given connection_init payload): lazy (it connects with its first
 * operation), never retrying. Put in `opened`, when given, for the test file to dispose of.
 */
export function graphqlWsClient(port: number, who: IssuedCredentials | { connectionParams: Record<string, unknown> }, opened?: Client[]): Client {
  const client = createClient({
    url: `ws://127.0.0.1:${port}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: 'connectionParams' in who ? who.connectionParams : { 'X-Api-Key': who.api_key },
    retryAttempts: 0,
    lazy: true,
  });
  opened?.push(client);
  return client;
}

