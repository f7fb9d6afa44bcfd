import { StoreUnavailableError } from '../../domain/errors';
import type { AttemptOutcome } from '../../domain/retry-policy';
import { ClaimedTask } from '../../domain/task';
import { TimerHandle } from '../../domain/clock';
import { AttemptCompletion } from '../../storage/store';
import { lostAttemptCompletion, ProcessExit, recycledOutcome, workerLostMessage } from '../../domain/lost-attempt';
import { isExternalWorker } from '../../domain/external-queues';
import { StallWatch } from '../../domain/stall-watch';
import { SchedulerDeps } from '../deps';
import { WorkerPool } from './worker-pool';
import type { WorkResult } from '../protocol';

/** An attempt the dispatcher handed to one of its workers. */
export interface RunningAttempt {
  task: ClaimedTask;
  workerId: string;
  /**
   * {@link Clock.monotonic} when the dispatcher sent it: its timeout counts from here, so a step of
   * the wall clock neither kills it early (forward) nor spares it (back).
   */
  startedMono: number;
  /** The concurrency key whose slot the attempt holds (absent: none). */
  concurrencyKey?: string;
  /**
   * Claimed ahead of its due time and sent at `task.startedAt`: its row has no start yet, so the
   * completion carries it (`AttemptCompletion.startedAt`).
   */
  claimedAhead?: true;
}

/** A finished attempt as the dispatcher records it: a worker's report, or one it decided itself. */
export interface FinishedAttempt {
  id: string;
  attempt: number;
  outcome: AttemptOutcome;
  durationMs: number;
  /**
   * A retry is not due before this instant (epoch ms): an attempt claimed ahead that never started
   * is retried at its task's due time, not earlier.
   */
  retryNotBefore?: number;
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
  /** The outcome reported at the abort of an attempt whose handler had not stopped (SettlingAttempts), or undefined. */
  heldOutcome(taskId: string, attempt: number): AttemptOutcome | undefined;
  /** True while the completion of this attempt is kept in memory for the store: its lease is not lost. */
  unwritten(taskId: string, attempt: number): boolean;
  /** Records completions decided here (orphans) in the store, then dispatches again. */
  recordOrphans(completions: AttemptCompletion[], now: number): Promise<void>;
}

/** An aborted attempt whose handler had not stopped when it was reported (its outcome is held: SettlingAttempts). */
interface Stopping {
  workerId: string;
  /** {@link Clock.monotonic} after which its process is killed. */
  deadline: number;
}

/**
 * The dispatcher's two timers over running attempts (both on the injected clock):
 *
 * - Overrun check, every `timeoutGraceMs / 2` (at least 100 ms) while attempts run or stop: an
 *   attempt whose handler did not stop `timeoutGraceMs` after its abort (its timeout, or a cancel
 *   sent to it) ignores its signal, or is stuck in synchronous code, so the only way to stop it
 *   is to kill its process. That attempt is charged (`timeout`, or `cancelled` for a cancel); the
 *   process's other attempts did nothing wrong and are retried free (`worker_recycled`, see
 *   `recycledOutcome`). An aborted attempt is watched until its handler settles: the worker
 *   reports its outcome at the abort (`handlerRunning`), the dispatcher holds it until the end
 *   (SettlingAttempts), and the worker says `settled` when the handler stops.
 * - Lease sweep, every `leaseMs / 2` (at least 100 ms): a RUNNING attempt whose lease expired has
 *   had no liveness beat for `leaseMs`: the beats come from a thread of its own in the worker
 *   process, so its process is dead or frozen (SIGSTOP), not merely busy. If this dispatcher runs
 *   it, the process is killed and all its attempts are charged `worker_lost` (nothing tells which
 *   one froze it); otherwise the attempt is an orphan (its process is gone) and is recorded as
 *   `worker_lost` through the retry policy, unless its completion is kept in memory for the store
 *   (the attempt ended; its write waits for a full disk or a lost connection): that one is left
 *   alone. No lease is judged while the store has a fault (none can be extended) nor for one lease
 *   after it ended (the beats renew them first), nor for one lease after this process itself was
 *   stalled (`StallWatch`: the beats and reports of its workers waited in their pipes meanwhile).
 *   Correctness never rests on this alone: respawns and start-up recovery catch the usual cases
 *   first.
 */
export class AttemptWatchdog {
  private overrunTimer: TimerHandle | null = null;
  private sweepTimer: TimerHandle | null = null;
  /** When the store's health last changed (epoch ms): leases are judged again one lease after a fault ended. */
  private storeChangedAt = -Infinity;
  /** Whether this process was stalled within the last lease (the lease sweep's lateness). */
  private readonly stall: StallWatch;
  private readonly unwatchStore: () => void;
  /** Cancels sent to running attempts, by task id: when ({@link Clock.monotonic}), for which attempt. */
  private readonly cancels = new Map<string, { attempt: number; at: number }>();
  /** Aborted attempts recorded while their handlers still ran, by `id#attempt`. */
  private readonly stopping = new Map<string, Stopping>();

  constructor(
    private readonly deps: Pick<SchedulerDeps, 'clock' | 'config' | 'store' | 'log'>,
    private readonly host: WatchdogHost,
  ) {
    this.unwatchStore = deps.store.health.onChange(() => (this.storeChangedAt = deps.clock.now()));
    this.stall = new StallWatch(deps.clock, deps.config.leaseMs);
  }

  /** Starts the lease sweep (after the workers started). */
  start(): void {
    this.armLeaseSweep();
  }

  /** Attempts started (or are stopping): arms the overrun check unless it is armed already. */
  attemptsStarted(): void {
    if (this.overrunTimer || (this.host.running.size === 0 && this.stopping.size === 0)) return;
    const every = Math.max(100, this.deps.config.timeoutGraceMs / 2);
    this.overrunTimer = this.deps.clock.setTimeout(() => {
      this.overrunTimer = null;
      this.checkOverruns();
      this.attemptsStarted();
    }, every);
  }

  /**
   * A cancel was sent to a running attempt: unless its handler stops within `timeoutGraceMs`
   * (ms, from the first cancel of that attempt), its process is killed, as for a timeout.
   */
  cancelSent(taskId: string, attempt: number): void {
    // A repeated cancel of the same attempt keeps the first one's time: the grace runs from it
    // (a `cancel_running` cron firing every second would otherwise put the kill off for ever).
    const earlier = this.cancels.get(taskId);
    if (earlier?.attempt !== attempt) this.cancels.set(taskId, { attempt, at: this.deps.clock.monotonic() });
    this.attemptsStarted();
  }

  /**
   * A worker's report, read before the dispatcher records it: an outcome reported while its
   * handler still runs (`handlerRunning`: aborted and not yet stopped) is watched until the worker
   * says `settled`; its process is killed at the attempt's deadline (cancel + grace, or timeout +
   * grace but no sooner than a grace from now) if it has not.
   */
  reported(workerId: string, results: readonly WorkResult[]): void {
    const grace = this.deps.config.timeoutGraceMs;
    const now = this.deps.clock.monotonic();
    for (const r of results) {
      if (!r.handlerRunning && this.cancels.size === 0) continue; // the common case: nothing aborted
      const run = this.host.running.get(r.id);
      if (!run || run.task.attempt !== r.attempt || run.workerId !== workerId) continue;
      const cancel = this.cancels.get(r.id);
      this.cancels.delete(r.id);
      if (!r.handlerRunning) continue;
      // A timeout fired by the worker: its grace counts from the report at the latest (the worker
      // started the attempt after its claim, and the report may have waited in the channel).
      const deadline = cancel && cancel.attempt === r.attempt ? cancel.at + grace : Math.max(timeoutDeadline(run, grace), now + grace);
      this.stopping.set(keyOf(r.id, r.attempt), { workerId, deadline });
      this.attemptsStarted();
    }
  }

  /**
   * A liveness beat of a worker's current process (from its liveness thread): the leases of every
   * attempt this dispatcher runs there are extended by `leaseMs`, so a handler that keeps its
   * process's loop busy is not taken for a dead process. Nothing is written while the store has a
   * fault (its health logs it once); a failed write is logged.
   * @param held attempts claimed ahead and held for this worker (not yet sent): extended with it
   * @returns the attempts there with a cancel requested in the store (another node's cancel), for
   *   the dispatcher to abort; empty when nothing was written
   */
  async alive(
    workerId: string,
    held: ReadonlyArray<{ taskId: string; attempt: number }> = [],
  ): Promise<Array<{ taskId: string; attempt: number }>> {
    const items: Array<{ taskId: string; attempt: number }> = [...held];
    for (const run of this.host.running.values())
      if (run.workerId === workerId) items.push({ taskId: run.task.id, attempt: run.task.attempt });
    const { store, clock, config, log } = this.deps;
    if (items.length === 0 || store.health.fault) return [];
    try {
      return (await store.heartbeatAttempts(items, clock.now() + config.leaseMs)).cancelRequested;
    } catch (err) {
      // The store away (its health logs the fault once): the next heartbeat after it returns extends the lease.
      if (!(err instanceof StoreUnavailableError)) log.error({ err }, 'lease extension failed');
      return [];
    }
  }

  /** The worker says the handlers of these aborted attempts stopped: nothing to kill for them. */
  settled(workerId: string, attempts: ReadonlyArray<{ id: string; attempt: number }>): void {
    for (const a of attempts) {
      const key = keyOf(a.id, a.attempt);
      if (this.stopping.get(key)?.workerId === workerId) this.stopping.delete(key);
    }
  }

  /** A worker process was replaced (killed or crashed): the handlers watched there are gone with it. */
  workerReplaced(workerId: string): void {
    for (const [key, s] of this.stopping) if (s.workerId === workerId) this.stopping.delete(key);
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
   * Kills a worker process and finishes the attempts it was running. With `blame` (the attempts
   * that caused the kill, by task id, with their outcomes), those end with their outcome and the
   * others as free `worker_recycled` retries; without it (null: nothing to attribute the kill to)
   * every attempt ends as `worker_lost`, charged. comedy respawns the process.
   */
  killWorker(workerId: string, blame: ReadonlyMap<string, AttemptOutcome> | null, reason: string): void {
    const now = this.deps.clock.monotonic();
    const slot = this.host.workers.get(workerId);
    if (slot) this.host.workers.kill(slot, reason);
    this.workerReplaced(workerId);
    const results: FinishedAttempt[] = [];
    for (const r of this.host.running.values()) {
      if (r.workerId !== workerId) continue;
      this.cancels.delete(r.task.id);
      // An aborted attempt whose handler did not stop ends with the outcome of its abort.
      const held = this.host.heldOutcome(r.task.id, r.task.attempt);
      const outcome = held ?? (blame === null ? lostOutcome() : (blame.get(r.task.id) ?? recycledOutcome(reason)));
      results.push({ id: r.task.id, attempt: r.task.attempt, durationMs: Math.max(0, now - r.startedMono), outcome });
    }
    void this.host.finish(results);
  }

  /** Kills the processes of attempts past their deadlines; all on {@link Clock.monotonic}, so a step of the wall clock moves none. */
  private checkOverruns(): void {
    const now = this.deps.clock.monotonic();
    const grace = this.deps.config.timeoutGraceMs;
    const culprits = new Map<string, Map<string, AttemptOutcome>>();
    const names = new Map<string, string[]>();
    const blame = (workerId: string, id: string, outcome: AttemptOutcome | null) => {
      const byId = culprits.get(workerId) ?? new Map<string, AttemptOutcome>();
      if (outcome) byId.set(id, outcome);
      culprits.set(workerId, byId);
      names.set(workerId, [...(names.get(workerId) ?? []), id]);
    };
    for (const [id, run] of this.host.running) {
      const cancel = this.cancels.get(id);
      if (cancel && cancel.attempt === run.task.attempt && now >= cancel.at + grace) blame(run.workerId, id, { kind: 'cancelled' });
      else if (now >= timeoutDeadline(run, grace)) blame(run.workerId, id, stuckOutcome(run));
    }
    // A stopping attempt ends with the kill (its held outcome); the neighbours are retried free.
    for (const [key, s] of this.stopping) if (now >= s.deadline) blame(s.workerId, key, null);
    for (const [id, c] of this.cancels) if (this.host.running.get(id)?.task.attempt !== c.attempt) this.cancels.delete(id);
    for (const [workerId, byId] of culprits) {
      this.killWorker(
        workerId,
        byId,
        `attempts not stopped within timeoutGraceMs of their timeout or cancel: ${names.get(workerId)?.join(', ')}`,
      );
    }
  }

  private armLeaseSweep(): void {
    const { clock, config, store, log } = this.deps;
    const every = Math.max(100, config.leaseMs / 2);
    this.stall.armed(every);
    this.sweepTimer = clock.setTimeout(async () => {
      this.sweepTimer = null;
      try {
        const now = clock.now();
        const late = this.stall.lateness();
        if (late > 0) log.warn({ late_ms: late, clock_step_ms: this.stall.steppedMs() }, this.stall.warning('attempt'));
        // While the store cannot take writes no lease is extended, so an expired one says nothing;
        // after the fault the workers' heartbeats (every third of a lease) renew them first.
        if (store.health.fault || now - this.storeChangedAt < config.leaseMs || this.stall.holding()) return;
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
        for (const workerId of stuckWorkers) this.killWorker(workerId, null, 'attempt leases expired: no liveness beat from its process');
        if (orphans.length > 0) {
          await this.host.recordOrphans(
            orphans.map((o) => lostAttemptCompletion(o, now, 'attempt lease expired: no heartbeat from its worker')),
            now,
          );
        }
      } catch (err) {
        // A fault that began after the check above: the store's health logs it once (no stack).
        if (!(err instanceof StoreUnavailableError)) log.error({ err }, 'lease sweep failed');
      } finally {
        if (!this.host.draining()) this.armLeaseSweep();
      }
    }, every);
  }
}

/** Key of an attempt in the stopping map. */
function keyOf(id: string, attempt: number): string {
  return `${id}#${attempt}`;
}

/** When (on {@link Clock.monotonic}) an attempt still running has overrun its timeout and grace: start + timeout + grace. */
function timeoutDeadline(run: RunningAttempt, graceMs: number): number {
  return run.startedMono + run.task.timeoutSeconds * 1000 + graceMs;
}

/** The outcome of an attempt whose process was killed because it ran past its timeout and grace (charged). */
function stuckOutcome(run: RunningAttempt): AttemptOutcome {
  return {
    kind: 'failed',
    message: `handler did not stop within ${run.task.timeoutSeconds} s + grace; its process was killed`,
    errorType: 'timeout',
    permanent: false,
  };
}
