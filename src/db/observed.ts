/**
 * Timing of the database at its driver adapter (Prisma 7 has no $metrics): every SQL statement
 * Prisma sends (model queries, $queryRaw and $executeRaw alike, inside a transaction or not) and
 * every transaction from its start to its commit or rollback. The adapter factory handed to
 * PrismaClient is wrapped; its connections and transactions get timed queryRaw and executeRaw.
 * What is measured is the time the driver takes: the statement's round trip, and for a statement
 * outside a transaction the wait for a pooled connection.
 */

/** The first keyword of a statement, from a fixed set. */
export type SqlStatement = 'select' | 'insert' | 'update' | 'delete' | 'with' | 'other';
export type TransactionOutcome = 'commit' | 'rollback';

/** Who hears of each statement and transaction (src/metrics implements it). */
export interface DatabaseObserver {
  query(statement: SqlStatement, seconds: number, failed: boolean): void;
  transaction(outcome: TransactionOutcome, seconds: number): void;
}

interface Queryable {
  queryRaw(query: { sql: string }): Promise<unknown>;
  executeRaw(query: { sql: string }): Promise<number>;
}
interface Transaction extends Queryable {
  commit(): Promise<void>;
  rollback(): Promise<void>;
}
interface Adapter extends Queryable {
  startTransaction(...args: unknown[]): Promise<Transaction>;
}
interface AdapterFactory {
  connect(): Promise<Adapter>;
}

/** `factory` (PrismaPg, PrismaPGlite) with its connections timed for `observer`; itself when there is none. */
export function observedAdapter<F extends object>(factory: F, observer: DatabaseObserver | undefined): F {
  if (!observer) return factory;
  const f = factory as unknown as AdapterFactory;
  const connect = f.connect.bind(f);
  f.connect = async () => {
    const adapter = await connect();
    timeQueries(adapter, observer);
    const start = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (...args: unknown[]) => {
      const started = performance.now();
      const tx = await start(...args);
      timeQueries(tx, observer);
      const commit = tx.commit.bind(tx);
      const rollback = tx.rollback.bind(tx);
      const ended = (outcome: TransactionOutcome) => observer.transaction(outcome, (performance.now() - started) / 1000);
      tx.commit = () => commit().finally(() => ended('commit'));
      tx.rollback = () => rollback().finally(() => ended('rollback'));
      return tx;
    };
    return adapter;
  };
  return factory;
}

function timeQueries(target: Queryable, observer: DatabaseObserver): void {
  const queryRaw = target.queryRaw.bind(target);
  const executeRaw = target.executeRaw.bind(target);
  target.queryRaw = (query) => timed(observer, query.sql, performance.now(), queryRaw(query));
  target.executeRaw = (query) => timed(observer, query.sql, performance.now(), executeRaw(query));
}

async function timed<T>(observer: DatabaseObserver, sql: string, started: number, running: Promise<T>): Promise<T> {
  let failed = true;
  try {
    const result = await running;
    failed = false;
    return result;
  } finally {
    observer.query(statementOf(sql), (performance.now() - started) / 1000, failed);
  }
}

const KEYWORDS: Record<string, SqlStatement> = { select: 'select', insert: 'insert', update: 'update', delete: 'delete', with: 'with' };

/** The statement's first keyword (leading blanks and parentheses skipped), lower case, if it is one of SqlStatement's. */
export function statementOf(sql: string): SqlStatement {
  let i = 0;
  while (i < sql.length && (sql.charCodeAt(i) <= 32 || sql.charCodeAt(i) === 40)) i++;
  let j = i;
  while (j < sql.length && j - i < 7 && sql.charCodeAt(j) > 32 && sql.charCodeAt(j) !== 40) j++;
  return KEYWORDS[sql.slice(i, j).toLowerCase()] ?? 'other';
}
