/** The lane of a write: `first` runs before every queued `ordered` write (see {@link WriteQueue}). */
export type WriteLane = 'first' | 'ordered';

/**
 * Runs the write operations of one MongoStore one at a time: those of the `first` lane (the writes
 * that end or keep alive a running attempt, and the fence of a partition just acquired) before
 * those of the `ordered` lane, each lane in the order its writes were called.
 *
 * Why one at a time: the Store contract is written against one writer (SQLite's writing
 * connection), and callers rely on it: a cancel issued right after an insert, without awaiting it,
 * must see the insert. MongoDB gives no such order between two operations sent on different
 * pooled connections. So writes of one store instance are serialized here (each one is still a
 * single-document compare-and-set on the server, which is what keeps several nodes correct);
 * reads are not.
 *
 * Why two lanes: on a slow server (FerretDB under load: hundreds of ms per write) the queue of
 * claims and due marks can be seconds long, longer than an attempt lease. A completion or a lease
 * extension waiting behind it would land after the lease expired: another node's sweep would take
 * the attempt for lost and run its task again, which makes more writes (congestion collapse).
 * Those writes are
 * compare-and-sets on an attempt already claimed (id, attempt, RUNNING), so running them ahead of
 * claims, inserts or due marks changes no outcome a caller can rely on: the claim they follow
 * committed before its worker could report. A fence waiting behind claims delays the take-over of a
 * dead member's partitions; run first, it only makes older-epoch writes still queued fail sooner,
 * which is what a fence is for (writes under the new epoch start after it returns).
 *
 * `drain()` lets `close()` answer every write issued before it.
 */
export class WriteQueue {
  private readonly lanes: Record<WriteLane, Array<() => Promise<void>>> = { first: [], ordered: [] };
  private running = false;
  private readonly idle: Array<() => void> = [];

  /**
   * Runs `op` once every write queued before it in its lane (and every `first` write queued
   * before it starts) has run; resolves or rejects with its result.
   * @param lane `first` for completions, lease extensions and checkpoints of running attempts, and
   *   partition fences; `ordered` (default) for everything else
   */
  run<T>(op: () => Promise<T>, lane: WriteLane = 'ordered'): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.lanes[lane].push(async () => {
        try {
          resolve(await op());
        } catch (err) {
          reject(err);
        }
      });
      if (!this.running) void this.loop();
    });
  }

  /** Resolves once every write queued so far has finished (whatever its outcome). */
  drain(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private async loop(): Promise<void> {
    this.running = true;
    for (;;) {
      const next = this.lanes.first.shift() ?? this.lanes.ordered.shift();
      if (!next) break;
      await next();
    }
    this.running = false;
    for (const w of this.idle.splice(0)) w();
  }
}
