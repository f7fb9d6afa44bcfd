import { MinHeap } from './min-heap';
import { SmoothWeightedRoundRobin } from './smooth-weighted-round-robin';
import { DueEntry, PRIORITY_RANK } from './task';

/** Limits of one partition's window. Times in milliseconds. */
export interface HorizonWindowOptions {
  /** How far ahead of now the window reaches when loaded (docs/DESIGN.md §4: e.g. 30 s). */
  horizonMs: number;
  /** Most entries held in the heap. */
  maxTasks: number;
  /** Most entries handed out (to the dispatcher) and not yet released. */
  maxOutstanding: number;
  /** Tenant weight for handing out due entries (default 1 each). */
  weightOf?: (tenantId: string) => number;
  /**
   * Put the window refresh off while the partition hands work out (see `refreshAt`). Embedded
   * mode only: in a cluster the refresh is also how an owner finds tasks submitted on another
   * member when no wake-up reached it (docs/CLUSTER.md: every `horizonMs / 2`). Default false.
   */
  deferRefreshWhileBusy?: boolean;
  /**
   * Hand entries out this long (ms) before their due time (`claimAheadMs`: the dispatcher claims
   * them ahead and starts each at its due time). Default 0: never before the due time.
   */
  leadMs?: number;
}

/** Order of the heap: due time, then priority, then submission sequence. */
export function compareDue(a: DueEntry, b: DueEntry): number {
  return a.dueAt - b.dueAt || PRIORITY_RANK[a.priority] - PRIORITY_RANK[b.priority] || a.seq - b.seq;
}

/**
 * The in-memory part of a partition owner (docs/DESIGN.md §4), without I/O or timers: a min-heap of the
 * waiting tasks due before `windowEnd`, the set of ids handed out and not yet released, and the
 * rules for when to read the store again. Memory follows the window (≤ maxTasks + maxOutstanding
 * entries), not the number of waiting tasks.
 *
 * Due entries wait in one lane per tenant and are handed out by smooth weighted round-robin
 * between the lanes, so when the outstanding budget is short, a tenant with a large backlog does
 * not hold back another tenant's task that just became due (head-of-line blocking).
 *
 * Invariant: every waiting task of the partition with due time ≤ windowEnd is in the heap, in a
 * lane, handed out, or `dirty` is set (the store holds some the window does not, so it must be
 * read again).
 */
export class HorizonWindow {
  /** May hold superseded entries (a task offered again with a new due time); `live` says which count. */
  private heap = new MinHeap<DueEntry>(compareDue);
  /** The current entry of every task in the heap. */
  private live = new Map<string, DueEntry>();
  /** How many of each tenant's entries are live. */
  private liveOf = new Map<string, number>();
  /** Handed out and not yet released: task id → tenant. */
  private outstanding = new Map<string, string>();
  /** How many of each tenant's tasks are handed out. */
  private outstandingOf = new Map<string, number>();
  /** Due entries not yet handed out, per tenant, in heap order (may hold superseded entries). */
  private lanes = new Map<string, DueEntry[]>();
  private readonly rr: SmoothWeightedRoundRobin;
  /** Tasks due at or before this instant are covered (see the invariant). */
  windowEnd = -Infinity;
  dirty = true;

  constructor(readonly options: HorizonWindowOptions) {
    this.rr = new SmoothWeightedRoundRobin(options.weightOf);
  }

  get size(): number {
    return this.live.size;
  }

  get outstandingCount(): number {
    return this.outstanding.size;
  }

  /** True while `id` is handed out: the dispatcher holds it and has not released it. */
  isOutstanding(id: string): boolean {
    return this.outstanding.has(id);
  }

  /** True while `id` is in the heap or handed out. */
  has(id: string): boolean {
    return this.live.has(id) || this.outstanding.has(id);
  }

  /**
   * A newly stored, retried or rescheduled task. An entry for a task already held replaces the old
   * one when its due time or priority changed. Returns true when the window now holds it.
   */
  offer(entry: DueEntry): boolean {
    this.unmark(entry.id); // waiting again (a retry)
    const held = this.live.get(entry.id);
    if (held && held.dueAt === entry.dueAt && held.priority === entry.priority) return true;
    this.removeLive(entry.id); // a superseded heap entry is skipped when it surfaces
    if (entry.dueAt > this.windowEnd) return false; // a later load will read it
    if (!this.hasRoomFor(entry.tenantId)) {
      this.dirty = true;
      return false;
    }
    this.heap.push(entry);
    this.addLive(entry);
    return true;
  }

  /** Row limit for the next load: enough to see past everything already known. */
  loadLimit(): number {
    return this.options.maxTasks + this.outstanding.size;
  }

  /** Instant the next load reads up to. */
  loadUntil(now: number): number {
    return now + this.options.horizonMs;
  }

  /**
   * Merges the result of a store read of every waiting task due ≤ `until` (at most `limit`
   * rows, in due order). Unknown entries join the heap while it has room.
   */
  loaded(entries: DueEntry[], until: number, limit: number): void {
    let overflow = entries.length >= limit;
    for (const e of entries) {
      if (this.has(e.id)) continue;
      if (!this.hasRoomFor(e.tenantId)) {
        overflow = true;
        continue;
      }
      this.heap.push(e);
      this.addLive(e);
    }
    this.windowEnd = Math.max(this.windowEnd, until);
    this.dirty = overflow;
  }

  /** True when the store should be read: the window is ending, or it is dirty and has room. */
  needsLoad(now: number): boolean {
    if (now >= this.refreshAt()) return true;
    return this.dirty && this.live.size <= this.options.maxTasks / 2;
  }

  /**
   * When the window is read again to move its end (epoch ms): half a horizon before `windowEnd`,
   * or, with `deferRefreshWhileBusy` and while the partition hands work out (due entries wait in
   * the lanes, or handed-out ones are not yet released: a herd or a backlog going out), a quarter
   * horizon before it. The refresh
   * reads the partition's waiting rows again, those already held included (up to `loadLimit()`),
   * in one synchronous read on the embedded store: measured in a herd of 100,000, each such read
   * stalled the main thread ~20 ms, one every ~230 ms, while the herd went out. Put off, it runs
   * once the partition is idle, or still a quarter horizon before the window ends: nothing due
   * inside the window is read later than before, and a task due after `windowEnd` is read at
   * least `horizonMs / 4` before its due time.
   */
  private refreshAt(): number {
    const busy = this.options.deferRefreshWhileBusy === true && (this.lanes.size > 0 || this.outstanding.size > 0);
    return this.windowEnd - this.options.horizonMs / (busy ? 4 : 2);
  }

  /**
   * Hands out entries due at or before `now` + `leadMs`, as many as the outstanding budget allows,
   * tenant by tenant in weighted turn (oldest due first inside a tenant), and counts them as
   * handed out. Never returns an entry earlier than that, whatever the clock did before.
   */
  takeDue(now: number): DueEntry[] {
    const until = now + (this.options.leadMs ?? 0);
    for (let top = this.peekLive(); top && top.dueAt <= until; top = this.peekLive()) {
      this.heap.pop();
      const lane = this.lanes.get(top.tenantId);
      if (lane) lane.push(top);
      else this.lanes.set(top.tenantId, [top]);
    }
    const out: DueEntry[] = [];
    while (this.lanes.size > 0) {
      const tenant = this.rr.pick(this.eligibleLanes()) as string | undefined;
      if (tenant === undefined) break;
      const lane = this.lanes.get(tenant) as DueEntry[];
      const e = lane.shift() as DueEntry;
      if (lane.length === 0) {
        this.lanes.delete(tenant);
        this.rr.forget(tenant);
      }
      if (this.live.get(e.id) !== e) continue; // superseded while it waited
      this.removeLive(e.id);
      this.outstanding.set(e.id, e.tenantId);
      this.outstandingOf.set(e.tenantId, (this.outstandingOf.get(e.tenantId) ?? 0) + 1);
      out.push(e);
    }
    return out;
  }

  /** The dispatcher is done with these ids (claimed, or dropped as stale). */
  release(ids: Iterable<string>): void {
    for (const id of ids) this.unmark(id);
  }

  /**
   * The lanes that may hand out now: all of them under the outstanding budget; at the budget,
   * those of tenants with nothing handed out here (a first slot each), so a tenant's first due
   * task never waits for another tenant's backlog to be claimed. Handed out ≤ budget + tenants.
   */
  private eligibleLanes(): Iterable<string> {
    if (this.outstanding.size < this.options.maxOutstanding) return this.lanes.keys();
    return [...this.lanes.keys()].filter((t) => !this.outstandingOf.has(t));
  }

  /**
   * Whether an entry of `tenant` may join: under `maxTasks`, or, with the window full, while the
   * tenant holds less than an even share of it (maxTasks / tenants in the window). So one tenant's
   * backlog filling the window never shuts another tenant's new tasks out until a reload; the
   * window holds at most about 2 × maxTasks.
   */
  private hasRoomFor(tenant: string): boolean {
    if (this.live.size < this.options.maxTasks) return true;
    const tenants = this.liveOf.size + (this.liveOf.has(tenant) ? 0 : 1);
    return (this.liveOf.get(tenant) ?? 0) < this.options.maxTasks / tenants;
  }

  private addLive(e: DueEntry): void {
    this.live.set(e.id, e);
    this.liveOf.set(e.tenantId, (this.liveOf.get(e.tenantId) ?? 0) + 1);
  }

  private removeLive(id: string): void {
    const e = this.live.get(id);
    if (!e) return;
    this.live.delete(id);
    const n = (this.liveOf.get(e.tenantId) ?? 1) - 1;
    if (n > 0) this.liveOf.set(e.tenantId, n);
    else this.liveOf.delete(e.tenantId);
  }

  private unmark(id: string): void {
    const tenant = this.outstanding.get(id);
    if (tenant === undefined) return;
    this.outstanding.delete(id);
    const n = (this.outstandingOf.get(tenant) ?? 1) - 1;
    if (n > 0) this.outstandingOf.set(tenant, n);
    else this.outstandingOf.delete(tenant);
  }

  /**
   * When the owner should wake next (epoch ms): the earliest due entry if it may be handed out,
   * and the time to refresh the window. Null only before the first load.
   */
  nextWakeAt(): number | null {
    if (this.windowEnd === -Infinity) return null;
    const lead = this.options.leadMs ?? 0;
    const refreshAt = this.refreshAt();
    // At the budget only the lanes of tenants with nothing handed out may start. The heap is not
    // searched for such a tenant's later entry: releases come often at the budget (each one pumps
    // the owner), and a newly offered task already due is handed out by the offer's own pump.
    const underBudget = this.outstanding.size < this.options.maxOutstanding;
    let at = refreshAt;
    for (const [tenant, lane] of this.lanes) if (underBudget || !this.outstandingOf.has(tenant)) at = Math.min(at, lane[0].dueAt - lead); // due already
    if (!underBudget) return at;
    const top = this.peekLive();
    return top ? Math.min(top.dueAt - lead, at) : at;
  }

  /** The earliest current entry, dropping superseded ones from the top of the heap. */
  private peekLive(): DueEntry | undefined {
    for (;;) {
      const top = this.heap.peek();
      if (!top || this.live.get(top.id) === top) return top;
      this.heap.pop();
    }
  }
}
