import { MinHeap } from './min-heap';
import { DueEntry, PRIORITY_RANK } from './task';

/** Oldest due first, then submission order: the order inside one priority level. */
function byDue(a: DueEntry, b: DueEntry): number {
  return a.dueAt - b.dueAt || a.seq - b.seq;
}

/**
 * The rank an entry competes with at `now`: its priority's rank, or the rank of `high` once it
 * has waited (since its due time) `agingMs` or longer — the classic aging remedy against
 * starvation (e.g. Silberschatz, Operating System Concepts, "aging" in priority scheduling).
 */
export function effectiveRank(e: DueEntry, now: number, agingMs: number): number {
  return now - e.dueAt >= agingMs ? 0 : PRIORITY_RANK[e.priority];
}

/**
 * The ready tasks of one tenant: per task type (so a rate-limited type never blocks another) and
 * per priority level, a heap ordered by due time. The next task is the best head over the task
 * types allowed to start: lowest effective rank (aging), then oldest due, then sequence.
 */
export class TenantReadyQueue {
  private readonly byType = new Map<string, Array<MinHeap<DueEntry>>>();
  /** Entries replaced by a newer one of their task ({@link supersede}): dropped when they surface. */
  private readonly superseded = new WeakSet<DueEntry>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Task types with queued work. */
  taskTypes(): IterableIterator<string> {
    return this.byType.keys();
  }

  add(e: DueEntry): void {
    let levels = this.byType.get(e.taskType);
    if (!levels) {
      levels = [new MinHeap(byDue), new MinHeap(byDue), new MinHeap(byDue)];
      this.byType.set(e.taskType, levels);
    }
    levels[PRIORITY_RANK[e.priority]].push(e);
    this.count++;
  }

  /**
   * `e`, queued here, no longer counts: a newer entry of its task (a new priority or due time) was
   * added. It stays in its heap until it surfaces, and is dropped then.
   */
  supersede(e: DueEntry): void {
    this.superseded.add(e);
    this.count--;
  }

  /** The entry that should start next among the types `allowed` accepts, without removing it. */
  peek(now: number, agingMs: number, allowed: (taskType: string) => boolean): DueEntry | undefined {
    let best: DueEntry | undefined;
    let bestRank = Infinity;
    for (const [type, levels] of this.byType) {
      if (!allowed(type)) continue;
      for (const heap of levels) {
        while (heap.size > 0 && this.superseded.has(heap.peek() as DueEntry)) heap.pop();
        const head = heap.peek();
        if (!head) continue;
        const rank = effectiveRank(head, now, agingMs);
        if (!best || rank < bestRank || (rank === bestRank && byDue(head, best) < 0)) {
          best = head;
          bestRank = rank;
        }
      }
      if (levels.every((h) => h.size === 0)) this.byType.delete(type); // only superseded entries were left
    }
    return best;
  }

  /** Removes `e`, which {@link peek} returned (the head of its heap). */
  remove(e: DueEntry): void {
    const levels = this.byType.get(e.taskType) as Array<MinHeap<DueEntry>>;
    levels[PRIORITY_RANK[e.priority]].pop();
    this.count--;
    if (levels.every((h) => h.size === 0)) this.byType.delete(e.taskType);
  }
}
