import { neverStartedOutcome } from '../../domain/lost-attempt';
import type { ClaimedTask, DueEntry } from '../../domain/task';
import type { SchedulerDeps } from '../deps';
import type { WorkItem } from '../protocol';
import { AheadClaims } from './ahead-claims';
import type { FinishedAttempt } from './attempt-watchdog';
import { claimAhead } from './claim-batch';
import type { RunningMap } from './running-attempts';
import { observeStarts, takeWorkItem } from './work-item';
import type { WorkerSlot } from './worker-pool';
import type { DispatchPool } from './worker-pools';
import { takesWork } from './worker-selection';

/**
 * Attempts held per worker process, at most this many times its slots (claimed, not yet sent): with
 * 2 × 10,000 slots a herd of 100,000 is claimed ahead in full (measured: with 4 × the last fifth
 * was claimed after the instant, and the herd's end moved less). The rest of a larger herd is
 * claimed the usual way at its due time (`AheadClaims.takeDueToClaim`).
 */
export const HELD_PER_SLOT = 8;
/** Most claims ahead waiting for the store at once, per worker slot. */
const CLAIMS_IN_FLIGHT_PER_SLOT = 4;

/** What {@link AheadDispatch} reads and calls on its dispatcher. */
export interface AheadHost {
  readonly running: RunningMap;
  /** Whether an entry handed out early may be claimed ahead (no concurrency key, rate limit or external queue). */
  mayClaimAhead(e: DueEntry): boolean;
  /** The pool whose workers run `e`. */
  poolOf(e: DueEntry): DispatchPool;
  /** An entry that became due joins the ready queues. */
  ready(e: DueEntry): void;
  /** Attempts were added to `running`. */
  attemptsStarted(): void;
  /** Queues attempts for `slot`'s next `run` message; `startedAt` is the earliest of their starts (epoch ms). */
  send(slot: WorkerSlot, items: WorkItem[], startedAt: number): void;
  /** Records attempts that ended without running (cancelled or lost while held), then pumps. */
  finish(results: FinishedAttempt[]): void;
  pump(): void;
  /** Whether the dispatcher drains (a graceful stop): nothing more is held. */
  draining(): boolean;
  /** A claim ahead was answered (a drain may be over). */
  settle(): void;
}

/**
 * Claiming ahead (`claimAheadMs`, embedded mode; load-tests/README.md): a herd due at one instant
 * is claimed in the `claimAheadMs` before it, so at the instant its attempts only have to be sent
 * to their workers: no claim write waits in the slots' cycle. Entries handed out early are
 * claimed in batches, an even share for each live worker ({@link AheadClaims}); each held
 * attempt is sent when it is due and its worker has a free slot, with `startedAt` the instant it
 * is sent (the completion writes it). When other ready work waits in the pool, held attempts
 * take half of a worker's free slots per pass (rounded up), so a herd claimed ahead does not shut
 * another tenant's due tasks out for its whole length.
 */
export class AheadDispatch {
  private readonly claims = new AheadClaims<DispatchPool>();
  /** Claims ahead in flight per worker slot id: entries. */
  private readonly claiming = new Map<string, number>();
  private inFlight = 0;
  /** A release pass is queued for after the event loop's I/O ({@link release}). */
  private passQueued = false;

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly leadMs: number,
    private readonly host: AheadHost,
  ) {}

  /**
   * The dispatcher's claims ahead, or null when it does not claim ahead: `claimAheadMs` is 0, the
   * service runs in cluster mode (no fencing token is taken for a claim before the instant), or
   * the store has no `claimTasksAhead`. Claimed ahead: entries with no concurrency key, no rate
   * limit on their task type or tenant, not of an external queue, and none while tracing is on
   * (their queue-wait span is made at the claim).
   */
  static create(
    deps: SchedulerDeps,
    external: { handles(e: DueEntry): boolean } | null,
    host: Omit<AheadHost, 'mayClaimAhead'>,
  ): AheadDispatch | null {
    const leadMs = deps.cluster || !deps.store.claimTasksAhead ? 0 : deps.config.claimAheadMs;
    if (leadMs <= 0) return null;
    const { limits } = deps;
    const mayClaimAhead = (e: DueEntry) =>
      e.concurrencyKey === undefined &&
      !deps.spans &&
      !external?.handles(e) &&
      !limits.typeBucket(e.taskType) &&
      !limits.tenantBucket(e.tenantId);
    return new AheadDispatch(deps, leadMs, { ...host, mayClaimAhead });
  }

  /** Attempts held, claims in flight or entries waiting here (a drain waits for held and in-flight ones). */
  get busy(): boolean {
    return this.claims.heldCount > 0 || this.inFlight > 0;
  }

  /**
   * Takes an entry handed out before its due time (`dueAt > now`): to claim ahead, or to wait here
   * until due. Returns false for a due entry (the caller queues it as usual).
   */
  accept(e: DueEntry, now: number): boolean {
    if (e.dueAt <= now) return false;
    if (this.host.mayClaimAhead(e)) this.claims.addToClaim(this.host.poolOf(e), e);
    else this.claims.addNotYetDue(e);
    return true;
  }

  /**
   * Due entries that waited here, and those that came due before they were claimed ahead, join
   * the ready queues; then each live worker with free slots gets its held attempts due by `now`
   * (up to all its free slots, or half, rounded up, when its pool has other ready work), at most
   * 8 × `workerBatchMax` per worker and pass: when more are due the next pass runs after the
   * event loop's I/O, so the workers start on one message while the next is made.
   */
  release(now: number, pools: readonly DispatchPool[]): void {
    for (const e of this.claims.takeNowDue(now)) this.host.ready(e);
    // Entries that came due before their claim ahead go the usual way: claimed from the ready
    // queues, in tenant turn, beside every other due task (a herd larger than the workers may
    // hold: its remainder, claimed ahead after its instant, was slower than the usual claims and
    // held other tenants' tasks back; bench-tenants, load-tests/README.md).
    for (const e of this.claims.takeDueToClaim(now)) this.host.ready(e);
    const chunk = Math.max(1, this.deps.config.workerBatchMax * 8);
    let more = false;
    for (const pool of pools) {
      const share = pool.ready.size > 0 ? 0.5 : 1;
      for (const slot of [...pool.workers.all()]) {
        if (!takesWork(slot) || slot.credits <= 0 || this.claims.heldCountOf(slot.id) === 0) continue;
        const n = Math.min(chunk, Math.ceil(slot.credits * share));
        const tasks = this.claims.takeDue(slot.id, now, n);
        if (tasks.length > 0) this.start(slot, tasks, now);
        if (tasks.length === n && slot.credits > 0) more = true;
      }
    }
    if (more && !this.passQueued) {
      this.passQueued = true;
      setImmediate(() => {
        this.passQueued = false;
        this.host.pump();
      });
    }
  }

  /**
   * Claims the entries waiting to be claimed ahead, an even share for each live worker of their
   * pool, in batches of up to 8 × `workerBatchMax` dealt a batch per worker in turn (the entries
   * come out earliest due first: dealt so, the earliest do not all go to the first worker), within
   * each worker's bound (held and in flight at most `HELD_PER_SLOT` × its slots; at most 4
   * batches in flight each).
   */
  claim(now: number): void {
    const until = now + this.leadMs;
    const batch = Math.max(1, this.deps.config.workerBatchMax * 8);
    for (const pool of [...this.claims.poolsToClaim()]) {
      const live = [...pool.workers.all()].filter(takesWork);
      const cap = HELD_PER_SLOT * pool.spec.concurrency;
      // An even share each: a few entries do not all go to the first worker.
      const share = Math.ceil(this.claims.toClaimCount(pool) / Math.max(1, live.length));
      const taken = new Map<string, number>();
      for (let dealt = true; dealt;) {
        dealt = false;
        for (const slot of live) {
          const pending = this.claiming.get(slot.id) ?? 0;
          const room = Math.min(batch, share - (taken.get(slot.id) ?? 0), cap - this.claims.heldCountOf(slot.id) - pending);
          if (room <= 0 || pending >= CLAIMS_IN_FLIGHT_PER_SLOT * batch) continue;
          const entries = this.claims.takeToClaim(pool, room);
          if (entries.length === 0) break;
          dealt = true;
          taken.set(slot.id, (taken.get(slot.id) ?? 0) + entries.length);
          this.claimFor(slot, entries, until);
        }
      }
    }
  }

  /** One claim ahead of `entries` for `slot`; its answer is held for it (or, during a drain, retried free). */
  private claimFor(slot: WorkerSlot, entries: DueEntry[], until: number): void {
    this.claiming.set(slot.id, (this.claiming.get(slot.id) ?? 0) + entries.length);
    this.inFlight++;
    void claimAhead(this.deps, slot, entries, until).then((claimed) => {
      this.inFlight--;
      this.claiming.set(slot.id, (this.claiming.get(slot.id) ?? entries.length) - entries.length);
      // Answered during a drain: these will not be sent; retried free at their due time.
      if (this.host.draining()) this.unsent(claimed, slot.id);
      else this.claims.hold(slot.id, claimed);
      this.host.settle();
      this.host.pump();
    });
  }

  /** The next instant after `now` (epoch ms) at which something held or waiting here becomes due, or null (`AheadClaims.nextDueAfter`). */
  nextDueAfter(now: number): number | null {
    return this.claims.nextDueAfter(now);
  }

  /** The attempts held for `workerId` (their leases are extended with its heartbeat). */
  heldOf(workerId: string): Array<{ taskId: string; attempt: number }> {
    return this.claims.heldOf(workerId);
  }

  /** Whether attempt `attempt` of `taskId` is held here (not lost: the lease sweep leaves it). */
  holds(taskId: string, attempt: number): boolean {
    return this.claims.holds(taskId, attempt);
  }

  /** A cancel for a held attempt: it ends CANCELLED without starting. False when it is not held here. */
  abort(taskId: string, attempt: number, workerId = ''): boolean {
    const t = this.claims.drop(taskId, attempt);
    if (!t) return false;
    this.host.running.set(t.id, { task: t, workerId, startedMono: this.deps.clock.monotonic() });
    this.host.finish([{ id: t.id, attempt: t.attempt, outcome: { kind: 'cancelled' }, durationMs: 0 }]);
    return true;
  }

  /**
   * `workerId`'s process was replaced: its held attempts never started; they are retried free (not
   * counted), due at their tasks' due time (never earlier), and go back to their owners.
   */
  workerReplaced(workerId: string): void {
    this.unsent(this.claims.dropWorker(workerId), workerId);
  }

  /**
   * A drain (graceful stop): no held attempt will be sent; each is retried free, due at its due
   * time, so the next start runs it then (not early, not counted).
   */
  releaseAll(): void {
    for (const workerId of this.claims.workersHolding()) this.unsent(this.claims.dropWorker(workerId), workerId);
  }

  /** Held attempts that will not be sent: recorded as free retries due at their due time. */
  private unsent(tasks: ClaimedTask[], workerId: string): void {
    if (tasks.length === 0) return;
    const startedMono = this.deps.clock.monotonic();
    for (const t of tasks) this.host.running.set(t.id, { task: t, workerId, startedMono });
    this.host.finish(
      tasks.map((t) => ({ id: t.id, attempt: t.attempt, outcome: neverStartedOutcome(), durationMs: 0, retryNotBefore: t.dueAt })),
    );
  }

  /** Sends held attempts to `slot` now: they take its slots and start as any claimed attempt. */
  private start(slot: WorkerSlot, tasks: ClaimedTask[], now: number): void {
    slot.credits -= tasks.length;
    const items: WorkItem[] = [];
    const startedMono = this.deps.clock.monotonic();
    for (const t of tasks) {
      t.startedAt = now;
      this.host.running.set(t.id, { task: t, workerId: slot.id, startedMono, claimedAhead: true });
      items.push(takeWorkItem(t));
    }
    this.host.attemptsStarted();
    observeStarts(this.deps.metrics, tasks);
    this.host.send(slot, items, now);
  }
}
