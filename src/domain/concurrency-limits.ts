/**
 * Concurrency keys: a task may carry a `concurrency_key`; a limit per key caps the attempts of
 * tasks with that key that run at once (Cloud Tasks' `maxConcurrentDispatches` per queue, Hatchet's
 * concurrency keys with `maxRuns`; the specification's "high concurrency on identical execution
 * targets"). A key without a limit is unlimited.
 */

/** Syntax of a concurrency key: 1 to 200 of letters, digits and `_ . : @ -` (safe in a URL path). */
export const CONCURRENCY_KEY_PATTERN = '^[A-Za-z0-9_.:@-]{1,200}$';

/** Largest `max_running` accepted for one key. */
export const MAX_RUNNING_LIMIT = 100_000;

/**
 * One key's share of a cluster-wide limit, held by this node (cluster mode: slots leased from
 * Redis, see `cluster/redis/leased-slots.ts`). Synchronous on the dispatch path, like a
 * `RateBucket`: the node spends slots it already holds and asks for more in the background.
 */
export interface SharedSlots {
  /** Takes one slot held by this node; false when none is free here (more are being asked for). */
  tryTake(now: number): boolean;
  /** Gives back a slot taken by {@link tryTake} (its attempt ended, or its claim was refused). */
  giveBack(now: number): void;
  /** The key's limit changed (the slots held keep backing the attempts that run). */
  setLimit(maxRunning: number): void;
  /** Stops renewing and returns every slot held (a changed or removed limit, shutdown). */
  close(): void;
}

/**
 * The port behind {@link ConcurrencyLimits} for cluster-wide limits (Redis). Absent: every count
 * is this process's own, which is exact for one node (the embedded profile).
 */
export interface ConcurrencyBackend {
  /**
   * The shared slots of `key` under `maxRunning`, or null when the backend cannot share right now
   * (Redis down: the limit then holds per node).
   * @param wake called when slots arrived asynchronously and parked tasks may start
   */
  slots(key: string, maxRunning: number, wake: () => void): SharedSlots | null;
}

/**
 * The concurrency limits in force and this node's running count per key. The dispatcher calls
 * {@link tryAcquire} for each task with a key it is about to claim and {@link release} when that
 * attempt ends (or its claim is refused); every key is counted, limited or not, so a limit set
 * while tasks run counts them at once. A count never goes below zero. Admin changes (stored
 * first by `TenantAdmin`) are applied with {@link set}; listeners hear of every change.
 */
export class ConcurrencyLimits {
  private readonly limits = new Map<string, number>();
  private readonly running = new Map<string, number>();
  private readonly shared = new Map<string, SharedSlots>();
  private readonly listeners: Array<(key: string) => void> = [];

  /** @param backend shares limits across nodes (Redis); absent: per process (exact on one node) */
  constructor(private readonly backend: ConcurrencyBackend | null = null) {}

  /** The limit of `key`, or null when it is unlimited. */
  maxRunningOf(key: string): number | null {
    return this.limits.get(key) ?? null;
  }

  /** Attempts of `key` this node runs or is claiming now. */
  runningOf(key: string): number {
    return this.running.get(key) ?? 0;
  }

  /**
   * Sets (or with null removes) the limit of `key`.
   * @throws RangeError for a limit that is not an integer in 1..{@link MAX_RUNNING_LIMIT}
   */
  set(key: string, maxRunning: number | null): void {
    if (maxRunning !== null && (!Number.isInteger(maxRunning) || maxRunning < 1 || maxRunning > MAX_RUNNING_LIMIT)) {
      throw new RangeError(`max_running must be an integer in 1..${MAX_RUNNING_LIMIT}, got ${maxRunning}`);
    }
    if (maxRunning === null) {
      this.shared.get(key)?.close();
      this.shared.delete(key);
      this.limits.delete(key);
    } else {
      this.shared.get(key)?.setLimit(maxRunning);
      this.limits.set(key, maxRunning);
    }
    this.changed(key);
  }

  /**
   * Takes a slot of `key` for one attempt about to start: always for an unlimited key; for a
   * limited one when this node runs fewer than the limit and (cluster mode) holds a shared slot.
   * @param now epoch ms on the scheduler's clock
   */
  tryAcquire(key: string, now: number): boolean {
    const limit = this.limits.get(key);
    const mine = this.running.get(key) ?? 0;
    if (limit !== undefined) {
      if (mine >= limit) return false;
      const shared = this.sharedOf(key, limit);
      if (shared && !shared.tryTake(now)) return false;
    }
    this.running.set(key, mine + 1);
    return true;
  }

  /** Gives back a slot {@link tryAcquire} granted. A release with nothing held is ignored. */
  release(key: string, now: number): void {
    const mine = this.running.get(key) ?? 0;
    if (mine <= 0) return;
    if (mine === 1) this.running.delete(key);
    else this.running.set(key, mine - 1);
    if (this.limits.has(key)) this.shared.get(key)?.giveBack(now);
  }

  /** Every limit in force with this node's running count, by key. */
  snapshot(): Array<{ key: string; maxRunning: number; running: number }> {
    return [...this.limits]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, maxRunning]) => ({ key, maxRunning, running: this.runningOf(key) }));
  }

  /** Calls `fn(key)` after a limit changed or shared slots arrived (parked tasks may start). */
  onChange(fn: (key: string) => void): void {
    this.listeners.push(fn);
  }

  /** Returns every shared slot held (shutdown). */
  close(): void {
    for (const s of this.shared.values()) s.close();
    this.shared.clear();
  }

  private sharedOf(key: string, limit: number): SharedSlots | null {
    if (!this.backend) return null;
    let s = this.shared.get(key);
    if (!s) {
      const made = this.backend.slots(key, limit, () => this.changed(key));
      if (!made) return null;
      s = made;
      this.shared.set(key, s);
    }
    return s;
  }

  private changed(key: string): void {
    for (const fn of this.listeners) fn(key);
  }
}
