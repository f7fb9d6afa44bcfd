import { ActorContext, customParameters } from '../runtime/comedy';
import { WallWake } from '../../domain/wall-wake';
import { StoreUnavailableError } from '../../domain/errors';
import { HorizonWindow } from '../../domain/horizon-window';
import { SerialPump } from '../../domain/serial-pump';
import { DueEntry } from '../../domain/task';
import { DelayedDueMarks } from './delayed-due-marks';
import { DEPS_RESOURCE, SchedulerDeps } from '../deps';
import type { PartitionOwnerMessages } from '../protocol';

/** Least delay before a pass runs again after one failed (ms): a store that is away is not asked in a loop. */
export const OWNER_RETRY_AFTER_FAILURE_MS = 1000;

/**
 * Owner of one partition (docs/DESIGN.md §4): keeps the partition's tasks due inside the horizon window in
 * a min-heap, with one timer to the earliest due time (or the window refresh), hands due tasks to
 * the dispatcher and marks PENDING in the store those it still holds `dueMarkDelayMs` later
 * ({@link DelayedDueMarks}). Hands out at most `ownerMaxOutstanding`
 * tasks the dispatcher has not yet released (credit-based flow), so the backlog stays in the store.
 */
export class PartitionOwnerActor {
  static inject(): string[] {
    return [DEPS_RESOURCE];
  }

  private partition = 0;
  /** Cluster mode: the lease epoch this owner was started with (its fencing token). */
  private epoch: number | undefined;
  private window: HorizonWindow;
  private readonly wake: WallWake;
  private loading = false;
  /** Epoch ms before which the timer does not run a pass again (set when a pass failed). */
  private retryNotBefore = -Infinity;
  private loadedOnce = false;
  private stopped = false;
  private readonly pumper: SerialPump;
  private readonly marks: DelayedDueMarks;

  constructor(private readonly deps: SchedulerDeps) {
    this.wake = new WallWake(deps.clock, () => this.pump());
    this.window = new HorizonWindow({
      horizonMs: deps.config.horizonMs,
      maxTasks: deps.config.windowMaxTasks,
      maxOutstanding: deps.config.ownerMaxOutstanding,
      weightOf: deps.limits.weightOf,
      // Embedded: every waiting task reaches its owner by an offer, the refresh only moves the window on.
      deferRefreshWhileBusy: !deps.cluster,
      // Embedded mode only: claims ahead are not fenced, so a cluster never takes them.
      leadMs: deps.cluster || !deps.store.claimTasksAhead ? 0 : deps.config.claimAheadMs,
    });
    this.marks = new DelayedDueMarks(
      deps.clock,
      deps.config.dueMarkDelayMs,
      (ids, handedOutAt) => {
        if (!this.leaseHeld()) return; // cluster mode: the next owner reads these tasks again
        // The later of the two readings: a mark only takes a task due by then (one moved later
        // since is left alone), and its updated_at never goes back, unless the clock stepped back
        // since the hand-out, which must not make the mark refuse a task the owner saw due.
        deps.store.markPending(ids, Math.max(handedOutAt, deps.clock.now()), this.epoch).catch((err) =>
          // A store fault is logged once, by the store's health.
          err instanceof StoreUnavailableError
            ? undefined
            : deps.log.error({ err, partition: this.partition }, 'due mark failed; the tasks can still be claimed'),
        );
      },
      (id) => this.window.isOutstanding(id),
    );
    this.pumper = new SerialPump(() => this.pumpOnce(), {
      onError: (err) => this.failed(err, 'partition owner pump failed'),
      onIdle: () => this.arm(),
      stopped: () => this.stopped,
    });
  }

  /** comedy hook; the partition number comes from custom parameters. */
  initialize(self: ActorContext): void {
    const params = customParameters<{ partition: number; epoch?: number }>(self);
    this.partition = params.partition;
    this.epoch = params.epoch;
  }

  async start(): Promise<void> {
    await this.load();
    this.pump();
  }

  offer(entries: DueEntry[]): void {
    for (const e of entries) this.window.offer(e);
    this.pump();
  }

  released(ids: string[]): void {
    this.window.release(ids);
    this.pump();
  }

  stop(): void {
    this.stopped = true;
    this.wake.clear();
    this.marks.stop();
  }

  stats(): PartitionOwnerMessages['stats']['res'] {
    return {
      partition: this.partition,
      windowSize: this.window.size,
      outstanding: this.window.outstandingCount,
      windowEnd: this.window.windowEnd,
    };
  }

  destroy(): void {
    this.stop();
  }

  private async load(): Promise<void> {
    if (this.loading) return;
    this.loading = true;
    try {
      // The first window of partition p ends p/P of half a horizon early, so the owners' refreshes
      // (each a store read of up to windowMaxTasks rows) are spread over the half horizon instead
      // of all falling in one event-loop turn: measured, 64 owners refreshing together during a
      // 100,000-task burst stalled the main thread for ~240 ms (SQLite reads were synchronous then;
      // they now run on their own thread, see storage/sqlite/due-reader.ts, where they still queue).
      const stagger = this.loadedOnce
        ? 0
        : Math.floor(((this.partition % this.deps.config.partitions) / this.deps.config.partitions) * (this.deps.config.horizonMs / 2));
      const until = this.window.loadUntil(this.deps.clock.now()) - stagger;
      const limit = this.window.loadLimit();
      const rows = await this.deps.store.loadDue(this.partition, until, limit);
      this.window.loaded(rows, until, limit);
      this.loadedOnce = true;
    } finally {
      this.loading = false;
    }
  }

  /** Loads when needed, hands out what is due, and sets the one timer. Never runs twice at once. */
  private pump(): void {
    this.pumper.trigger();
  }

  private async pumpOnce(): Promise<void> {
    const { clock } = this.deps;
    // The window read runs beside the hand-outs: a read that takes long (a herd due at one
    // instant makes each read step over every partition's entries; SQLite queues the owners'
    // reads on one thread) must not hold back what the window holds or is offered meanwhile,
    // e.g. another tenant's task submitted during a burst. The read's end starts a pass.
    if (this.window.needsLoad(clock.now())) this.refresh();
    if (this.stopped || !this.loadedOnce) return; // stopped, or no window yet: hand nothing out
    // One reading for the hand-out and the mark: a clock that steps back in between must not make
    // the mark refuse a task as not yet due.
    const now = clock.now();
    const due = this.window.takeDue(now);
    if (due.length === 0) return;
    // Progress was made and the window may hold more behind a truncated read: go round again.
    if (this.window.needsLoad(now)) this.pumper.trigger();
    if (!this.leaseHeld()) {
      this.stop(); // cluster mode: the lease ended; the next owner reads these tasks again
      return;
    }
    // The dispatcher gets every due task at once. Its due mark (SCHEDULED/RETRYING → PENDING) is
    // written only if the dispatcher still holds it `dueMarkDelayMs` later (a claim takes a due
    // task directly), in the store's deferred lane. The dispatcher releases every entry it was
    // given, claimed or not (e.g. cancelled meanwhile), and gives back the rate-limit tokens of a
    // refused claim.
    this.marks.add(
      due.filter((e) => e.state !== 'PENDING').map((e) => e.id),
      now,
    );
    this.deps.router.enqueue(due, (err) => {
      this.deps.log.error({ err }, 'dispatcher refused tasks; they will be reloaded');
      this.window.release(due.map((e) => e.id));
    });
  }

  /** Starts a window read unless one runs or a failed one must wait; a pass follows its result. */
  private refresh(): void {
    if (this.loading || this.stopped || this.deps.clock.now() < this.retryNotBefore) return;
    this.load().then(
      () => this.pump(),
      (err: unknown) => {
        this.failed(err, 'partition owner window read failed');
        this.arm();
      },
    );
  }

  /** After a failed pass or read: no read again before OWNER_RETRY_AFTER_FAILURE_MS; logs what the store's health does not. */
  private failed(err: unknown, msg: string): void {
    // The window still needs its load: without a pause the timer would run the next pass at
    // once, thousands of times a second while the store is away.
    this.retryNotBefore = this.deps.clock.now() + OWNER_RETRY_AFTER_FAILURE_MS;
    // A store fault is logged once, by the store's health.
    if (!(err instanceof StoreUnavailableError)) this.deps.log.error({ err, partition: this.partition }, msg);
  }

  /** Embedded mode: always. Cluster mode: this owner's lease epoch is still the one held. */
  private leaseHeld(): boolean {
    return this.epoch === undefined || this.deps.cluster?.fences.epochOf(this.partition) === this.epoch;
  }

  private arm(): void {
    if (this.stopped) return;
    const next = this.window.nextWakeAt();
    if (next === null) return;
    const at = Math.max(next, this.retryNotBefore);
    // A read in flight pumps when it ends: a wake already due (the refresh it serves) would only
    // spin the timer meanwhile.
    if (this.loading && at <= this.deps.clock.now()) return;
    this.wake.arm(at);
  }
}
