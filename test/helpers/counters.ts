import { AsyncLocalStorage } from 'node:async_hooks';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { vi } from 'vitest';
import type { TestService } from './service.js';

/**
 * Counters of what a request costs below the service: statements sent to the database (PGlite or
 * PostgreSQL, counted at the driver, so raw and model queries alike) and calls to the provider
 * client. For tests that pin batching: a query over a page of 5 and one over a page of 50 must
 * cost the same.
 */
export interface Counts {
  database: number;
  /** Provider calls by client method (getProperties, availabilityBatch, ...). */
  provider: Record<string, number>;
}

/** Counts from now until `stop()`, which gives the counts and removes the spies. */
export function countCalls(t: TestService, providerMethods: string[] = ['getProperties', 'getProperty', 'listProperties', 'availability', 'availabilityBatch']) {
  const counts: Counts = { database: 0, provider: Object.fromEntries(providerMethods.map((m) => [m, 0])) };
  const statement = () => counts.database++;
  // The originals, taken before the spies replace them.
  const { query: pgQuery } = pg.Client.prototype;
  const { query: pgliteQuery, exec: pgliteExec } = PGlite.prototype;
  const spies = [
    // PostgreSQL: every statement goes through a client's query (a pool hands one out).
    vi.spyOn(pg.Client.prototype, 'query').mockImplementation(countThrough(pgQuery, statement)),
    // PGlite: statements go through query (parameters) or exec (scripts).
    vi.spyOn(PGlite.prototype, 'query').mockImplementation(countThrough(pgliteQuery, statement)),
    vi.spyOn(PGlite.prototype, 'exec').mockImplementation(countThrough(pgliteExec, statement)),
  ];
  const upstream = t.service.deps.upstream as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const method of providerMethods) {
    const original = upstream[method]!.bind(upstream);
    spies.push(
      vi.spyOn(upstream, method as never).mockImplementation(((...args: unknown[]) => {
        counts.provider[method]! += 1;
        return original(...args);
      }) as never),
    );
  }
  return {
    stop(): Counts {
      for (const spy of spies) spy.mockRestore();
      return counts;
    },
  };
}

function countThrough<F extends (...args: never[]) => unknown>(original: F, count: () => void): F {
  return function (this: unknown, ...args: Parameters<F>) {
    count();
    return original.apply(this, args);
  } as F;
}

/**
 * The statements `fn` sends to the database itself (PostgreSQL or PGlite, at the driver, so raw
 * and model queries, BEGIN and COMMIT alike), in order: only those issued from `fn`'s own
 * asynchronous context, so the service's background work (the outbox dispatcher woken by the
 * same commit, the sweeper) is not counted. For tests that pin round trips per request.
 */
export async function statementsOf<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const scope = new AsyncLocalStorage<string[]>();
  const record = (sql: unknown) => {
    const into = scope.getStore();
    if (!into) return;
    const text = typeof sql === 'string' ? sql : ((sql as { text?: string } | null)?.text ?? String(sql));
    into.push(text.replace(/\s+/g, ' ').trim());
  };
  const { query: pgQuery } = pg.Client.prototype;
  const { query: pgliteQuery, exec: pgliteExec, transaction: pgliteTransaction } = PGlite.prototype;
  const spies = [
    vi.spyOn(pg.Client.prototype, 'query').mockImplementation(recordThrough(pgQuery, record)),
    // PGlite runs an interactive transaction's statements on a transaction object: its start counts.
    vi.spyOn(PGlite.prototype, 'transaction').mockImplementation(recordThrough(pgliteTransaction, () => record('BEGIN'))),
    vi.spyOn(PGlite.prototype, 'query').mockImplementation(recordThrough(pgliteQuery, record)),
    vi.spyOn(PGlite.prototype, 'exec').mockImplementation(recordThrough(pgliteExec, record)),
  ];
  try {
    const result = await scope.run(statements, fn);
    return { result, statements };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

function recordThrough<F extends (...args: never[]) => unknown>(original: F, record: (sql: unknown) => void): F {
  return function (this: unknown, ...args: Parameters<F>) {
    record(args[0]);
    return original.apply(this, args);
  } as F;
}
