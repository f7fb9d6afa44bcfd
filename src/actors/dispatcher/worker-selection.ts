/**
 * What the selection reads of a worker: its process id (0: not running), its free slots, and
 * whether its last ping went unanswered (`WorkerSlot.unanswered`).
 */
export interface SelectableWorker {
  readonly pid: number;
  readonly credits: number;
  readonly unanswered?: boolean;
}

/** Whether `w` may be given new attempts: its process runs and answers pings. */
export function takesWork(w: SelectableWorker): boolean {
  return w.pid !== 0 && w.unanswered !== true;
}

/**
 * Chooses the worker processes of one pool for a batch of ready attempts: least loaded first.
 * Attempts go one at a time to the live worker with the most free slots left (its credits minus
 * what this batch already gave it), ties in turn from where the last batch stopped, so at low
 * load consecutive attempts alternate between idle processes instead of piling onto the first,
 * and a burst is split so that the free slots even out. Each worker still gets one claim (and
 * one `run` message) per batch: the split decides only how many of the batch each one takes.
 *
 * The cost is one pass over the pool's workers per attempt (a handful of processes), beside a
 * claim that writes each attempt to the store.
 */
export class WorkerSelection {
  /** Index of the worker a tie goes to next (rotates). */
  private turn = 0;

  /**
   * Splits `n` attempts over `workers` (the pool's workers, in a fixed order).
   * @param n attempts to place (at most the sum of `min(credits, max)` over the live workers)
   * @param max most attempts one worker takes from one batch (`workerBatchMax`: one claim each)
   * @returns per worker (same index as `workers`) how many of the batch it takes; they add up to
   *   `n`, or less when the live workers have too few free slots
   */
  split(workers: readonly SelectableWorker[], n: number, max: number): number[] {
    const k = workers.length;
    const counts = new Array<number>(k).fill(0);
    for (let placed = 0; placed < n; placed++) {
      let best = -1;
      let bestFree = 0;
      for (let step = 0; step < k; step++) {
        const i = (this.turn + step) % k;
        const w = workers[i];
        const free = w.credits - counts[i];
        // Strictly more free slots wins, so among equals the first from `turn` keeps it.
        if (takesWork(w) && counts[i] < max && free > bestFree) {
          best = i;
          bestFree = free;
        }
      }
      if (best < 0) break;
      counts[best]++;
      this.turn = (best + 1) % k;
    }
    return counts;
  }
}
