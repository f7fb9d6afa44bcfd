/**
 * What every PostgreSQL operation in `ops/` runs its statements on: a pooled connection, the
 * store's writing connection inside a group-commit transaction (write-queue.ts), or the pool
 * itself for a one-statement read. Only `query` is used, so an operation cannot commit, roll back
 * or hold a connection: the caller owns the transaction.
 */
import type { QueryResult, QueryResultRow } from 'pg';

/** A connection (or pool) that runs one statement: `$1`-style parameters, rows as objects. */
export interface Db {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}
