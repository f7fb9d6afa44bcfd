/**
 * Runs the write operations of one MongoStore one after another, in the order they were called.
 *
 * Why: the Store contract is written against one writer (SQLite's writing connection), and callers
 * rely on it: a cancel issued right after an insert, without awaiting it, must see the insert.
 * MongoDB gives no such order between two operations sent on different pooled connections. So
 * writes of one store instance are serialized here (each one is still a single-document
 * compare-and-set on the server, which is what keeps several nodes correct); reads are not.
 * `drain()` lets `close()` answer every write issued before it.
 */
export class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  /** Runs `op` after every write queued before it; resolves or rejects with its result. */
  run<T>(op: () => Promise<T>): Promise<T> {
    this.pending++;
    const result = this.tail.then(op, op);
    this.tail = result.then(
      () => this.pending--,
      () => this.pending--,
    );
    return result;
  }

  /** Resolves once every write queued so far has finished (whatever its outcome). */
  async drain(): Promise<void> {
    while (this.pending > 0) await this.tail;
  }
}
