/**
 * Group commit for the PostgreSQL store (docs/design-notes/postgres-store.md): the writes of one
 * store instance run on one dedicated connection, many per transaction, and every caller is
 * answered after its transaction's COMMIT returned (`synchronous_commit=on`: durable on the
 * server's disk). One writing connection per node keeps the order callers rely on (a cancel issued
 * right after an insert, without awaiting it, sees the insert), as SQLite's one writer does; the
 * correctness between nodes comes from each operation's compare-and-set on the row (PostgreSQL's
 * row locks: an UPDATE … WHERE state = … waits for a concurrent writer of the row and re-checks its
 * condition on the new version).
 *
 * Batching waits for `setImmediate`, not for a timer: no added latency when idle. Lanes (as the
 * MongoDB store's write queue): `first` (completions, lease extensions, checkpoints, fences: writes
 * on attempts already claimed) runs before queued `ordered` writes; `deferred` (due marks of tasks
 * still waiting at the dispatcher) goes in at most `deferredPerCommit` per transaction, after the rest.
 *
 * Failures: an operation that throws rolls the transaction back; its caller alone gets the error
 * and the other operations of the batch run again in the next transaction (nothing of them was
 * committed). A deadlock or serialization failure (another node's transaction) runs the whole batch
 * again, at most `conflictRetries` times, also when the server refuses the COMMIT itself with one
 * (SERIALIZABLE isolation, set as a database's default, checks at commit: nothing was committed,
 * and the connection is usable). A write still refused after its last try gets
 * `StoreContendedError` (503 `STORE_CONTENDED`), never the raw driver error. A lost connection
 * (the server away) answers every caller of the batch with that error (mapped to 503 by the
 * store), and the next batch takes a new connection. A COMMIT whose answer was lost may have committed: its callers get the error, and a
 * retried write is a compare-and-set that then finds its work done.
 *
 * Bare statements: a batch of one operation that declares itself one statement (`oneStatement`,
 * asked right before it runs, after the connection is ready) runs without BEGIN and COMMIT. A
 * single statement is atomic on its own, and under `synchronous_commit=on` its implicit commit is
 * durable before the server answers, so the caller is still answered after a durable commit; it
 * saves two of three round trips (docs/design-notes/postgres-store.md, 2026-12-02). The operation
 * is told (`inTransaction` false); one that finds it needs more statements after all opens its own
 * transaction (complete-attempts.ts). Its failures are handled as in a transaction: nothing was
 * written, a conflict runs it again, a lost connection is dropped.
 */
import type { Pool, PoolClient } from 'pg';
import { boundedDb, Db, STATEMENT_TIMEOUT_MS } from './db';
import { isRetryableConflict, storeContendedOf } from './pg-faults';

/** The lane of a write (see the file header). */
export type WriteLane = 'first' | 'ordered' | 'deferred';

/**
 * A write operation: runs its statements on `db`. `inTransaction` is false when it runs alone as a
 * bare statement (see the file header): then each statement commits on its own.
 */
export type WriteOp<T> = (db: Db, inTransaction: boolean) => Promise<T>;

/** Asked right before a batch of this one operation runs: true when it will run exactly one statement. */
export type OneStatement = () => boolean;

interface Job {
  op: WriteOp<unknown>;
  oneStatement: OneStatement | undefined;
  /** Keys this operation will lock (see `WriteQueueOptions.lockFirst`). */
  lockKeys: readonly string[] | undefined;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  conflicts: number;
}

/** Settings of {@link WriteQueue}. */
export interface WriteQueueOptions {
  /** Most operations in one transaction; default 1000. */
  maxBatch?: number;
  /** Most deferred operations in one transaction (at least one goes in); default 32. */
  deferredPerCommit?: number;
  /** Times a batch is run again after a deadlock or serialization failure; default 5. */
  conflictRetries?: number;
  /** True when `err` means the server is away (the connection is dropped and every caller of the batch gets the error). */
  isConnectionError(err: unknown): boolean;
  /** After each COMMIT (the store ends a recoverable connection fault). */
  onCommit?(): void;
  /** The server dropped the idle writing connection (a shutdown, a crash): the store looks at the server at once. */
  onDropped?(err: unknown): void;
  /**
   * Bound on each statement's answer (ms; default 30000): a connection that stopped answering
   * without closing (a half-open socket, a frozen server) fails its batch with `Query read
   * timeout` after this, and is replaced, instead of holding every write for ever.
   */
  statementTimeoutMs?: number;
  /**
   * Takes, right after BEGIN, the locks that the batch's operations declared (`run`'s `lockKeys`,
   * all of them at once, in one order), so that two nodes' transactions cannot each hold a lock the
   * other waits for (a deadlock costs PostgreSQL's `deadlock_timeout`, 1 s, before one is retried).
   * The store's: the workflow rows the keys name (a task's, or a workflow's own), in id order
   * (`lockWorkflowsFirst`).
   */
  lockFirst?(db: Db, keys: string[]): Promise<unknown>;
  /** The clock of {@link WriteQueue.busySince} (epoch ms); default `Date.now`. */
  now?(): number;
}

/** Runs write operations in group-commit transactions on one connection of `pool`. */
export class WriteQueue {
  private readonly lanes: Record<WriteLane, Job[]> = { first: [], ordered: [], deferred: [] };
  private client: PoolClient | null = null;
  /** The writing connection as the operations see it: each statement bounded by `statementTimeoutMs`. */
  private db: Db | null = null;
  private scheduled = false;
  private running: Promise<void> | null = null;
  private readonly maxBatch: number;
  private readonly deferredPerCommit: number;
  private readonly conflictRetries: number;
  private readonly statementTimeoutMs: number;
  /** When the batch on the connection now began (epoch ms), or null while none runs. */
  private batchSince: number | null = null;
  /** Transactions committed (`bare`: of them, single statements without BEGIN/COMMIT), operations in them and the largest batch. */
  readonly stats = { commits: 0, bare: 0, operations: 0, largestBatch: 0 };

  constructor(
    private readonly pool: Pool,
    private readonly options: WriteQueueOptions,
  ) {
    this.maxBatch = options.maxBatch ?? 1000;
    this.deferredPerCommit = options.deferredPerCommit ?? 32;
    this.conflictRetries = options.conflictRetries ?? 5;
    this.statementTimeoutMs = options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
  }

  /**
   * Queues `op`; resolves with its result after its transaction committed. With `oneStatement`,
   * a batch of `op` alone may run it as a bare statement (see the file header). `lockKeys`: what
   * `op` will lock, taken with the whole batch's first (`WriteQueueOptions.lockFirst`).
   */
  run<T>(op: WriteOp<T>, lane: WriteLane = 'ordered', oneStatement?: OneStatement, lockKeys?: readonly string[]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.lanes[lane].push({ op, oneStatement, lockKeys, resolve: resolve as (v: unknown) => void, reject, conflicts: 0 });
      this.schedule();
    });
  }

  /** Answers every write queued before it, then releases the connection. */
  async close(): Promise<void> {
    while (this.pending() > 0 || this.running) {
      this.schedule();
      await (this.running ?? new Promise<void>((r) => setImmediate(r)));
    }
    this.client?.release();
    this.client = null;
    this.db = null;
  }

  /**
   * When the batch now on the connection began (epoch ms, the `now` option's clock), or null
   * while none runs: a batch that has run for seconds is held by the server (a lock on the
   * store's tables, a server too slow), and every write queued behind it waits too.
   */
  get busySince(): number | null {
    return this.batchSince;
  }

  private pending(): number {
    return this.lanes.first.length + this.lanes.ordered.length + this.lanes.deferred.length;
  }

  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.running = this.pump().finally(() => {
        this.running = null;
        if (this.pending() > 0) this.schedule();
      });
    });
  }

  private async pump(): Promise<void> {
    while (this.pending() > 0) {
      this.batchSince = this.options.now?.() ?? Date.now();
      try {
        await this.commit(this.take());
      } finally {
        this.batchSince = null;
      }
    }
  }

  /** The next batch: first-lane writes, then ordered ones, then a slice of deferred ones. */
  private take(): Job[] {
    const batch = this.lanes.first.splice(0, this.maxBatch);
    batch.push(...this.lanes.ordered.splice(0, this.maxBatch - batch.length));
    // At least one deferred write per transaction, so due marks never starve under a steady load.
    batch.push(...this.lanes.deferred.splice(0, Math.max(1, Math.min(this.deferredPerCommit, this.maxBatch - batch.length))));
    return batch;
  }

  /** Puts jobs back at the head of the queue, in their order (they run in the next batch). */
  private requeue(jobs: Job[]): void {
    if (jobs.length > 0) this.lanes.first.unshift(...jobs);
  }

  /**
   * The writing connection, made on first use and after a drop. While this queue holds it, the
   * pool does not listen to its errors: without a listener of ours, a server that ends the idle
   * session (57P01 at a shutdown) or closes the socket would raise an unhandled 'error' and end
   * the process. Such an error drops the connection (the next batch takes a new one).
   */
  private async connection(): Promise<Db> {
    if (this.client && this.db) return this.db;
    const c = await this.pool.connect();
    c.on('error', (err: unknown) => {
      if (this.client !== c) return;
      this.drop(err);
      this.options.onDropped?.(err);
    });
    this.client = c;
    this.db = boundedDb(c, this.statementTimeoutMs);
    return this.db;
  }

  /** Drops the writing connection after a connection error (the pool discards it). */
  private drop(err: unknown): void {
    const c = this.client;
    this.client = null;
    this.db = null;
    c?.release(err instanceof Error ? err : new Error(String(err)));
  }

  private async commit(batch: Job[]): Promise<void> {
    if (batch.length === 0) return;
    let db: Db;
    try {
      db = await this.connection();
    } catch (err) {
      for (const j of batch) j.reject(err);
      return;
    }
    if (batch.length === 1 && batch[0].oneStatement?.() === true) return this.bare(db, batch[0]);
    const results: unknown[] = [];
    let failed: { at: number; err: unknown } | null = null;
    let commitConflict: unknown = null;
    try {
      await db.query('BEGIN');
      failed = await this.lockFirst(db, batch);
      for (let i = 0; i < batch.length && !failed; i++) {
        try {
          results.push(await batch[i].op(db, true));
        } catch (err) {
          failed = { at: i, err };
          break;
        }
      }
      if (failed && this.options.isConnectionError(failed.err)) {
        // The connection is gone or does not answer: no ROLLBACK on it (it would wait as long again).
        this.drop(failed.err);
        for (const j of batch) j.reject(failed.err);
        return;
      }
      if (failed) {
        await db.query('ROLLBACK');
      } else {
        commitConflict = await db.query('COMMIT').then(
          () => null,
          (err: unknown) => {
            if (isRetryableConflict(err)) return err; // refused, rolled back: the session is idle again
            throw err;
          },
        );
      }
    } catch (err) {
      // BEGIN, COMMIT or ROLLBACK failed: the connection is unusable or the outcome unknown.
      this.drop(err);
      for (const j of batch) j.reject(err);
      return;
    }
    if (commitConflict !== null) {
      // Every operation of the batch was refused with it: run them again, each at most conflictRetries times.
      const again = batch.filter((j) => j.conflicts < this.conflictRetries);
      for (const j of batch) if (j.conflicts >= this.conflictRetries) j.reject(storeContendedOf(commitConflict, j.conflicts + 1));
      for (const j of again) j.conflicts++;
      this.requeue(again);
      return;
    }
    if (!failed) {
      this.stats.commits++;
      this.stats.operations += batch.length;
      this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
      this.options.onCommit?.();
      for (let i = 0; i < batch.length; i++) batch[i].resolve(results[i]);
      return;
    }
    const { at, err } = failed;
    if (isRetryableConflict(err) && batch[at].conflicts < this.conflictRetries) {
      batch[at].conflicts++;
      this.requeue(batch);
      return;
    }
    batch[at].reject(isRetryableConflict(err) ? storeContendedOf(err, batch[at].conflicts + 1) : err);
    this.requeue(batch.filter((_, i) => i !== at));
  }

  /**
   * The batch's declared locks, all at once (`WriteQueueOptions.lockFirst`). @returns null, or the
   * failure charged to the first job that declared any (a conflict runs the batch again, as for its op)
   */
  private async lockFirst(db: Db, batch: Job[]): Promise<{ at: number; err: unknown } | null> {
    const lock = this.options.lockFirst;
    if (!lock) return null;
    const keys = [...new Set(batch.flatMap((j) => j.lockKeys ?? []))];
    if (keys.length === 0) return null;
    try {
      await lock(db, keys);
      return null;
    } catch (err) {
      return { at: batch.findIndex((j) => (j.lockKeys?.length ?? 0) > 0), err };
    }
  }

  /** Runs `job` alone without BEGIN/COMMIT (see the file header); failures as in {@link commit}. */
  private async bare(db: Db, job: Job): Promise<void> {
    let result: unknown;
    try {
      result = await job.op(db, false);
    } catch (err) {
      if (this.options.isConnectionError(err)) {
        this.drop(err);
        job.reject(err);
        return;
      }
      try {
        // Nothing is open after a failed bare statement; an operation that opened its own
        // transaction and failed inside it may have left it open: end it (a no-op otherwise).
        await db.query('ROLLBACK');
      } catch (rollbackErr) {
        this.drop(rollbackErr);
      }
      if (isRetryableConflict(err) && job.conflicts < this.conflictRetries) {
        job.conflicts++;
        this.requeue([job]);
      } else {
        job.reject(isRetryableConflict(err) ? storeContendedOf(err, job.conflicts + 1) : err);
      }
      return;
    }
    this.stats.commits++;
    this.stats.bare++;
    this.stats.operations++;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, 1);
    this.options.onCommit?.();
    job.resolve(result);
  }
}
