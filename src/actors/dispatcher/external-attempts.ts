import { storeUnavailable } from '../../storage/store-health';
import { StoreUnavailableError } from '../../domain/errors';
import { attemptCompletion } from '../../domain/attempt-completion';
import type { TimerHandle } from '../../domain/clock';
import { lostAttemptCompletion } from '../../domain/lost-attempt';
import { EXTERNAL_WORKER_PREFIX, isExternalWorker, type ExternalQueueSpec } from '../../domain/external-queues';
import { StallWatch } from '../../domain/stall-watch';
import type { ExternalCompletion, ExternalCompletionResult } from '../../services/ports';
import type { AttemptCompletion, CompletionResult, OrphanedAttempt } from '../../storage/store';
import type { SchedulerDeps } from '../deps';

/** What {@link ExternalAttempts} needs from the dispatcher that owns it. */
export interface ExternalAttemptsHooks {
  /**
   * Records completions through the dispatcher's path (compare-and-set, retries routed, workflow
   * releases, cron ends, metrics). @returns the store's results, or null when the write failed
   */
  record(completions: AttemptCompletion[], now: number): Promise<CompletionResult[] | null>;
  /** Dispatches again (capacity was freed). */
  pump(): void;
  /** True while the completion of this attempt is kept in memory for the store: its lease is not lost. */
  unwritten?(taskId: string, attempt: number): boolean;
  /** Runs after each sweep's lease pass (the streams take over entries left pending). */
  afterSweep?(): Promise<void>;
}

/** The completion of an external attempt cancelled while it ran: CANCELLED at once (no consumer can be signalled). */
export function cancelledWhileRunning(taskId: string, attempt: number): AttemptCompletion {
  return {
    taskId,
    attempt,
    state: 'CANCELLED',
    retryAt: null,
    result: null,
    error: { message: 'cancelled while running', type: 'cancelled', retryable: false },
    durationMs: null,
  };
}

/**
 * What the attempts of every external queue share, whichever way they reach their consumers (a
 * Redis stream, or HTTP pull workers): a consumer's completion ({@link complete}), a cancel
 * ({@link cancel}), and the lease sweep, every half of the shortest external lease (at least every
 * 50 ms): RUNNING attempts of external workers (`worker_id` `external:…` or `http:…`) whose lease
 * ended without a completion or heartbeat are recorded as `worker_lost` through the retry policy
 * (RETRYING with backoff while attempts remain, then a new attempt; else DEAD). The sweep reads
 * the store, so it covers attempts of any node and of a previous process. After this process was
 * stalled, and after it starts, it judges no attempt's lease for that lease's length, its queue's
 * `leaseMs` (`StallWatch`).
 */
export class ExternalAttempts {
  private sweepTimer: TimerHandle | null = null;
  private stopped = false;
  /** Whether this process was stalled within the shortest lease (the sweep's lateness), or started. */
  private readonly stall: StallWatch;
  private readonly leases: number[];
  /** The longest `leaseMs` of the external queues (0 without any). */
  private readonly longestLease: number;
  /** Each external queue's `leaseMs`, by queue name. */
  private readonly leaseOf: Map<string, number>;

  /** @param queues every external queue (the sweep runs every half of the shortest lease) */
  constructor(
    private readonly deps: SchedulerDeps,
    queues: ReadonlyArray<Pick<ExternalQueueSpec, 'name' | 'leaseMs'>>,
    private readonly hooks: ExternalAttemptsHooks,
  ) {
    this.leases = queues.map((q) => q.leaseMs);
    this.leaseOf = new Map(queues.map((q) => [q.name, q.leaseMs]));
    this.longestLease = Math.max(0, ...this.leases);
    this.stall = new StallWatch(deps.clock, this.leases.length > 0 ? Math.min(...this.leases) : 0);
  }

  /** Starts the lease sweep; it judges no lease for its own length after the start (see the body). */
  start(): void {
    // A (re)started service judges no external lease for its length: consumers of attempts leased
    // before it started could not heartbeat while it was down (docs/EXTERNAL-QUEUES.md).
    this.stall.holdFromNow();
    this.armSweep();
  }

  /** Stops the sweep (the dispatcher is being destroyed). */
  stop(): void {
    this.stopped = true;
    if (this.sweepTimer) this.deps.clock.clearTimeout(this.sweepTimer);
    this.sweepTimer = null;
  }

  /**
   * A consumer's report on an attempt: the retry policy decides the next state (as for a worker's
   * report) and the dispatcher records it as a compare-and-set on (id, attempt, RUNNING).
   * @throws StoreUnavailableError (503) while the store has a fault, Error when the store write
   *   failed otherwise (the completion is kept and written later; the consumer may report again)
   */
  async complete(c: ExternalCompletion): Promise<ExternalCompletionResult> {
    const now = this.deps.clock.now();
    const durationMs = c.startedAt === null ? null : Math.max(0, now - c.startedAt);
    const completion = attemptCompletion(c.taskId, c.attempt, c.outcome, c.retry, now, durationMs);
    const results = await this.hooks.record([completion], now);
    if (results === null) {
      // Kept by the recorder and written once the store takes writes: the consumer may report again.
      const fault = this.deps.store.health.fault;
      throw fault ? storeUnavailable(fault) : new Error(`recording the completion of ${c.taskId} failed`);
    }
    if (durationMs !== null && results[0]?.applied) this.deps.metrics.duration.observe(durationMs / 1000);
    return { applied: results[0]?.applied ?? false, state: results[0]?.state ?? null };
  }

  /** Ends a running external attempt CANCELLED (compare-and-set), then dispatches again. */
  cancel(taskId: string, attempt: number): void {
    void this.hooks.record([cancelledWhileRunning(taskId, attempt)], this.deps.clock.now()).then(() => this.hooks.pump());
  }

  private armSweep(): void {
    if (this.stopped || this.leases.length === 0) return;
    const every = Math.max(50, Math.min(...this.leases) / 2);
    this.stall.armed(every);
    this.sweepTimer = this.deps.clock.setTimeout(async () => {
      this.sweepTimer = null;
      try {
        await this.sweep();
      } catch (err) {
        // A store fault is logged once by the store's health (no stack); the next sweep tries again.
        if (!(err instanceof StoreUnavailableError)) this.deps.log.error({ err }, 'external lease sweep failed');
      }
      this.armSweep();
    }, every);
  }

  private async sweep(): Promise<void> {
    const { store, clock, log } = this.deps;
    const now = clock.now();
    const held = this.stall.holding(); // a late first sweep just after the start is not news
    const late = this.stall.lateness();
    if (late > 0 && !held) log.warn({ late_ms: late, clock_step_ms: this.stall.steppedMs() }, this.stall.warning('external'));
    // The consumers' heartbeats and reports sent meanwhile wait in their sockets: read them first.
    if (this.stall.holding()) return;
    const found = (await store.findExpiredLeases(now, 1000)).filter(
      (o) => isExternalWorker(o.workerId) && !this.hooks.unwritten?.(o.taskId, o.attempt),
    );
    const expired = await this.pastTheirHold(found, now - this.stall.heldSince());
    if (expired.length > 0) {
      await this.hooks.record(
        // Each only while its lease still ends before now: a heartbeat written since this read wins.
        expired.map((o) => ({
          ...lostAttemptCompletion(o, now, 'no completion or heartbeat from an external consumer within the lease'),
          leaseExpiredBefore: now,
        })),
        now,
      );
      this.hooks.pump();
    }
    await this.hooks.afterSweep?.();
  }

  /**
   * Of the expired attempts, those whose own queue's lease has passed since the last stall or the
   * start (`sinceHold` ms ago): a long-lease queue's consumers get their whole lease to heartbeat
   * again. A stream queue's attempt names its queue (`external:<queue>`); a pull worker's
   * (`http:<worker>`) does not, so its task is read, only within the longest lease of a hold.
   */
  private async pastTheirHold(expired: OrphanedAttempt[], sinceHold: number): Promise<OrphanedAttempt[]> {
    if (expired.length === 0 || sinceHold >= this.longestLease) return expired;
    const out: OrphanedAttempt[] = [];
    for (const o of expired) {
      const worker = o.workerId ?? '';
      const queue = worker.startsWith(EXTERNAL_WORKER_PREFIX)
        ? worker.slice(EXTERNAL_WORKER_PREFIX.length)
        : (await this.deps.store.getTask(o.taskId))?.queue;
      const leaseMs = (queue !== undefined ? this.leaseOf.get(queue) : undefined) ?? this.longestLease;
      if (sinceHold >= leaseMs) out.push(o);
    }
    return out;
  }
}
