/**
 * The connections of one {@link PostgresStore} and how its calls reach them: the pool (reads), two
 * connections of their own for lease and member writes, the two group-commit write queues, the
 * connection watch and its probe, and the store's health. Opening connects and migrates; every
 * call goes through {@link StoreConnections.write}, {@link StoreConnections.read} or
 * {@link StoreConnections.direct}, which turn a lost connection into the `connection_lost` fault
 * and its 503, and calls held by a lock into the `stalled` fault.
 */
import type { Pool } from 'pg';
import { Clock, SystemClock } from '../../domain/clock';
import { SchemaChange, StoreConfigError, StoreUnreachableError } from '../store';
import { StoreFault, StoreHealth, storeUnavailable } from '../store-health';
import { boundedDb, Db } from './db';
import { CONNECT_TIMEOUT_MS, openPool, serverOf } from './connection';
import { ConnectionWatch, PROBE_TIMEOUT_MS, ProbeConnection, WRITE_STALL_MS } from './connection-watch';
import { migrate, SCHEMA_VERSION } from './migrations';
import {
  hiddenTablesFaultOf,
  isPoolWaitTimeout,
  isRetryableConflict,
  isStallSymptom,
  missingRelationOf,
  postgresConfigProblem,
  postgresFaultOf,
  postgresPrivilegeFaultOf,
  postgresTablesFaultOf,
  storeContendedOf,
} from './pg-faults';
import { OneStatement, WriteLane, WriteOp, WriteQueue } from './write-queue';
import { lockWorkflowsFirst } from './ops/workflow-progress';

/** Most connections of the lease and member writes, on top of the pool's. */
const LEASE_CONNECTIONS = 2;

/** The time of a fault's `since` when the store is given no clock. */
const SYSTEM_CLOCK = new SystemClock();

/**
 * How long a `connection_lost` fault has been in force before writes are refused at once (ms): the
 * watch's probe bound, so that a fault one dropped connection reported, with the server answering,
 * ends before any write is refused for it.
 */
export const LOST_CONFIRMED_MS = PROBE_TIMEOUT_MS;

/** Settings of a {@link PostgresStore}. */
export interface PostgresStoreOptions {
  /** Schema of the store's tables (created at open); default `public`. Tests use one per store. */
  schema?: string;
  /** Connections for reads (default 8); the two writing connections and the two for lease and member writes come on top. */
  poolSize?: number;
  /**
   * The scheduler's clock: a claim that waited in the write queue starts its attempt and lease at
   * the later of its `now` and this clock when it runs; also the time of a fault's `since`.
   */
  clock?: Pick<Clock, 'now'>;
  /** Timers of the connection watch (connection-watch.ts); default: the system clock. */
  timers?: Clock;
  /** Interval of the connection watch while healthy (ms); default 2000. */
  watchIntervalMs?: number;
  /** A write transaction running this long is the `stalled` fault (ms); default 10000 (connection-watch.ts). */
  writeStallMs?: number;
}

/**
 * The store's connections (see the file header). Its {@link health}: a lost connection (server
 * down, unreachable, restarting) is a recoverable `connection_lost` fault; every call that meets
 * it rejects with `StoreUnavailableError` (503 `STORE_UNAVAILABLE`), and the next write or read
 * that succeeds ends it. The {@link ConnectionWatch} sees it without any call (a `SELECT 1` on a
 * connection of its own every 2 s, at once when the server drops a connection) and ends it within
 * about a second of the server answering again; the pool and the writers make new connections then
 * by themselves. The store's tables gone (its schema or database dropped under it) is the
 * `tables_missing` fault, which does not end: every call answers 503 without the server.
 */
export class StoreConnections {
  readonly health = new StoreHealth();
  private pool: Pool | null = null;
  /**
   * Lease and member writes on connections of their own ({@link LEASE_CONNECTIONS}): on the pool
   * they waited behind reads held by a lock on `tasks` (or a burst of listings) and the node lost
   * every partition after the connect timeout, though the leases table was free.
   */
  private leasePool: Pool | null = null;
  private writes: WriteQueue | null = null;
  /**
   * The writes of running attempts (completions, lease extensions, checkpoints, fences: the
   * `first` lane) on a connection of their own, in transactions of their own, beside the other
   * writes' group commit: they are compare-and-sets on attempts already claimed (or fences), so
   * running them beside queued claims, inserts and due marks changes no outcome a caller relies on,
   * which is why the one queue already let them go first; two connections commit twice as often.
   */
  private attemptWrites: WriteQueue | null = null;
  private watch: ConnectionWatch | null = null;
  private probe: ProbeConnection | null = null;
  /** `host:port/database` of the URL, for messages and faults. */
  readonly target: string;
  readonly schema: string;

  /**
   * @param url connection string (`POSTGRES_URL`), e.g. `postgres://scheduler@127.0.0.1:5432/scheduler`
   */
  constructor(
    private readonly url: string,
    private readonly options: PostgresStoreOptions = {},
  ) {
    this.target = serverOf(url);
    this.schema = options.schema ?? 'public';
  }

  /** The scheduler's clock, or the system's. */
  get clock(): Pick<Clock, 'now'> {
    return this.options.clock ?? SYSTEM_CLOCK;
  }

  /** True once {@link open} succeeded and until {@link close}. */
  get isOpen(): boolean {
    return this.pool !== null;
  }

  /**
   * Connects, migrates (under an advisory lock: nodes may start together) and records the
   * partition count on first use. A no-op (null) when already open.
   * @throws StoreConfigError when the database was created with another partition count or by a newer build
   * @throws StoreUnavailableError when the server cannot be reached
   */
  async open(partitions: number): Promise<SchemaChange | null> {
    if (this.pool) return null;
    // The two writing connections are held for good: they come on top of the connections for reads.
    const pool = openPool(this.url, { schema: this.schema, max: (this.options.poolSize ?? 8) + 2 });
    // An idle connection's error (the pool has discarded it): the watch looks at the server at once.
    pool.on('error', () => this.watch?.checkSoon());
    let change: SchemaChange | null = null;
    try {
      change = await this.migrate(pool, partitions);
    } catch (err) {
      await pool.end().catch(() => undefined);
      // At start-up nothing is acknowledged yet: a wrong URL, role or database is a configuration
      // error (one line, exit 78), a server away or read-only (a standby) is one line too (exit
      // 69), never a stack trace.
      const problem = postgresConfigProblem(err, this.target);
      if (problem) throw new StoreConfigError(problem);
      const fault = postgresFaultOf(err, this.target, this.clock.now());
      if (fault) {
        const cause = fault.cause.replace(/\s+/g, ' ');
        throw new StoreUnreachableError(
          fault.kind === 'read_only'
            ? `the PostgreSQL server ${this.target} takes no writes (a hot standby, or default_transaction_read_only on): ${cause}`
            : `the PostgreSQL server ${this.target} cannot be reached: ${cause}`,
        );
      }
      throw err;
    }
    this.pool = pool;
    this.leasePool = openPool(this.url, { schema: this.schema, max: LEASE_CONNECTIONS });
    this.leasePool.on('error', () => this.watch?.checkSoon());
    const queueOptions = {
      isConnectionError: (err: unknown) => postgresFaultOf(err, this.target, 0) !== null,
      onCommit: () => this.wrote(),
      now: () => this.clock.now(),
      onDropped: () => this.watch?.checkSoon(),
      lockFirst: lockWorkflowsFirst,
    };
    this.writes = new WriteQueue(pool, queueOptions);
    this.attemptWrites = new WriteQueue(pool, queueOptions);
    const timers = this.options.timers ?? SYSTEM_CLOCK;
    this.probe = new ProbeConnection(this.url, () => this.watch?.checkSoon());
    const probe = this.probe;
    this.watch = new ConnectionWatch({
      clock: {
        now: () => this.clock.now(),
        monotonic: () => timers.monotonic(),
        setTimeout: (fn, ms) => timers.setTimeout(fn, ms),
        clearTimeout: (h) => timers.clearTimeout(h),
      },
      health: this.health,
      target: this.target,
      probe: () => probe.check(),
      writesBusySince: () => this.writesBusySince(),
      poolSaturated: () => this.poolSaturated(),
      ...(this.options.watchIntervalMs !== undefined ? { intervalMs: this.options.watchIntervalMs } : {}),
      ...(this.options.writeStallMs !== undefined ? { stallMs: this.options.writeStallMs } : {}),
    });
    this.watch.start();
    return change;
  }

  /** Runs the migrations and checks the partition count, on one connection of `pool`. */
  private async migrate(pool: Pool, partitions: number): Promise<SchemaChange | null> {
    const client = await pool.connect();
    // A checked-out connection the server ends emits 'error' (no pool listener then): its query
    // rejects anyway, and an unhandled 'error' would end the process.
    client.on('error', () => undefined);
    try {
      const { from, applied } = await migrate(client, this.schema);
      await client.query(`INSERT INTO meta (key, value) VALUES ('partitions', $1) ON CONFLICT (key) DO NOTHING`, [String(partitions)]);
      const { rows } = await client.query<{ value: string }>(`SELECT value FROM meta WHERE key = 'partitions'`);
      const stored = rows[0]?.value;
      if (stored !== undefined && Number(stored) !== partitions) {
        throw new StoreConfigError(
          `invalid configuration: partitions (env PARTITIONS): the PostgreSQL store ${this.target} (schema ${this.schema}) was created with ${stored} partitions, not ${partitions}`,
        );
      }
      return applied.length > 0 ? { from, to: SCHEMA_VERSION, applied } : null;
    } finally {
      client.release();
    }
  }

  /** Answers every write issued before it, then disconnects. Idempotent. */
  async close(): Promise<void> {
    const { pool, leasePool, writes, attemptWrites, watch, probe } = this;
    if (!pool) return;
    this.pool = null;
    this.leasePool = null;
    this.writes = null;
    this.attemptWrites = null;
    this.watch = null;
    this.probe = null;
    await watch?.stop();
    await probe?.close();
    await Promise.all([writes?.close(), attemptWrites?.close()]);
    await Promise.all([pool.end(), leasePool?.end()]);
  }

  /**
   * Group-commit statistics (transactions, operations in them, largest batch; `bare`: the
   * transactions that were one statement without BEGIN/COMMIT, write-queue.ts); null when closed.
   */
  commitStats(): { commits: number; bare: number; operations: number; largestBatch: number } | null {
    if (!this.writes || !this.attemptWrites) return null;
    const [a, b] = [this.writes.stats, this.attemptWrites.stats];
    return {
      commits: a.commits + b.commits,
      bare: a.bare + b.bare,
      operations: a.operations + b.operations,
      largestBatch: Math.max(a.largestBatch, b.largestBatch),
    };
  }

  /** When the longer-running of the two writing connections' batches began (epoch ms), or null while neither runs one. */
  private writesBusySince(): number | null {
    const a = this.writes?.busySince ?? null;
    const b = this.attemptWrites?.busySince ?? null;
    return a === null ? b : b === null ? a : Math.min(a, b);
  }

  /**
   * Queues a write in the group commit (see {@link WriteQueue}): the `first` lane on the attempts'
   * connection, the others on the main writing connection. `workflowsOf`: the workflow rows the
   * write will lock, as task ids (their workflows) or `workflowLockKey`s, taken with the rest of its
   * batch's first, in id order.
   */
  write<T>(op: WriteOp<T>, lane: WriteLane = 'ordered', oneStatement?: OneStatement, workflowsOf?: readonly string[]): Promise<T> {
    const queue = lane === 'first' ? this.attemptWrites : this.writes;
    if (!queue) return Promise.reject(new Error('store is not open'));
    // Behind a batch held that long (the `stalled` fault), a write would wait out the statement
    // timeout (30 s) before its 503: it gets the 503 at once. A connection not held still writes.
    const fault = this.health.fault;
    const since = queue.busySince;
    if (fault?.kind === 'stalled' && since !== null && this.clock.now() - since >= (this.options.writeStallMs ?? WRITE_STALL_MS))
      return Promise.reject(storeUnavailable(fault));
    // The server away for longer than the watch's probe bound (its probe, every second, has not
    // reached it since): a write would wait out a connect or read timeout (5–10 s on a link that
    // drops packets) before the same 503; it gets it at once. The watch ends the fault about a
    // second after the server answers, and a read that succeeds ends it too.
    if (fault?.kind === 'connection_lost' && this.clock.now() - fault.since >= LOST_CONFIRMED_MS)
      return Promise.reject(storeUnavailable(fault));
    return this.watched(() => queue.run(op, lane, oneStatement, workflowsOf), true);
  }

  /** A read on the pool. */
  read<T>(op: (db: Db) => Promise<T>): Promise<T> {
    const pool = this.pool;
    if (!pool) return Promise.reject(new Error('store is not open'));
    return this.watched(() => op(boundedDb(pool)), false);
  }

  /** A one-statement write outside the group commit, on the lease connections (lease and member writes). */
  direct<T>(op: (db: Db) => Promise<T>): Promise<T> {
    const pool = this.leasePool;
    if (!pool) return Promise.reject(new Error('store is not open'));
    return this.watched(() => op(boundedDb(pool)), true);
  }

  /** True when the server answers a `SELECT 1` within the probe's bound; false when closed or not. */
  async ping(): Promise<boolean> {
    if (!this.pool) return false;
    try {
      const { rows } = await boundedDb(this.pool, PROBE_TIMEOUT_MS).query<{ one: number }>('SELECT 1 AS one');
      return rows[0]?.one === 1;
    } catch {
      return false;
    }
  }

  /**
   * `call`'s result; a connection error becomes the `connection_lost` fault and its 503, the
   * store's tables gone the `tables_missing` fault (not recoverable) and its 503, a privilege the
   * role lost the `permission_denied` fault and its 503 (not a 500), a read refused for concurrent
   * transactions (40001, 40P01: SERIALIZABLE) `STORE_CONTENDED`'s 503. While a fault
   * that is not recoverable is in force, `call` is not made: its 503 at once. A success
   * ends that fault; a committed write (`wrote`) ends any recoverable one (a read says nothing
   * about a full disk).
   */
  private watched<T>(call: () => Promise<T>, wrote: boolean): Promise<T> {
    // A fault that is not recoverable (the tables gone) refuses every call without the server:
    // whatever answers there now is not the store the service acknowledged into.
    const fault = this.health.fault;
    if (fault && !fault.recoverable) return Promise.reject(storeUnavailable(fault));
    return call().then(
      (result) => {
        if (wrote) this.wrote();
        else if (this.health.fault?.kind === 'connection_lost') this.health.recovered();
        return result;
      },
      async (err: unknown) => {
        const now = this.clock.now();
        const stall = this.stallOf(err, now);
        if (stall) {
          if (this.health.fault === null) this.health.report(stall);
          throw storeUnavailable(this.health.fault ?? stall);
        }
        let fault = postgresFaultOf(err, this.target, now) ?? postgresPrivilegeFaultOf(err, this.target, now);
        const tables = fault ? null : postgresTablesFaultOf(err, this.target, now);
        if (tables)
          fault = (await this.relationExists(missingRelationOf(err))) ? hiddenTablesFaultOf(err, this.target, this.schema, now) : tables;
        if (!fault) throw isRetryableConflict(err) ? storeContendedOf(err, 1) : err;
        this.health.report(fault);
        throw storeUnavailable(this.health.fault ?? fault);
      },
    );
  }

  /**
   * The `stalled` fault `err` is a symptom of, or null: a timeout while `stalled` is in force
   * (the held calls time out in turn; the watch, not they, says when the server is away), or,
   * with no fault in force, a call that waited the connect timeout for a connection while every
   * connection of the pool was in use (the server answers the watch; its connections are held).
   */
  private stallOf(err: unknown, now: number): StoreFault | null {
    if (!isStallSymptom(err)) return null;
    const current = this.health.fault;
    if (current?.kind === 'stalled') return current;
    if (current !== null || !isPoolWaitTimeout(err) || !this.poolSaturated()) return null;
    const max = this.pool?.options.max ?? 0;
    const cause =
      `every connection of the pool (${max}) is in use and a call waited ${CONNECT_TIMEOUT_MS / 1000} s for one while the ` +
      "server answers: a lock held on the store's tables (pg_locks, pg_stat_activity)?";
    return { kind: 'stalled', target: this.target, cause, recoverable: true, since: now };
  }

  /** True while every connection of the pool is in use and a call waits for one. */
  private poolSaturated(): boolean {
    const pool = this.pool;
    if (!pool) return false;
    return pool.waitingCount > 0 && pool.idleCount === 0 && pool.totalCount >= (pool.options.max ?? 10);
  }

  /**
   * A write committed: a recoverable fault ends, except `stalled`, which the watch ends once
   * no write has run too long (a commit on one writing connection says nothing of the other).
   */
  private wrote(): void {
    if (this.health.fault?.kind !== 'stalled') this.health.recovered();
  }

  /**
   * True when `relation` is a table of the store's schema by the catalogs (readable by every role,
   * without `USAGE` on the schema); false when it is not, or cannot be told (no name, the check
   * failing): then the store's tables are taken as gone, the safe reading.
   */
  private async relationExists(relation: string | null): Promise<boolean> {
    if (!relation || !this.pool) return false;
    try {
      const { rows } = await boundedDb(this.pool).query<{ found: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = $1 AND c.relname = $2) AS found`,
        [this.schema, relation],
      );
      return rows[0]?.found === true;
    } catch {
      return false;
    }
  }
}
