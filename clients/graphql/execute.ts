/**
 * A typed GraphQL call with fetch (docs/client.md): the result type and the variables come from
 * the document @graphql-codegen generated (clients/graphql/generated/), so
 *
 *   const { data, errors } = await execute(PropertyPageDocument, { id: '1', stay });
 *
 * has `data.property.name` typed and refuses wrong variables at compile time. Any client that
 * takes a TypedDocumentNode (graphql-request, urql, Apollo) works the same way.
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';

export interface GraphQLResponse<Result> {
  data?: Result | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string; details?: Record<string, unknown> } }[];
}

export interface GraphQLClientOptions {
  /** The endpoint, e.g. `https://api.example.com/graphql`. */
  url: string;
  /** Credential headers: `{ 'X-Api-Key': key }` or `{ Authorization: 'Bearer oat_...' }`. */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

/** An `execute` bound to an endpoint and a credential. */
export function createGraphQLClient({ url, headers = {}, fetch: fetchFn = fetch }: GraphQLClientOptions) {
  return async function execute<Result, Variables>(document: TypedDocumentNode<Result, Variables>, variables: Variables): Promise<GraphQLResponse<Result>> {
    const res = await fetchFn(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
      body: JSON.stringify({ query: print(document), variables }),
    });
    return (await res.json()) as GraphQLResponse<Result>;
  };
}
