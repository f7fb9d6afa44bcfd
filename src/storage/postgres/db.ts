/**
 * What every PostgreSQL operation in `ops/` runs its statements on: a pooled connection, the
 * store's writing connection inside a group-commit transaction (write-queue.ts), or the pool
 * itself for a one-statement read. Only `query` is used, so an operation cannot hold a connection
 * and the caller owns the transaction; the one exception is an operation the write queue runs as a
 * bare statement (no BEGIN: write-queue.ts) that finds it needs more statements after all: it
 * opens and commits its own transaction (ops/complete-attempts.ts).
 */
import type { QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { withArrayLiterals } from './array-literal';

/** A connection (or pool) that runs one statement: `$1`-style parameters, rows as objects. */
export interface Db {
  /**
   * Runs `text` with `values`. `name`: a named prepared statement (parsed once per connection,
   * then bound, planned for its parameters and executed; docs/design-notes/postgres-store.md,
   * decision 5) for the hot writes, whose text is fixed.
   */
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[], name?: string): Promise<QueryResult<R>>;
}

/** Longest wait for one statement's answer on the store's connections (ms). */
export const STATEMENT_TIMEOUT_MS = 30_000;

/**
 * `target` (a pool or a connection) as a {@link Db} whose every statement fails with `Query read
 * timeout` (a `connection_lost` fault, pg-faults.ts) when no answer came in `timeoutMs`: a
 * connection that stopped answering without closing (a half-open socket, a frozen server) fails
 * its caller instead of holding it until the operating system gives up on the socket (hours). The
 * pool discards a connection that failed so; the write queue drops its own. Flat array
 * parameters are bound as the literals pg would write, written faster (array-literal.ts).
 */
export function boundedDb(
  target: { query(config: QueryConfig & { query_timeout?: number }): Promise<QueryResult> },
  timeoutMs = STATEMENT_TIMEOUT_MS,
): Db {
  return {
    query: <R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[], name?: string) =>
      target.query({ text, values: withArrayLiterals(values), query_timeout: timeoutMs, ...(name ? { name } : {}) }) as Promise<
        QueryResult<R>
      >,
  };
}
