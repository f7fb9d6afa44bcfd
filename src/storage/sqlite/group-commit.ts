import type Database from 'better-sqlite3';

interface Job {
  op: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit (DESIGN §9): write operations queued during one turn of the event loop run in one
 * SQLite transaction, and every caller is answered after that transaction commits. Each operation
 * runs inside its own SAVEPOINT, so one that throws is rolled back alone and only its caller sees
 * the error. If the commit itself fails, every caller of the batch gets the error.
 *
 * Batching waits for `setImmediate` (the end of the current I/O phase), not for a timer: there is
 * no added latency when the service is idle.
 */
export class GroupCommit {
  private queue: Job[] = [];
  private scheduled = false;
  private closed = false;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly rollbackTo: Database.Statement;
  /** Statistics for tests and metrics: transactions committed and operations in them. */
  readonly stats = { commits: 0, operations: 0, largestBatch: 0 };

  /** @param maxBatch most operations in one transaction (the rest go into the next) */
  constructor(
    private readonly db: Database.Database,
    private readonly maxBatch = 5000,
  ) {
    this.savepoint = db.prepare('SAVEPOINT op');
    this.release = db.prepare('RELEASE op');
    this.rollbackTo = db.prepare('ROLLBACK TO op');
  }

  /**
   * Queues `op` (synchronous SQL) for the next group transaction.
   * @returns its return value, after the commit
   * @throws whatever `op` threw (its writes rolled back), or the commit's error
   */
  run<T>(op: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs everything queued now (also called by close). */
  flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      const outcomes: Array<{ ok: boolean; value: unknown }> = [];
      try {
        this.db.exec('BEGIN IMMEDIATE');
        for (const job of batch) {
          this.savepoint.run();
          try {
            outcomes.push({ ok: true, value: job.op() });
            this.release.run();
          } catch (err) {
            this.rollbackTo.run();
            this.release.run();
            outcomes.push({ ok: false, value: err });
          }
        }
        this.db.exec('COMMIT');
      } catch (err) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        for (const job of batch) job.reject(err);
        continue;
      }
      this.stats.commits++;
      this.stats.operations += batch.length;
      this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
      batch.forEach((job, i) => (outcomes[i].ok ? job.resolve(outcomes[i].value) : job.reject(outcomes[i].value)));
    }
  }

  /** Flushes what is queued and refuses new work. */
  close(): void {
    this.flush();
    this.closed = true;
  }
}
