import { cronIdOfInstance } from '../../domain/cron/cron-definition';
import { DueEntry, TERMINAL_STATES } from '../../domain/task';
import { incGrouped } from '../../observability/inc-grouped';
import type { AttemptCompletion, CompletionResult } from '../../storage/store';
import type { SchedulerDeps } from '../deps';

/** What the recorder hands back to the dispatcher that owns it. */
export interface CompletionRecorderHooks {
  /** The store applied these completions (external lanes free their stream entries). */
  settled(completions: AttemptCompletion[]): void;
  /** A retry due at once: into the ready queue. */
  ready(entry: DueEntry): void;
}

/**
 * The dispatcher's writer of finished attempts: completions (decided by the retry policy) are
 * written as one compare-and-set batch, counted, and what they leave behind is routed: workflow
 * tasks released from BLOCKED to their owners, a retry due at once back to the dispatcher, a
 * later retry to its partition owner, the ends of cron instances to the cron actor.
 */
export class CompletionRecorder {
  constructor(
    private readonly deps: Pick<SchedulerDeps, 'store' | 'metrics' | 'log' | 'router' | 'clock'>,
    private readonly hooks: CompletionRecorderHooks,
  ) {}

  /**
   * Writes `completions` (at `now`, epoch ms) and routes what waits again.
   * @returns the store's results, or null when the write failed (the attempts stay RUNNING until
   *   recovered; the failure is logged, never thrown)
   */
  async record(completions: AttemptCompletion[], now: number): Promise<CompletionResult[] | null> {
    const { store, metrics, log, router } = this.deps;
    try {
      const ended: string[] = [];
      const terminal: CompletionResult[] = [];
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
          this.hooks.ready(res.entry);
        } else if (res.state === 'RETRYING' && res.entry) {
          router.offer([res.entry]); // in cluster mode also wakes its owner elsewhere
        }
      }
      incGrouped(
        metrics.completed,
        terminal,
        (r) => `${r.taskType ?? 'unknown'}\u0000${r.state}`,
        (r) => ({ task_type: r.taskType ?? 'unknown', status: r.state as string }),
      );
      // Read after the commit answered, like the counter it dates: the instant the ends became durable.
      if (terminal.length > 0) metrics.lastFinished.set(this.deps.clock.now() / 1000);
      if (ended.length > 0) router.instancesEnded(ended);
      return results;
    } catch (err) {
      log.error({ err }, 'recording completions failed; the attempts stay RUNNING until recovered');
      return null;
    }
  }
}
