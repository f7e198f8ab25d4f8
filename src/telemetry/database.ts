import { SpanKind, SpanStatusCode, trace, type Context, type Span, type SpanOptions } from '@opentelemetry/api';
import type { SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery, Transaction } from '@prisma/driver-adapter-utils';

/**
 * Spans of the database, made in the Prisma driver adapter (PrismaPg or PrismaPGlite) the client
 * talks through: one per transaction (`db.transaction`, from BEGIN to COMMIT or ROLLBACK) and one
 * per statement (named by its SQL command: `SELECT`, `INSERT`...), the statements of a
 * transaction as its children. Only inside a trace: a statement with no span active (the
 * dispatcher's polling, the jobs' rounds) makes none, so background polling is not a trace a second.
 */

export type AdapterFactory = SqlDriverAdapterFactory;

interface SpanSource {
  active(): Context;
  startSpan(name: string, options?: SpanOptions, parent?: Context): Span;
}

const QUERY_TEXT_MAX = 2_000;

export function tracedAdapter<F extends AdapterFactory>(factory: F, tracing: SpanSource): F {
  return new Proxy(factory, {
    get(target, property, receiver) {
      if (property === 'connect') return async () => traceAdapter(await target.connect(), tracing, target.provider);
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function traceAdapter(adapter: SqlDriverAdapter, tracing: SpanSource, system: string): SqlDriverAdapter {
  const dbSystem = system === 'postgres' ? 'postgresql' : system;
  return delegate(adapter, {
    queryRaw: (query: SqlQuery) => statement(tracing, dbSystem, tracing.active(), query, () => adapter.queryRaw(query)),
    executeRaw: (query: SqlQuery) => statement(tracing, dbSystem, tracing.active(), query, () => adapter.executeRaw(query)),
    startTransaction: async (isolationLevel?: Parameters<SqlDriverAdapter['startTransaction']>[0]) => {
      const parent = tracing.active();
      if (!trace.getSpan(parent)) return adapter.startTransaction(isolationLevel);
      const span = tracing.startSpan('db.transaction', { kind: SpanKind.CLIENT, attributes: { 'db.system.name': dbSystem } }, parent);
      let tx: Transaction;
      try {
        tx = await adapter.startTransaction(isolationLevel);
      } catch (error) {
        fail(span, error);
        span.end();
        throw error;
      }
      const inside = trace.setSpan(parent, span);
      const finish = (how: 'commit' | 'rollback') => async () => {
        span.setAttribute('db.transaction.outcome', how);
        try {
          await tx[how]();
        } catch (error) {
          fail(span, error);
          throw error;
        } finally {
          span.end();
        }
      };
      return delegate(tx, {
        queryRaw: (query: SqlQuery) => statement(tracing, dbSystem, inside, query, () => tx.queryRaw(query)),
        executeRaw: (query: SqlQuery) => statement(tracing, dbSystem, inside, query, () => tx.executeRaw(query)),
        commit: finish('commit'),
        rollback: finish('rollback'),
      });
    },
  });
}

/** `target` with some methods replaced; everything else read from it (bound to it). */
function delegate<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(t, property) {
      if (Object.prototype.hasOwnProperty.call(overrides, property)) return overrides[property as keyof T];
      const value: unknown = Reflect.get(t, property, t);
      return typeof value === 'function' ? value.bind(t) : value;
    },
  });
}

async function statement<R>(tracing: SpanSource, system: string, parent: Context, query: SqlQuery, run: () => Promise<R>): Promise<R> {
  if (!trace.getSpan(parent)) return run();
  const command = /^\s*([A-Za-z]+)/.exec(query.sql)?.[1]?.toUpperCase() ?? 'SQL';
  const span = tracing.startSpan(
    command,
    {
      kind: SpanKind.CLIENT,
      attributes: { 'db.system.name': system, 'db.operation.name': command, 'db.query.text': query.sql.slice(0, QUERY_TEXT_MAX) },
    },
    parent,
  );
  try {
    return await run();
  } catch (error) {
    fail(span, error);
    throw error;
  } finally {
    span.end();
  }
}

function fail(span: Span, error: unknown): void {
  span.setAttribute('error.type', (error as { name?: string })?.name ?? 'Error');
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}
