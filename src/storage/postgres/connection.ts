/**
 * Connections of the PostgreSQL store (node-postgres, `pg`): one pool per store instance, every
 * connection with the store's schema first on its `search_path`, and PostgreSQL's 64-bit integers
 * (`bigint`: epoch-ms times, sequence numbers, counts) read as JavaScript numbers. Times in epoch ms
 * stay far below 2^53, so the conversion is exact; a value above it would be a corrupt row.
 */
import { Pool, PoolConfig, types } from 'pg';
import { SCHEMA_NAME } from './schema-name';
import { STATEMENT_TIMEOUT_MS } from './db';

/** Type OIDs read as numbers: int8 (`bigint`, `count(*)`) and numeric aggregates (`sum`). */
const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** pg's type lookup with int8 and numeric parsed as numbers, for this pool only (no global setting). */
const TYPES: NonNullable<PoolConfig['types']> = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (v: string) => (v === null ? null : Number(v));
    return types.getTypeParser(oid, format ?? 'text');
  }) as NonNullable<PoolConfig['types']>['getTypeParser'],
};

/** Settings of {@link openPool}. */
export interface PoolOptions {
  /** Schema the store's tables live in (created by the migrations); default `public`. */
  schema?: string;
  /** Most connections of the pool (reads and the writer's); default 10. */
  max?: number;
  /** `application_name` the server shows in `pg_stat_activity`; default `actor-task-scheduler`. */
  applicationName?: string;
  /** ms to wait for a connection to be made before failing; default 5000. */
  connectTimeoutMs?: number;
  /**
   * The server ends a session that stays idle inside a transaction this long (ms; PostgreSQL's
   * `idle_in_transaction_session_timeout`); default {@link IDLE_IN_TRANSACTION_TIMEOUT_MS}.
   */
  idleInTransactionTimeoutMs?: number;
}

/**
 * Default bound (ms) on a session idle inside a transaction. A node cut off from the server in the
 * middle of a group-commit transaction leaves it open on the server with its row locks, and the
 * server, sending nothing while it waits for the next statement, does not notice the lost peer
 * (TCP keepalive: hours): every other node's write of those rows, and the fence of a partition the
 * others take over, would wait for it; so would they behind a process frozen mid-transaction
 * (SIGSTOP, a long pause). With this bound the server rolls it back and ends the session (the
 * frozen process's callers get a connection error when it resumes). It is below the default lease
 * TTL (15 s), so the take-over of a frozen node's partitions is not held up past its leases. The writer runs a transaction's statements back to back, so a healthy one is idle for
 * milliseconds.
 */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 5000;
/** How long a call waits for a connection to be made, or for one of a full pool, before failing (ms). */
export const CONNECT_TIMEOUT_MS = 5000;

/**
 * A pool on `url` (`postgres://user:pass@host:port/db`). Connections are made on first use.
 * @throws Error when `schema` is not a plain identifier ({@link SCHEMA_NAME})
 */
export function openPool(url: string, options: PoolOptions = {}): Pool {
  const schema = options.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${JSON.stringify(schema)}`);
  return new Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'actor-task-scheduler',
    connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    // search_path and synchronous_commit for every connection: a commit is durable before any
    // caller is answered, whatever the server's default; a transaction left open by a lost client
    // is rolled back (IDLE_IN_TRANSACTION_TIMEOUT_MS). random_page_cost 1.1 (the server's
    // default is 4, a spinning disk's): the store's statements find rows by id, by the hundred, in
    // a working set that is cached; at 4 the planner took a sequential scan and a hash join over
    // 20,000 tasks for a batch of 500 ids (18 ms where the index probes take 3 ms;
    // docs/design-notes/postgres-store.md). plan_cache_mode force_custom_plan: the named prepared
    // statements (the claim, the completion) are parsed once but planned for each call's
    // parameters and the table as it is; a generic plan made while the table was nearly empty
    // stayed a sequential scan and a hash join (decision 5 of that note).
    // statement_timeout: the server stops a statement at the client's own bound (db.ts
    // STATEMENT_TIMEOUT_MS) instead of running on after the client gave up, whatever the role's
    // or the database's setting (settings given at connection time win over ALTER ROLE's).
    // lock_timeout 0 for the same reason: a database's or role's small `lock_timeout` (set for
    // other applications) made the store's row-lock waits on another node's transaction, and the
    // migrations' waits, fail with 55P03: a completion logged as failed, a submission or cancel a
    // 500, a start a stack trace. A wait for a lock is bounded by statement_timeout alone.
    options: `-c search_path=${schema} -c synchronous_commit=on -c random_page_cost=1.1 -c plan_cache_mode=force_custom_plan -c idle_in_transaction_session_timeout=${options.idleInTransactionTimeoutMs ?? IDLE_IN_TRANSACTION_TIMEOUT_MS} -c statement_timeout=${STATEMENT_TIMEOUT_MS} -c lock_timeout=0`,
    types: TYPES,
    keepAlive: true,
    // TCP keepalive probes start after 10 s idle (the OS default is 2 h): a peer gone without a
    // FIN is noticed on idle connections too.
    keepAliveInitialDelayMillis: 10_000,
  });
}

/** The server part of a connection string, without credentials: `postgres://127.0.0.1:5432/scheduler`. */
export function serverOf(url: string): string {
  const m = /^(postgres(?:ql)?:\/\/)(?:[^@/]*@)?([^?]*)/.exec(url);
  return m ? `${m[1]}${m[2]}` : 'postgres';
}
