import type { AttemptOutcome } from '../../domain/retry-policy';
import { ClaimedTask } from '../../domain/task';
import { TimerHandle } from '../../domain/clock';
import { AttemptCompletion } from '../../storage/store';
import { lostAttemptCompletion, ProcessExit, workerLostMessage } from '../../domain/lost-attempt';
import { isExternalWorker } from '../../domain/external-queues';
import { SchedulerDeps } from '../deps';
import { WorkerPool } from './worker-pool';

/** An attempt the dispatcher handed to one of its workers. */
export interface RunningAttempt {
  task: ClaimedTask;
  workerId: string;
  /** The concurrency key whose slot the attempt holds (absent: none). */
  concurrencyKey?: string;
}

/** A finished attempt as the dispatcher records it: a worker's report, or one it decided itself. */
export interface FinishedAttempt {
  id: string;
  attempt: number;
  outcome: AttemptOutcome;
  durationMs: number;
}

/**
 * The outcome of an attempt whose worker process was lost: retryable `worker_lost`; with how the
 * process ended when that was seen (its exit code or signal, also kept as `exitCode`/`signal`).
 */
export function lostOutcome(exit?: ProcessExit | null): AttemptOutcome {
  return {
    kind: 'failed',
    message: workerLostMessage(exit),
    errorType: 'worker_lost',
    permanent: false,
    ...(exit ? { detail: { exitCode: exit.code, signal: exit.signal } } : {}),
  };
}

/** What the watchdog reads and calls on its dispatcher. */
export interface WatchdogHost {
  /** Attempts this dispatcher runs, by task id (read only). */
  readonly running: ReadonlyMap<string, RunningAttempt>;
  /** The worker processes by id (of every pool), and their kill. */
  readonly workers: Pick<WorkerPool, 'get' | 'kill'>;
  /** The dispatcher is draining: the lease sweep stops re-arming. */
  draining(): boolean;
  /** External queues are configured: their attempts are swept by their own lanes. */
  readonly hasExternal: boolean;
  /** Applies the retry policy to these attempts it runs, records them, and dispatches again. */
  finish(results: FinishedAttempt[]): Promise<void>;
  /** True while the completion of this attempt is kept in memory for the store: its lease is not lost. */
  unwritten(taskId: string, attempt: number): boolean;
  /** Records completions decided here (orphans) in the store, then dispatches again. */
  recordOrphans(completions: AttemptCompletion[], now: number): Promise<void>;
}

/**
 * The dispatcher's two timers over running attempts (both on the injected clock):
 *
 * - Overrun check, every `timeoutGraceMs / 2` (at least 100 ms) while attempts run: an attempt
 *   past `timeout + timeoutGraceMs` has a handler that ignored its abort signal and is stuck in
 *   synchronous code (a worker normally reports a timeout itself), so the only way to stop it is
 *   to kill its process. The stuck attempt ends as `timeout`, the process's other attempts as
 *   `worker_lost`, both retryable; comedy respawns the process.
 * - Lease sweep, every `leaseMs / 2` (at least 100 ms): a RUNNING attempt whose lease expired has
 *   had no heartbeat for `leaseMs`. If this dispatcher runs it, its worker is unresponsive and is
 *   killed (its attempts are lost and retried); otherwise the attempt is an orphan (its process
 *   is gone) and is recorded as `worker_lost` through the retry policy, unless its completion
 *   is kept in memory for the store (the attempt ended; its write waits for a full disk or a lost
 *   connection): that one is left alone. No lease is judged while the store has a fault (none can
 *   be extended) nor for one lease after it ended (the heartbeats renew them first). Correctness never rests
 *   on this alone: respawns and start-up recovery catch the usual cases first.
 */
export class AttemptWatchdog {
  private overrunTimer: TimerHandle | null = null;
  private sweepTimer: TimerHandle | null = null;
  /** When the store's health last changed (epoch ms): leases are judged again one lease after a fault ended. */
  private storeChangedAt = -Infinity;
  private readonly unwatchStore: () => void;

  constructor(
    private readonly deps: Pick<SchedulerDeps, 'clock' | 'config' | 'store' | 'log'>,
    private readonly host: WatchdogHost,
  ) {
    this.unwatchStore = deps.store.health.onChange(() => (this.storeChangedAt = deps.clock.now()));
  }

  /** Starts the lease sweep (after the workers started). */
  start(): void {
    this.armLeaseSweep();
  }

  /** Attempts started: arms the overrun check unless it is armed already. */
  attemptsStarted(): void {
    if (this.overrunTimer || this.host.running.size === 0) return;
    const every = Math.max(100, this.deps.config.timeoutGraceMs / 2);
    this.overrunTimer = this.deps.clock.setTimeout(() => {
      this.overrunTimer = null;
      this.checkOverruns();
      this.attemptsStarted();
    }, every);
  }

  /** Clears both timers (system shutdown). */
  stop(): void {
    this.unwatchStore();
    if (this.overrunTimer) this.deps.clock.clearTimeout(this.overrunTimer);
    this.overrunTimer = null;
    if (this.sweepTimer) this.deps.clock.clearTimeout(this.sweepTimer);
    this.sweepTimer = null;
  }

  /**
   * Kills an unresponsive worker process and finishes its running attempts: those in `timedOut`
   * as `timeout`, the others as `worker_lost` (both retryable). comedy respawns the process.
   */
  killWorker(workerId: string, timedOut: ReadonlySet<string>, reason: string): void {
    const now = this.deps.clock.now();
    const slot = this.host.workers.get(workerId);
    if (slot) this.host.workers.kill(slot, reason);
    const results = [...this.host.running.values()]
      .filter((r) => r.workerId === workerId)
      .map((r) => ({
        id: r.task.id,
        attempt: r.task.attempt,
        durationMs: now - r.task.startedAt,
        outcome: timedOut.has(r.task.id)
          ? ({
              kind: 'failed',
              message: `handler did not stop within ${r.task.timeoutSeconds} s + grace; its process was killed`,
              errorType: 'timeout',
              permanent: false,
            } as const)
          : lostOutcome(),
      }));
    void this.host.finish(results);
  }

  private checkOverruns(): void {
    const now = this.deps.clock.now();
    const stuckWorkers = new Map<string, Set<string>>();
    for (const [id, run] of this.host.running) {
      if (now < run.task.startedAt + run.task.timeoutSeconds * 1000 + this.deps.config.timeoutGraceMs) continue;
      const ids = stuckWorkers.get(run.workerId) ?? new Set<string>();
      ids.add(id);
      stuckWorkers.set(run.workerId, ids);
    }
    for (const [workerId, stuck] of stuckWorkers)
      this.killWorker(workerId, stuck, `attempts past timeout + grace: ${[...stuck].join(', ')}`);
  }

  private armLeaseSweep(): void {
    const { clock, config, store, log } = this.deps;
    this.sweepTimer = clock.setTimeout(
      async () => {
        this.sweepTimer = null;
        try {
          const now = clock.now();
          // While the store cannot take writes no lease is extended, so an expired one says nothing;
          // after the fault the workers' heartbeats (every third of a lease) renew them first.
          if (store.health.fault || now - this.storeChangedAt < config.leaseMs) return;
          const expired = await store.findExpiredLeases(now, 1000);
          const stuckWorkers = new Set<string>();
          const orphans: typeof expired = [];
          for (const o of expired) {
            const run = this.host.running.get(o.taskId);
            if (run && run.task.attempt === o.attempt) stuckWorkers.add(run.workerId);
            // Finished, but its completion waits for the store (a full disk): not lost, never run again.
            else if (this.host.unwritten(o.taskId, o.attempt)) continue;
            // External attempts are swept by their lanes (their own, usually shorter, leases).
            else if (!(this.host.hasExternal && isExternalWorker(o.workerId))) orphans.push(o);
          }
          for (const workerId of stuckWorkers) this.killWorker(workerId, new Set(), 'attempt leases expired: no heartbeat');
          if (orphans.length > 0) {
            await this.host.recordOrphans(
              orphans.map((o) => lostAttemptCompletion(o, now, 'attempt lease expired: no heartbeat from its worker')),
              now,
            );
          }
        } catch (err) {
          log.error({ err }, 'lease sweep failed');
        } finally {
          if (!this.host.draining()) this.armLeaseSweep();
        }
      },
      Math.max(100, config.leaseMs / 2),
    );
  }
}
