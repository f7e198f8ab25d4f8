import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Kind, parse, validate, type GraphQLError } from 'graphql';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { Config } from '../../config.js';
import { BadRequestError, type ErrorCode } from '../../services/kernel/index.js';
import { errorExtensions } from '../errors.js';
import { servedSchema } from '../schema.js';
import { servedValidationRules } from './incrementalDelivery.js';

/**
 * GRAPHQL_PERSISTED_OPERATIONS_FILE and GRAPHQL_PERSISTED_ONLY: Yoga's plugin for HTTP (none
 * without a file), and the same rules for a graphql-ws subscribe payload (operationSource).
 */
export function persistedOperations(settings: Config['graphql']): {
  plugin: Plugin;
  operationSource(payload: { query?: unknown; extensions?: unknown }): string | GraphQLError;
  /** The names of the persisted operations (metrics label them). */
  operationNames: string[];
} {
  const persisted = settings.persistedOperationsFile ? loadPersistedOperations(settings.persistedOperationsFile) : null;
  const operationNames = persisted
    ? [...persisted.values()].flatMap((doc) =>
        parse(doc).definitions.flatMap((d) => (d.kind === Kind.OPERATION_DEFINITION && d.name ? [d.name.value] : [])),
      )
    : [];
  const plugin = persisted
    ? usePersistedOperations({
        getPersistedOperation: (id) => persisted.get(id) ?? null,
        allowArbitraryOperations: !settings.persistedOnly,
        customErrors: {
          notFound: () => persistedErrors.notFound(),
          persistedQueryOnly: () => persistedErrors.only(),
          keyNotFound: () => persistedErrors.missing(),
        },
      })
    : {};
  return {
    plugin,
    operationNames,
    operationSource(payload) {
      const query = typeof payload.query === 'string' && payload.query !== '' ? payload.query : undefined;
      if (query !== undefined) return persisted && settings.persistedOnly ? persistedErrors.only() : query;
      const id = persisted ? persistedOperationId(payload.extensions) : null;
      if (id === null) return persistedErrors.missing();
      return persisted!.get(id) ?? persistedErrors.notFound();
    },
  };
}

const refusal = (code: ErrorCode, message: string) => {
  const error = new BadRequestError(code, message);
  return createGraphQLError(error.message, { extensions: errorExtensions(error) });
};

const persistedErrors = {
  notFound: () => refusal('PERSISTED_QUERY_NOT_FOUND', 'No persisted operation has this hash'),
  only: () =>
    refusal('PERSISTED_QUERY_ONLY', 'This server runs only persisted operations: send extensions.persistedQuery.sha256Hash instead of a query'),
  missing: () => refusal('QUERY_REQUIRED', 'Send a query, or the hash of a persisted operation in extensions.persistedQuery.sha256Hash'),
};

/** The Apollo convention Yoga's plugin reads: extensions.persistedQuery = { version: 1, sha256Hash }. */
function persistedOperationId(extensions: unknown): string | null {
  const pq = (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | null | undefined)?.persistedQuery;
  return pq && pq.version === 1 && typeof pq.sha256Hash === 'string' ? pq.sha256Hash : null;
}

/**
 * The persisted operations in GRAPHQL_PERSISTED_OPERATIONS_FILE: an object of hash -> document
 * (the shape of GraphQL Code Generator's persisted-documents.json) or an array of documents, each
 * stored under the SHA-256 (hex) of its text. Every document must parse and validate against the
 * served schema with the served rules (so @defer and @stream are known), or the service does not
 * start.
 */
export function loadPersistedOperations(path: string): ReadonlyMap<string, string> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`GRAPHQL_PERSISTED_OPERATIONS_FILE ${path}: ${(error as Error).message}`);
  }
  if (!raw || typeof raw !== 'object') {
    throw new Error(`GRAPHQL_PERSISTED_OPERATIONS_FILE ${path}: expected an object of hash -> document or an array of documents`);
  }
  const entries: [string, unknown][] = Array.isArray(raw)
    ? raw.map((doc, i) => [typeof doc === 'string' ? operationHash(doc) : `#${i}`, doc])
    : Object.entries(raw);
  const operations = new Map<string, string>();
  const rules = servedValidationRules();
  for (const [id, doc] of entries) {
    if (typeof doc !== 'string') throw new Error(`GRAPHQL_PERSISTED_OPERATIONS_FILE ${path}: ${id} is not a document string`);
    let errors: readonly GraphQLError[];
    try {
      errors = validate(servedSchema, parse(doc), rules);
    } catch (error) {
      errors = [error as GraphQLError];
    }
    if (errors.length) {
      throw new Error(`GRAPHQL_PERSISTED_OPERATIONS_FILE ${path}: operation ${id} is not valid: ${errors.map((e) => e.message).join('; ')}`);
    }
    operations.set(id, doc);
  }
  return operations;
}

/** The id a client sends for a document: SHA-256 of its exact text, in hex. */
export function operationHash(document: string): string {
  return createHash('sha256').update(document).digest('hex');
}
