import type Database from 'better-sqlite3';

interface Job {
  op: () => unknown;
  rows: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Limits of one group transaction. */
export interface GroupCommitLimits {
  /** Most operations in one transaction (the rest go into the next). Default 5000. */
  maxBatch?: number;
  /** An operation writing more rows than this is bulk (e.g. a 1,000-task batch insert). Default 32. */
  bulkRows?: number;
  /** Rows of bulk operations in one transaction; at least one bulk operation always goes in. Default 256. */
  bulkRowsPerCommit?: number;
  /** Rows of deferred operations in one transaction; at least one always goes in. Default 256. */
  deferredRowsPerCommit?: number;
  /**
   * Runs after each COMMIT, before any caller is answered; if it throws, every caller of the
   * batch gets its error instead of a result (the writer thread checks there that the file it
   * committed to is still the store's file).
   */
  afterCommit?: () => void;
}

/**
 * Group commit (docs/DESIGN.md §9): write operations queued during one turn of the event loop run in one
 * SQLite transaction, and every caller is answered after that transaction commits. Each operation
 * runs inside its own SAVEPOINT, so one that throws is rolled back alone and only its caller sees
 * the error. If the commit itself fails, every caller of the batch gets the error.
 *
 * Batching waits for `setImmediate` (the end of the current I/O phase), not for a timer: there is
 * no added latency when the service is idle.
 *
 * Bulk lane: operations that write many rows (batch submissions) go into a transaction after the
 * small ones (single submissions, claims, completions), only `bulkRowsPerCommit` rows
 * of them per transaction (at least one operation), and never in two transactions in a row while
 * small operations wait. So one tenant's batch flood adds at most one bulk slice (the transaction
 * running when it came) to another caller's commit wait, instead of the whole backlog of queued
 * batches (the fairness target of docs/DESIGN.md §5: a large batch never holds a small write for long). Reordering is safe:
 * operations queued together are concurrent (each caller waits for its own commit), and a bulk
 * operation only inserts rows nobody else has been told about yet.
 *
 * Deferred lane: operations that may wait for the others, up to `deferredRowsPerCommit` rows of
 * them (at least one operation) at the end of every transaction, in their own queue so they
 * delay neither the small operations nor a batch submission by more than that slice. Used for due
 * marks (SCHEDULED/RETRYING → PENDING) of tasks still waiting at the dispatcher: a claim takes a
 * due task without its mark, and a mark that comes after the claim changes nothing (both are
 * compare-and-sets on the state).
 */
export class GroupCommit {
  private queue: Job[] = [];
  private bulk: Job[] = [];
  private deferred: Job[] = [];
  private lastHadBulk = false;
  private scheduled = false;
  private closed = false;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly rollbackTo: Database.Statement;
  private readonly maxBatch: number;
  private readonly bulkRows: number;
  private readonly bulkRowsPerCommit: number;
  private readonly deferredRowsPerCommit: number;
  private readonly afterCommit: (() => void) | undefined;
  /** Statistics for tests and metrics: transactions committed and operations in them. */
  readonly stats = { commits: 0, operations: 0, largestBatch: 0 };

  constructor(
    private readonly db: Database.Database,
    limits: GroupCommitLimits = {},
  ) {
    this.maxBatch = limits.maxBatch ?? 5000;
    this.bulkRows = limits.bulkRows ?? 32;
    this.bulkRowsPerCommit = limits.bulkRowsPerCommit ?? 256;
    this.deferredRowsPerCommit = limits.deferredRowsPerCommit ?? 256;
    this.afterCommit = limits.afterCommit;
    // Each operation's SAVEPOINT keeps the original of every existing page the operation changes
    // in a sub-journal, which SQLite spills to a temporary file past 64 KiB unless temporary
    // storage is in memory (sqlite.org/tempfiles.html, "Statement Journal Files"). A claim of 64
    // tasks passes that, and the spill more than doubles its cost. Bounded: one operation's pages,
    // freed at its RELEASE.
    db.pragma('temp_store = MEMORY');
    this.savepoint = db.prepare('SAVEPOINT op');
    this.release = db.prepare('RELEASE op');
    this.rollbackTo = db.prepare('ROLLBACK TO op');
  }

  /**
   * Queues `op` (synchronous SQL) for the next group transaction.
   * @param rows how many rows `op` writes (more than `bulkRows`: it goes into the bulk lane)
   * @param deferred true: the deferred lane (an operation that may wait for the others)
   * @returns its return value, after the commit
   * @throws whatever `op` threw (its writes rolled back), or the commit's error
   */
  run<T>(op: () => T, rows = 1, deferred = false): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return new Promise<T>((resolve, reject) => {
      (deferred ? this.deferred : rows > this.bulkRows ? this.bulk : this.queue).push({
        op,
        rows,
        resolve: resolve as (v: unknown) => void,
        reject,
      });
      this.schedule();
    });
  }

  /** Commits one transaction: the small operations, then a slice of the bulk and of the deferred ones; schedules the rest. */
  flush(): void {
    this.scheduled = false;
    if (this.idle()) return;
    this.commit(this.nextBatch());
    this.schedule();
  }

  /** Flushes what is queued and refuses new work. */
  close(): void {
    while (!this.idle()) this.commit(this.nextBatch());
    this.closed = true;
  }

  private idle(): boolean {
    return this.queue.length === 0 && this.bulk.length === 0 && this.deferred.length === 0;
  }

  private schedule(): void {
    if (this.scheduled || this.idle()) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /**
   * The small operations queued, plus a slice of the bulk ones unless the previous transaction
   * had bulk rows and small operations are waiting: then those go alone, so a small operation
   * waits for at most one bulk slice (the transaction running when it came) and never shares its
   * own transaction with one. Then a slice of the deferred ones.
   */
  private nextBatch(): Job[] {
    const batch = this.queue.splice(0, this.maxBatch);
    const bulkTurn = batch.length === 0 || !this.lastHadBulk;
    const take = bulkTurn ? sliceOf(this.bulk, this.bulkRowsPerCommit, this.maxBatch - batch.length) : 0;
    if (take > 0) batch.push(...this.bulk.splice(0, take));
    this.lastHadBulk = take > 0;
    return batch.concat(this.deferred.splice(0, sliceOf(this.deferred, this.deferredRowsPerCommit)));
  }

  private commit(batch: Job[]): void {
    const outcomes: Array<{ ok: boolean; value: unknown }> = [];
    try {
      this.db.exec('BEGIN IMMEDIATE');
      for (const job of batch) {
        this.savepoint.run();
        try {
          outcomes.push({ ok: true, value: job.op() });
          this.release.run();
        } catch (err) {
          // A full disk or an I/O error can make SQLite roll the whole transaction back
          // (sqlite.org/lang_transaction.html, "Response To Errors Within A Transaction"): then
          // every caller of the batch gets that error, not the savepoint's.
          if (!this.db.inTransaction) throw err;
          this.rollbackTo.run();
          this.release.run();
          outcomes.push({ ok: false, value: err });
        }
      }
      this.db.exec('COMMIT');
      this.afterCommit?.();
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      for (const job of batch) job.reject(err);
      return;
    }
    this.stats.commits++;
    this.stats.operations += batch.length;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
    batch.forEach((job, i) => (outcomes[i].ok ? job.resolve(outcomes[i].value) : job.reject(outcomes[i].value)));
  }
}

/**
 * How many jobs from the head of `jobs` fit in `rows` rows: at least one when there is one, at
 * most `maxJobs`.
 */
function sliceOf(jobs: readonly Job[], rows: number, maxJobs = Infinity): number {
  let take = 0;
  let sum = 0;
  while (take < jobs.length && take < maxJobs && (take === 0 || sum + jobs[take].rows <= rows)) sum += jobs[take++].rows;
  return take;
}
