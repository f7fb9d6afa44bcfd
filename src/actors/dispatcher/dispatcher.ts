import type { ActorContext } from '../runtime/comedy';
import type { ProcessExit } from '../../domain/lost-attempt';
import type { AttemptLogAppend } from '../../domain/attempt-log';
import { DueEntry } from '../../domain/task';
import { AttemptCompletion, CompletionResult } from '../../storage/store';
import { DEPS_RESOURCE, SchedulerDeps } from '../deps';
import { WorkerPools } from './worker-pools';
import { dispatcherPools, WorkersOf } from './dispatcher-pools';
import { interruptRunning } from './interrupt-running';
import { WorkResult } from '../protocol';
import { wellFormedResults } from './work-results';
import { ClaimBatches } from './claim-batch';
import { RunOutbox, sendRun } from './run-outbox';
import { ExternalDispatch } from './external-dispatch';
import type { ExternalCompletion, ExternalCompletionResult, LeasedAttempt, LeaseRequest } from '../../services/ports';
import { AttemptWatchdog, FinishedAttempt, lostOutcome, RunningAttempt } from './attempt-watchdog';
import { recycledOutcome } from '../../domain/lost-attempt';
import { RunningReports } from './running-reports';
import { CompletionRecorder } from './completion-recorder';
import { ReleaseTimer } from './release-timer';
import { AheadDispatch } from './ahead-dispatch';
import { runningAttempt, RunningMap, takeFinished } from './running-attempts';
import { SettlingAttempts } from './settling-attempts';
import { DrainResult, ShutdownDrain } from './shutdown-drain';
import type { CheckpointReply, DispatcherMessages, ProgressItem, RemotePull } from '../protocol';

/**
 * The dispatcher (docs/DESIGN.md §5): ready tasks per worker pool and tenant (priority inside,
 * weighted round-robin between), worker credits (a worker gets work only for its free slots; the
 * least loaded worker of its task type's pool first), claims (PENDING → RUNNING, batched per
 * worker message), and completions (the retry policy decides the next state; the store applies
 * it as a compare-and-set). Retries go back to their partition owner.
 */
export class DispatcherActor {
  static inject(): string[] {
    return [DEPS_RESOURCE];
  }

  private self: ActorContext | null = null;
  /** The pump's wake when what is ready waits for a token or a release instant. */
  private readonly release: ReleaseTimer;
  /** The worker pools, each with the ready queues of its task types. */
  private readonly pools: WorkerPools;
  private readonly running: RunningMap = new Map();
  /** Aborted attempts whose handlers still run: their reported outcomes wait for the handler to stop. */
  private readonly settling = new SettlingAttempts();
  /** Running attempts already aborted because a heartbeat found their cancel in the store. */
  private readonly cancelsSeen = new WeakSet<RunningAttempt>();
  /** The graceful stop: begun by `drain`, answered once idle or at the end of its grace. */
  private readonly shutdown: ShutdownDrain;
  /** A pump is due at the end of this turn ({@link enqueue}). */
  private pumpScheduled = false;
  /** The `run` messages of this iteration's claims, one per worker. */
  private readonly outbox = new RunOutbox((slot, items, oldestStart) =>
    sendRun(this.deps, this.running, slot, items, oldestStart, (results) => void this.finish(results)),
  );
  /** Claims in flight to the store (a drain waits for them too). */
  private readonly claims: ClaimBatches;
  /** Overrun check and lease sweep over `running`. */
  private readonly watchdog: AttemptWatchdog;
  /**
   * External queues when configured (Redis streams, HTTP pull workers): they replace "send to a
   * worker" for their tasks.
   */
  private readonly external: ExternalDispatch | null;
  /** Checkpoints and progress of the attempts the workers run. */
  private readonly reports: RunningReports;
  /** Writes completions and routes what they released, what waits again and which cron instances ended. */
  private readonly recorder: CompletionRecorder;
  private readonly unwatchStore: () => void;
  /** Claims ahead of the due time (`claimAheadMs` > 0, embedded mode), else null. */
  private readonly ahead: AheadDispatch | null;

  /**
   * @param workersOf the worker processes of a pool (default: a {@link WorkerPool} forking them;
   *   tests give fakes)
   */
  constructor(
    private readonly deps: SchedulerDeps,
    workersOf?: WorkersOf,
  ) {
    this.release = new ReleaseTimer(deps.clock, () => this.pump());
    this.shutdown = new ShutdownDrain(deps.clock, {
      idle: () => this.idle(),
      runningCount: () => this.running.size,
      unwrittenCount: () => this.recorder.unwrittenCount,
      interrupt: () =>
        interruptRunning(
          {
            running: this.running,
            kill: (workerId) => {
              const slot = this.pools.get(workerId);
              if (slot) this.pools.kill(slot, 'the shutdown grace ended with attempts running');
            },
            heldOutcome: (taskId, attempt) => this.settling.outcomeOf(taskId, attempt),
            record: (results, now) => this.record(this.decide(results, now), now),
          },
          deps.clock.now(),
          deps.clock.monotonic(),
        ),
    });
    this.pools = dispatcherPools(
      deps,
      {
        onRestart: (slot, exit, cause) => {
          this.loseAttemptsOf(slot.id, exit, cause === 'killed');
          this.pump();
        },
        // Attempts held for the worker (claimed ahead) have their leases extended with its beats too.
        onAlive: (slot) => void this.watchdog.alive(slot.id, this.ahead?.heldOf(slot.id)).then((c) => this.cancelRequested(c)),
        pump: () => this.pump(),
      },
      workersOf,
    );
    deps.limits.onChange(() => this.pump());
    // No claims while the store cannot take writes (they would fail); dispatch resumes with it.
    // A fault that is not recoverable: the kept completions can never be written, a drain stops waiting for them.
    this.unwatchStore = deps.store.health.onChange((fault) => {
      if (!fault) this.pump();
      else if (!fault.recoverable) this.shutdown.settle();
    });
    this.recorder = new CompletionRecorder(deps, {
      settled: (completions) => this.external?.settled(completions),
      // During a drain nothing here starts them: their owners do, elsewhere in a cluster (woken now,
      // not at their next window read), or after the restart.
      ready: (entries) => (this.shutdown.draining ? this.deps.router.offer(entries) : entries.forEach((e) => this.addReady(e))),
      written: () => this.shutdown.settle(),
    });
    this.external = ExternalDispatch.create(deps, {
      record: (c, now) => this.record(c, now),
      pump: () => this.pump(),
      unwritten: (taskId, attempt) => this.recorder.holds(taskId, attempt),
    });
    this.claims = new ClaimBatches(deps, {
      running: this.running,
      attemptsStarted: () => this.watchdog.attemptsStarted(),
      send: (slot, items, startedAt) => this.outbox.add(slot, items, startedAt),
      settle: () => this.shutdown.settle(),
      pump: () => this.pump(),
      finish: (results) => void this.finish(results),
    });
    this.ahead = AheadDispatch.create(deps, this.external, {
      running: this.running,
      poolOf: (e) => this.pools.poolOf(e.taskType),
      ready: (e) => this.addReady(e),
      attemptsStarted: () => this.watchdog.attemptsStarted(),
      send: (slot, items, startedAt) => this.outbox.add(slot, items, startedAt),
      finish: (results) => void this.finish(results),
      pump: () => this.pump(),
      draining: () => this.shutdown.draining,
      settle: () => this.shutdown.settle(),
    });
    this.reports = new RunningReports(
      deps,
      (taskId, attempt, workerId) => runningAttempt(this.running, taskId, attempt, workerId) !== undefined,
    );
    this.watchdog = new AttemptWatchdog(deps, {
      running: this.running,
      workers: this.pools,
      draining: () => this.shutdown.draining,
      hasExternal: this.external !== null,
      finish: (results) => this.finish(results),
      heldOutcome: (taskId, attempt) => this.settling.outcomeOf(taskId, attempt),
      unwritten: (taskId, attempt) => this.recorder.holds(taskId, attempt) || (this.ahead?.holds(taskId, attempt) ?? false),
      recordOrphans: async (completions, now) => {
        await this.record(completions, now);
        this.pump(); // a retry due at once is in the ready queue now
      },
    });
  }

  initialize(self: ActorContext): void {
    this.self = self;
  }

  async startWorkers(): Promise<void> {
    await this.pools.start(this.self as ActorContext);
    await this.external?.start();
    this.watchdog.start();
    this.pump();
  }

  /** A worker's report of a promise rejection nothing handled there (it logged it and goes on): counted. */
  unhandledRejection(msg: { workerId: string; pid: number }): void {
    this.deps.metrics.workerRejections.inc({ worker_id: msg.workerId });
  }

  /**
   * A handler called `ctx.heartbeat()` (a worker without a liveness thread beats so too): its
   * worker is alive, and the leases of the attempts this dispatcher runs there are extended, as for
   * a liveness beat (`AttemptWatchdog.alive`). The store answers which of them have a cancel
   * requested: those are aborted here, once each ({@link cancelRequested}). So a cancel made on
   * another node reaches this one within one heartbeat interval (`leaseMs / 3`) even when its
   * message was lost or never sent (no Redis).
   */
  async heartbeat(msg: { workerId: string; pid: number; attempts: Array<{ id: string; attempt: number }> }): Promise<void> {
    // Attempts claimed ahead and held for this worker: their leases go with its beats.
    this.cancelRequested(await this.watchdog.alive(msg.workerId, this.ahead?.heldOf(msg.workerId)));
  }

  /** Attempts whose cancel was requested in the store (by another node) are aborted here, once each. */
  private cancelRequested(attempts: ReadonlyArray<{ taskId: string; attempt: number }>): void {
    for (const c of attempts) {
      const run = runningAttempt(this.running, c.taskId, c.attempt);
      if (!run || this.cancelsSeen.has(run)) continue;
      this.cancelsSeen.add(run);
      this.abort(c);
    }
  }

  /**
   * Handlers of aborted attempts stopped after their outcome was reported: their process need not
   * be killed, and the attempts end now (their held outcomes are recorded, see SettlingAttempts).
   */
  async settled(msg: { workerId: string; pid: number; attempts: Array<{ id: string; attempt: number }> }): Promise<void> {
    this.watchdog.settled(msg.workerId, msg.attempts);
    const ended = this.settling.take(msg.attempts);
    if (ended.length > 0) await this.ended(msg.workerId, msg.pid, ended);
  }

  /** A handler's `ctx.checkpoint(value)`: stored as a compare-and-set on its attempt; answered after the commit. */
  checkpoint(msg: { workerId: string; pid: number; taskId: string; attempt: number; value: unknown }): Promise<CheckpointReply> {
    return this.reports.checkpoint(msg);
  }

  /** The latest `ctx.progress(value)` of a worker's attempts (throttled there). */
  progress(msg: { workerId: string; pid: number; reports: ProgressItem[] }): Promise<void> {
    return this.reports.progress(msg);
  }

  /** New `ctx.log` lines of a worker's attempts (bounded per attempt there), kept with the attempt. */
  logs(msg: { workerId: string; pid: number; logs: AttemptLogAppend[] }): Promise<void> {
    return this.reports.logs(msg);
  }

  /** comedy hook at system shutdown. */
  destroy(): void {
    this.external?.stop();
    this.recorder.stop();
    this.unwatchStore();
    this.pools.stop();
    this.pools.killLeftovers();
    this.watchdog.stop();
    this.release.stop();
  }

  /**
   * Due entries from a partition owner join the ready queues; one pump runs once the turn's
   * messages are in (the hand-outs of many owners arrive together), so they are claimed in full
   * batches instead of a claim per message.
   */
  enqueue(entries: DueEntry[]): void {
    const now = this.ahead ? this.deps.clock.now() : 0;
    // Claiming ahead: an entry handed out before its due time waits in `ahead`, never in the ready queues.
    for (const e of entries) if (!this.ahead?.accept(e, now)) this.addReady(e);
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** A ready task joins the ready queues of its task type's worker pool, or of its external queue. */
  private addReady(e: DueEntry): void {
    if (this.external?.handles(e)) this.external.add(e);
    else this.pools.poolOf(e.taskType).ready.add(e);
  }

  /** An external consumer's report: recorded like a worker's report, then dispatch goes on. */
  async completeExternal(msg: ExternalCompletion): Promise<ExternalCompletionResult> {
    if (!this.external) return { applied: false, state: null };
    const res = await this.external.complete(msg);
    this.pump();
    return res;
  }

  /** A pull worker's lease request: answered with the attempts claimed for it, or `[]` (see `PullLanes.lease`). */
  lease(req: LeaseRequest): Promise<LeasedAttempt[]> {
    return this.external ? this.external.lease(req) : Promise.resolve([]);
  }

  /** The client of a lease request went away. */
  leaveLease(waiterId: string): void {
    this.external?.leaveLease(waiterId);
  }

  /** Attempts whose lease answer never reached its client: retried free. */
  async leaseUndelivered(attempts: Array<{ taskId: string; attempt: number }>): Promise<void> {
    await this.external?.leaseUndelivered(attempts);
  }

  /** Another node's pull traffic (cluster mode; see `PullLanes.remote`). */
  remotePull(msg: RemotePull): void {
    this.external?.remotePull(msg);
  }

  abort(msg: { taskId: string; attempt: number }): void {
    if (this.external?.abort(msg) || this.ahead?.abort(msg.taskId, msg.attempt)) return;
    const run = runningAttempt(this.running, msg.taskId, msg.attempt);
    if (!run) return;
    const slot = this.pools.get(run.workerId);
    if (slot) this.outbox.afterRuns(slot, () => slot.ref.tell('abort', msg)); // never ahead of the attempt's `run`
    this.watchdog.cancelSent(msg.taskId, msg.attempt); // a handler that does not stop gets its process killed
  }

  /**
   * Finished attempts from a worker. Their credits return at once, except those of attempts whose
   * retry is due immediately: those come back only after the retry is in the ready queue, so the
   * freed slot cannot go to a lower-priority task ahead of it.
   */
  async completed(msg: { workerId: string; pid: number; results: WorkResult[] }): Promise<void> {
    // The message crosses a channel a handler can also write to (`process.send`): one without its
    // worker's id is not a worker's report.
    if (typeof msg?.workerId !== 'string') {
      this.deps.log.warn('a report without a worker id came on a worker channel; it is ignored');
      return;
    }
    const { results: reported, refused } = wellFormedResults(msg.results);
    if (refused > 0)
      this.deps.log.warn(
        { worker_id: msg.workerId, refused },
        'worker reported attempts in a shape not its own; those entries are ignored',
      );
    const from = this.pools.get(msg.workerId);
    if (from?.unanswered && from.pid === msg.pid) {
      this.pools.answered(from);
      this.pump();
    }
    this.watchdog.reported(msg.workerId, reported);
    // An outcome reported while its handler still runs (aborted) waits for the handler to stop.
    const results = this.settling.hold(this.running, msg.workerId, reported);
    if (results.length > 0) await this.ended(msg.workerId, msg.pid, results);
  }

  /** Records attempts of a worker that ended, giving back their credits (see {@link completed}). */
  private async ended(workerId: string, pid: number, results: FinishedAttempt[]): Promise<void> {
    const slot = this.pools.get(workerId);
    const live = slot !== undefined && slot.pid === pid;
    const now = this.deps.clock.now();
    const completions = this.decide(results, now, workerId);
    const held = completions.filter((c) => c.state === 'RETRYING' && (c.retryAt ?? 0) <= now).length;
    if (live) slot.credits += completions.length - held;
    this.pump();
    await this.record(completions, now);
    if (live) slot.credits += held;
    this.pump();
  }

  /** A graceful stop: nothing new starts; resolves once what runs has ended, or at the grace's end (ShutdownDrain). */
  drain(msg: { graceMs: number }): Promise<DrainResult> {
    this.shutdown.begin();
    this.ahead?.releaseAll(); // held attempts are not sent any more: free retries at their due time
    this.external?.drain(); // waiting lease requests are answered `[]`
    this.pools.disableRespawn(); // pings go on: running attempts may still report
    return this.shutdown.wait(msg.graceMs);
  }

  stats(): DispatcherMessages['stats']['res'] {
    return {
      ready: this.pools.readySize,
      running: this.running.size,
      workers: this.pools.snapshot().map((w) => ({ id: w.id, pid: w.pid, credits: w.credits, pool: w.pool, unanswered: w.unanswered })),
      external: this.external?.stats() ?? [],
    };
  }

  /**
   * Gives the workers of every pool with free credits batches of their pool's ready tasks allowed
   * to start now, least loaded worker first (`DispatchPool.fill`). When work is left only
   * behind empty token buckets, one timer wakes the pump at the next token (no polling).
   * Nothing is claimed while the store has a fault (its recovery pumps again).
   */
  private pump(): void {
    if (this.deps.store.health.fault) return;
    const { config, clock } = this.deps;
    const now = clock.now();
    // Attempts claimed ahead are sent at their due time, during a drain too (they are claimed).
    if (this.ahead) this.ahead.release(now, this.pools.all());
    if (this.shutdown.draining) return this.release.arm(this.ahead?.nextDueAfter(now) ?? null);
    for (const pool of this.pools.all()) {
      const idleCredits = pool.fill(
        now,
        config.workerBatchMax,
        (slot, entries) => void this.claims.claimAndSend(slot, entries, pool.ready, now),
      );
      if (idleCredits && pool.ready.size > 0) this.release.arm(pool.ready.nextReleaseAt(now));
    }
    if (this.external) this.release.arm(this.external.pump(now));
    if (this.ahead) {
      this.ahead.claim(now);
      this.release.arm(this.ahead.nextDueAfter(now));
    }
  }

  /**
   * A worker's process was replaced: its attempts are lost, charged (`worker_lost`, with how the old
   * process exited when that was seen), or retried free when this dispatcher had killed the process
   * to stop another attempt (`recycled`).
   */
  private loseAttemptsOf(workerId: string, exit: ProcessExit | null, recycled: boolean): void {
    this.watchdog.workerReplaced(workerId);
    this.ahead?.workerReplaced(workerId);
    const lost = [...this.running.values()].filter((r) => r.workerId === workerId);
    const outcome = () => (recycled ? recycledOutcome('sent to it while it restarted') : lostOutcome(exit));
    const outcomeOf = (r: RunningAttempt) => this.settling.outcomeOf(r.task.id, r.task.attempt) ?? outcome();
    void this.finish(lost.map((r) => ({ id: r.task.id, attempt: r.task.attempt, outcome: outcomeOf(r), durationMs: 0 })));
  }

  /** Records finished attempts, then dispatches again. */
  private async finish(results: FinishedAttempt[]): Promise<void> {
    const now = this.deps.clock.now();
    await this.record(this.decide(results, now), now);
    this.pump();
  }

  /**
   * Applies the retry policy to attempts this dispatcher is running (on `fromWorker`, when given)
   * and forgets them; any other report is stale and only counted.
   */
  private decide(results: FinishedAttempt[], now: number, fromWorker?: string): AttemptCompletion[] {
    const { metrics } = this.deps;
    this.settling.forget(results);
    return takeFinished(
      this.running,
      results,
      now,
      {
        releaseKey: (run, at) => this.pools.poolOf(run.task.taskType).ready.releaseKey(run.concurrencyKey as string, at),
        stale: () => metrics.staleCompletions.inc(),
        observe: (ms) => metrics.duration.observe(ms / 1000),
      },
      fromWorker,
    );
  }

  /** Writes completions through the {@link CompletionRecorder}, then answers drain waiters once idle. */
  private async record(completions: AttemptCompletion[], now: number): Promise<CompletionResult[] | null> {
    const results = completions.length > 0 ? await this.recorder.record(completions, now) : [];
    this.shutdown.settle();
    return results;
  }

  /**
   * Nothing runs, no claim is in flight (a claim answered during a drain still runs) and no
   * completion waits for a store that may still take it (kept completions do not hold a drain
   * once the store has a fault that is not recoverable: no write will ever succeed).
   */
  private idle(): boolean {
    const fault = this.deps.store.health.fault;
    const unwritable = fault !== null && !fault.recoverable;
    return this.running.size === 0 && this.claims.pending === 0 && (this.recorder.unwrittenCount === 0 || unwritable) && !this.ahead?.busy;
  }
}
