import { MinHeap } from '../../domain/min-heap';
import type { ClaimedTask, DueEntry } from '../../domain/task';

/** Order of entries waiting for their due time: due time, then submission sequence. */
function byDue(a: DueEntry, b: DueEntry): number {
  return a.dueAt - b.dueAt || a.seq - b.seq;
}

/**
 * A held attempt: its due time, when it was held (a counter: ties of due time keep the order they
 * were claimed in), its worker, and its task, null once it is held no more (taken to be sent, or
 * dropped by a cancel; a dropped one stays in its heap until it comes up, a taken one in
 * `heldIds` until it is compacted, neither keeping its task's payload alive).
 */
interface Held {
  readonly dueAt: number;
  readonly n: number;
  readonly workerId: string;
  task: ClaimedTask | null;
}

/** An entry waiting to be claimed ahead: when it was queued (a counter: ties of due time keep the order they were handed out in). */
interface ToClaim {
  readonly dueAt: number;
  readonly n: number;
  readonly entry: DueEntry;
}

/** Entries of `heldIds` no longer held, beyond 4 × those held, above which it is rebuilt. */
const STALE_SLACK = 10_000;

/**
 * Order of held attempts and of entries waiting to be claimed ahead: due time, then the order they
 * were held or handed out in (`n`). A herd's attempts share one due time and come from claims
 * answered in no particular sequence order, so ordering them by `seq` made each a heap insertion
 * and removal (measured: the comparisons were a fifth of the main thread's time at the instant of
 * a herd of 100,000); in arrival order, they go into the heap's ordered run at O(1) each
 * (domain/min-heap.ts).
 */
function byDueThenArrival(a: { dueAt: number; n: number }, b: { dueAt: number; n: number }): number {
  return a.dueAt - b.dueAt || a.n - b.n;
}

/**
 * The dispatcher's side of claiming ahead (`claimAheadMs`, embedded mode; load-tests/README.md
 * "Claiming a herd ahead of its instant"): entries handed out before their due time, without I/O
 * or timers.
 *
 * - An entry that may be claimed ahead (no concurrency key, no rate limit, not an external
 *   queue's: the caller decides) waits in its pool's `toClaim`, in due order, until the
 *   dispatcher claims it (`Store.claimTasksAhead`), or, if it comes due first (a herd larger than
 *   the workers may hold), joins the ready queues ({@link takeDueToClaim}); any other waits in
 *   `notYetDue` and joins the ready queues at its due time, so nothing starts early.
 * - A claimed attempt is held for the worker it was claimed for, in due order, until its due time
 *   and a free slot of that worker ({@link takeDue}); then the dispatcher sends it and it runs as
 *   any other attempt. Held attempts are not in the dispatcher's `running` map: they have not
 *   started, so no timeout or overrun applies; their leases are extended with their worker's
 *   heartbeats ({@link heldOf}), and the lease sweep leaves them alone ({@link holds}).
 *
 * @typeParam P the dispatcher's pool (the key of the lists to claim)
 */
export class AheadClaims<P> {
  /** Per pool, in due order (then hand-out order); a pool with none has no entry. */
  private readonly toClaim = new Map<P, MinHeap<ToClaim>>();
  /** How many entries were ever queued to claim (the order of ties). */
  private queuedSoFar = 0;
  private readonly notYetDue = new MinHeap<DueEntry>(byDue);
  /** Claimed ahead, per worker slot id, in due order. */
  private readonly held = new Map<string, MinHeap<Held>>();
  /** How many attempts were ever held (the order of ties). */
  private heldSoFar = 0;
  /**
   * Held attempts by task id, and some taken since: an attempt taken to be sent is only marked
   * (its task set to null), since a deletion from a map of 100,000 string keys was a tenth of the main thread at
   * a herd's instant (CPU profile); the map is emptied when nothing is held and rebuilt when the
   * taken ones outnumber 4 × the held ones + 10,000.
   */
  private heldIds = new Map<string, Held>();
  /** Attempts held (entries of `heldIds` with a task). */
  private live = 0;
  /** Attempts held per worker slot id (its heap also keeps dropped ones until they come up). */
  private readonly liveOf = new Map<string, number>();

  /** Attempts held. */
  get heldCount(): number {
    return this.live;
  }

  /** Queues an entry to claim ahead for `pool` (the caller checked it may be). */
  addToClaim(pool: P, e: DueEntry): void {
    let heap = this.toClaim.get(pool);
    if (!heap) this.toClaim.set(pool, (heap = new MinHeap<ToClaim>(byDueThenArrival)));
    heap.push({ dueAt: e.dueAt, n: this.queuedSoFar++, entry: e });
  }

  /** An entry handed out early that must not be claimed ahead: it joins the ready queues at its due time. */
  addNotYetDue(e: DueEntry): void {
    this.notYetDue.push(e);
  }

  /** Entries of `notYetDue` due by `now` (epoch ms), taken out, in due order. */
  takeNowDue(now: number): DueEntry[] {
    const out: DueEntry[] = [];
    for (let top = this.notYetDue.peek(); top && top.dueAt <= now; top = this.notYetDue.peek()) out.push(this.notYetDue.pop() as DueEntry);
    return out;
  }

  /** Up to `max` entries to claim ahead for `pool`, taken out earliest due first (ties: in the order they were handed out). */
  takeToClaim(pool: P, max: number): DueEntry[] {
    const heap = this.toClaim.get(pool);
    const out: DueEntry[] = [];
    if (!heap) return out;
    while (out.length < max && heap.size > 0) out.push((heap.pop() as ToClaim).entry);
    if (heap.size === 0) this.toClaim.delete(pool);
    return out;
  }

  /**
   * Entries waiting to be claimed ahead that came due (`dueAt <= now`, epoch ms) before their
   * claim, taken out (each pool's in due order): they go the usual way (the caller queues them as
   * ready).
   */
  takeDueToClaim(now: number): DueEntry[] {
    const out: DueEntry[] = [];
    for (const [pool, heap] of this.toClaim) {
      for (let top = heap.peek(); top && top.dueAt <= now; top = heap.peek()) out.push((heap.pop() as ToClaim).entry);
      if (heap.size === 0) this.toClaim.delete(pool);
    }
    return out;
  }

  /** How many entries wait to be claimed ahead for `pool`. */
  toClaimCount(pool: P): number {
    return this.toClaim.get(pool)?.size ?? 0;
  }

  /** Pools with entries to claim. */
  poolsToClaim(): IterableIterator<P> {
    return this.toClaim.keys();
  }

  /** Holds attempts claimed ahead for worker `workerId`. */
  hold(workerId: string, tasks: readonly ClaimedTask[]): void {
    if (tasks.length === 0) return;
    for (const t of tasks) {
      const prev = this.heldIds.get(t.id);
      // Not expected (a task is held once): the newer claim wins, the older is skipped.
      if (prev?.task) this.forget(prev);
    }
    let heap = this.held.get(workerId);
    if (!heap) this.held.set(workerId, (heap = new MinHeap<Held>(byDueThenArrival)));
    for (const t of tasks) {
      const h: Held = { dueAt: t.dueAt, n: this.heldSoFar++, workerId, task: t };
      heap.push(h);
      this.heldIds.set(t.id, h);
    }
    this.live += tasks.length;
    this.liveOf.set(workerId, (this.liveOf.get(workerId) ?? 0) + tasks.length);
  }

  /** Attempts held for `workerId`. */
  heldCountOf(workerId: string): number {
    return this.liveOf.get(workerId) ?? 0;
  }

  /**
   * Up to `max` attempts held for `workerId` that are due by `now` (epoch ms), taken out in due
   * order (an attempt dropped meanwhile is skipped).
   */
  takeDue(workerId: string, now: number, max: number): ClaimedTask[] {
    const heap = this.held.get(workerId);
    const out: ClaimedTask[] = [];
    while (heap && out.length < max) {
      const top = heap.peek();
      if (!top || top.dueAt > now) break;
      heap.pop();
      const t = top.task;
      if (!t) continue;
      top.task = null;
      out.push(t);
    }
    if (heap && heap.size === 0) this.held.delete(workerId);
    if (out.length > 0) {
      this.live -= out.length;
      const n = (this.liveOf.get(workerId) ?? out.length) - out.length;
      if (n > 0) this.liveOf.set(workerId, n);
      else this.liveOf.delete(workerId);
    }
    this.compact();
    return out;
  }

  /** Whether attempt `attempt` of `taskId` is held here. */
  holds(taskId: string, attempt: number): boolean {
    const h = this.heldIds.get(taskId);
    return h?.task?.attempt === attempt;
  }

  /** The attempts held for `workerId` (their leases go with its heartbeats). */
  heldOf(workerId: string): Array<{ taskId: string; attempt: number }> {
    const out: Array<{ taskId: string; attempt: number }> = [];
    for (const [taskId, h] of this.heldIds) if (h.task && h.workerId === workerId) out.push({ taskId, attempt: h.task.attempt });
    return out;
  }

  /** Takes a held attempt out (a cancel): returns it, or undefined when it is not held. */
  drop(taskId: string, attempt: number): ClaimedTask | undefined {
    const h = this.heldIds.get(taskId);
    const t = h?.task;
    if (!h || !t || t.attempt !== attempt) return undefined;
    this.heldIds.delete(taskId);
    // The heap keeps it until it comes up (then skipped).
    this.forget(h);
    this.compact();
    return t;
  }

  /** Takes out every attempt held for `workerId` (its process was replaced). */
  dropWorker(workerId: string): ClaimedTask[] {
    const heap = this.held.get(workerId);
    this.held.delete(workerId);
    const out: ClaimedTask[] = [];
    for (let h = heap?.pop(); h; h = heap?.pop()) {
      const t = h.task;
      if (!t) continue;
      this.forget(h);
      this.heldIds.delete(t.id);
      out.push(t);
    }
    this.liveOf.delete(workerId);
    this.compact();
    return out;
  }

  /** Workers with attempts held for them. */
  workersHolding(): string[] {
    return [...this.held.keys()];
  }

  /**
   * `h` is held no more (dropped, or replaced by a newer hold of its task). When its worker holds
   * nothing else, its heap (only entries held no more) goes too.
   */
  private forget(h: Held): void {
    h.task = null;
    this.live--;
    const n = (this.liveOf.get(h.workerId) ?? 1) - 1;
    if (n > 0) this.liveOf.set(h.workerId, n);
    else {
      this.liveOf.delete(h.workerId);
      this.held.delete(h.workerId);
    }
  }

  /** Empties `heldIds` when nothing is held, or rebuilds it when taken entries outnumber the bound. */
  private compact(): void {
    if (this.live === 0) {
      if (this.heldIds.size > 0) this.heldIds.clear();
      return;
    }
    if (this.heldIds.size - this.live <= 4 * this.live + STALE_SLACK) return;
    const kept = new Map<string, Held>();
    for (const [id, h] of this.heldIds) if (h.task) kept.set(id, h);
    this.heldIds = kept;
  }

  /**
   * The earliest instant after `now` (epoch ms) at which a not-yet-due entry, an entry waiting to
   * be claimed ahead (it then goes the usual way: {@link takeDueToClaim}) or a worker's first held
   * attempt becomes due, or null. Call it after {@link takeNowDue} and {@link takeDueToClaim} with
   * the same `now` (the dispatcher's pump does): an entry due already hides those behind it in its
   * heap. A worker whose first held attempt is due already waits for
   * a free slot, not for a time: a slot coming back dispatches again, so no timer is asked for it
   * (one at `now` would fire again and again while the slots stay busy).
   */
  nextDueAfter(now: number): number | null {
    let at = Infinity;
    const first = this.notYetDue.peek()?.dueAt;
    if (first !== undefined && first > now) at = first;
    for (const heap of this.toClaim.values()) {
      const due = heap.peek()?.dueAt;
      if (due !== undefined && due > now) at = Math.min(at, due);
    }
    for (const heap of this.held.values()) {
      const due = heap.peek()?.dueAt;
      if (due !== undefined && due > now) at = Math.min(at, due);
    }
    return at === Infinity ? null : at;
  }
}
