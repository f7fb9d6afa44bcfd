import { cronIdOfInstance } from '../../domain/cron/cron-definition';
import type { TimerHandle } from '../../domain/clock';
import { StoreUnavailableError } from '../../domain/errors';
import { DueEntry, TERMINAL_STATES } from '../../domain/task';
import { incGrouped } from '../../observability/inc-grouped';
import type { AttemptCompletion, CompletionResult } from '../../storage/store';
import type { SchedulerDeps } from '../deps';

/** What the recorder hands back to the dispatcher that owns it. */
export interface CompletionRecorderHooks {
  /** The store applied these completions (external lanes free their stream entries). */
  settled(completions: AttemptCompletion[]): void;
  /** Retries due at once (PENDING), from one written batch: into the ready queue, or elsewhere during a drain. */
  ready(entries: DueEntry[]): void;
  /** Kept completions were written at last (a drain waiting for them may end). */
  written(): void;
}

/** Delay between two tries of completions the store did not take (ms, on the injected clock). */
export const UNWRITTEN_RETRY_MS = 1000;

/** A batch of completions the store did not take, with the `now` it was decided at. */
interface UnwrittenBatch {
  completions: AttemptCompletion[];
  now: number;
}

/**
 * The dispatcher's writer of finished attempts: completions (decided by the retry policy) are
 * written as one compare-and-set batch, counted, and what they leave behind is routed: workflow
 * tasks released from BLOCKED to their owners, a retry due at once back to the dispatcher, a
 * later retry to its partition owner, the ends of cron instances to the cron actor.
 *
 * A batch the store did not take (a full disk, a lost connection) is kept in memory and written
 * again every {@link UNWRITTEN_RETRY_MS}, and at once when the store's health recovers, in the
 * order the batches came, until written: the attempt has run, so it must end as it ended, not run
 * again. Meanwhile {@link holds} tells the lease sweeps that its lease, which nobody extends, is
 * not lost. Kept completions are lost only if the process stops before the store takes them (then
 * the attempts are recovered as interrupted at the next start).
 */
export class CompletionRecorder {
  private readonly unwritten: UnwrittenBatch[] = [];
  /** `taskId attempt` of every kept completion. */
  private readonly held = new Set<string>();
  private retryTimer: TimerHandle | null = null;
  private retrying = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly deps: Pick<SchedulerDeps, 'store' | 'metrics' | 'log' | 'router' | 'clock' | 'taskEnds'>,
    private readonly hooks: CompletionRecorderHooks,
  ) {
    this.unsubscribe = deps.store.health.onChange((fault) => {
      if (!fault) void this.retry();
    });
  }

  /** True while the completion of this attempt waits in memory for the store. */
  holds(taskId: string, attempt: number): boolean {
    return this.held.has(`${taskId} ${attempt}`);
  }

  /** Completions kept in memory, not yet written. */
  get unwrittenCount(): number {
    return this.held.size;
  }

  /** Stops the retries (the dispatcher is destroyed); kept completions are dropped. */
  stop(): void {
    this.unsubscribe();
    if (this.retryTimer) this.deps.clock.clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  /**
   * Writes `completions` (at `now`, epoch ms) and routes what waits again.
   * @returns the store's results, or null when the write failed: the completions are kept and
   *   written later (never thrown)
   */
  async record(completions: AttemptCompletion[], now: number): Promise<CompletionResult[] | null> {
    try {
      return await this.write(completions, now);
    } catch (err) {
      this.keep({ completions, now }, err);
      return null;
    }
  }

  /** Keeps a batch the store did not take and arms the retry. A store fault was logged by the store's health. */
  private keep(batch: UnwrittenBatch, err: unknown): void {
    this.unwritten.push(batch);
    for (const c of batch.completions) this.held.add(`${c.taskId} ${c.attempt}`);
    if (err instanceof StoreUnavailableError)
      this.deps.log.debug({ kept: this.held.size }, 'completions kept until the store takes writes');
    else this.deps.log.error({ err, kept: this.held.size }, 'recording completions failed; they are kept and written again');
    this.armRetry();
  }

  private armRetry(): void {
    if (this.retryTimer || this.unwritten.length === 0) return;
    this.retryTimer = this.deps.clock.setTimeout(() => {
      this.retryTimer = null;
      void this.retry();
    }, UNWRITTEN_RETRY_MS);
  }

  /**
   * Writes the kept batches in order; stops at the first the store refuses for a store fault
   * (retried later). A batch refused for a reason of its own (not a store fault: an error a retry
   * of the same batch does not change, such as a value the store's thread cannot take) is split
   * into single completions, and a single one refused so goes behind the others: it holds no other
   * attempt's completion back, and is still written again at each retry, never dropped.
   */
  private async retry(): Promise<void> {
    if (this.retrying) return;
    this.retrying = true;
    try {
      let refusedAlone = 0;
      while (this.unwritten.length > refusedAlone) {
        const batch = this.unwritten[0];
        try {
          await this.write(batch.completions, batch.now);
        } catch (err) {
          if (err instanceof StoreUnavailableError) break;
          this.unwritten.shift();
          if (batch.completions.length > 1) {
            this.unwritten.unshift(...batch.completions.map((c) => ({ completions: [c], now: batch.now })));
          } else {
            this.unwritten.push(batch);
            refusedAlone++;
          }
          continue;
        }
        this.unwritten.shift();
        for (const c of batch.completions) this.held.delete(`${c.taskId} ${c.attempt}`);
        this.hooks.written();
      }
    } finally {
      this.retrying = false;
      this.armRetry();
    }
  }

  /** One compare-and-set batch, then the routing of what it left behind. @throws the store's error */
  private async write(completions: AttemptCompletion[], now: number): Promise<CompletionResult[]> {
    const { store, metrics, router } = this.deps;
    const ended: string[] = [];
    const terminal: CompletionResult[] = [];
    const readyNow: DueEntry[] = [];
    const later: DueEntry[] = [];
    const results = await store.completeAttempts(completions, now);
    this.hooks.settled(completions);
    for (const res of results) {
      if (!res.applied) {
        metrics.staleCompletions.inc();
        continue;
      }
      // Workflow tasks this completion released from BLOCKED: their partition owners fire them.
      if (res.released && res.released.length > 0) router.offer(res.released);
      if (res.state && TERMINAL_STATES.has(res.state)) {
        terminal.push(res);
        if (cronIdOfInstance(res.taskId) !== null) ended.push(res.taskId);
      } else if (res.state === 'PENDING' && res.entry) {
        readyNow.push(res.entry);
      } else if (res.state === 'RETRYING' && res.entry) {
        later.push(res.entry);
      }
    }
    if (readyNow.length > 0) this.hooks.ready(readyNow);
    if (later.length > 0) router.offer(later); // in cluster mode also wakes their owners elsewhere
    incGrouped(
      metrics.completed,
      terminal,
      (r) => `${r.taskType ?? 'unknown'}\u0000${r.state}`,
      (r) => ({ task_type: r.taskType ?? 'unknown', status: r.state as string }),
    );
    // Read after the commit answered, like the counter it dates: the instant the ends became durable.
    if (terminal.length > 0) metrics.lastFinished.set(this.deps.clock.now() / 1000);
    if (ended.length > 0) router.instancesEnded(ended);
    // Long polls (`?wait=`) waiting on these tasks answer now.
    if (terminal.length > 0) this.deps.taskEnds?.publish({ taskIds: terminal.map((r) => r.taskId) });
    return results;
  }
}
