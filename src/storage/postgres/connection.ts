/**
 * Connections of the PostgreSQL store (node-postgres, `pg`): one pool per store instance, every
 * connection with the store's schema first on its `search_path`, and PostgreSQL's 64-bit integers
 * (`bigint`: epoch-ms times, sequence numbers, counts) read as JavaScript numbers. Times in epoch ms
 * stay far below 2^53, so the conversion is exact; a value above it would be a corrupt row.
 */
import { Pool, PoolConfig, types } from 'pg';
import { SCHEMA_NAME } from './schema-name';

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
   * ms a session may sit idle inside a transaction before the server ends it
   * (`idle_in_transaction_session_timeout`); default 2000. A process stalled in the middle of its
   * write transaction (SIGSTOP, a long pause) holds that transaction's row locks: without this, the
   * new owners of its partitions wait on them to fence until it resumes. Its batch is rolled back
   * (its callers get a connection error when it resumes). The write queue sends a transaction's
   * statements back to back, so a healthy process is idle in a transaction for milliseconds.
   */
  idleInTransactionTimeoutMs?: number;
}

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
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    // search_path and synchronous_commit for every connection: a commit is durable before any
    // caller is answered, whatever the server's default; a stalled transaction ends (see PoolOptions).
    options: `-c search_path=${schema} -c synchronous_commit=on -c idle_in_transaction_session_timeout=${Math.round(options.idleInTransactionTimeoutMs ?? 2000)}`,
    types: TYPES,
    keepAlive: true,
  });
}

/** The server part of a connection string, without credentials: `postgres://127.0.0.1:5432/scheduler`. */
export function serverOf(url: string): string {
  const m = /^(postgres(?:ql)?:\/\/)(?:[^@/]*@)?([^?]*)/.exec(url);
  return m ? `${m[1]}${m[2]}` : 'postgres';
}
