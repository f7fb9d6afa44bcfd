import type { ActorContext } from '../runtime/comedy';
import { attemptCompletion } from '../../domain/attempt-completion';
import { ReadyQueues } from '../../domain/ready-queues';
import { ClaimedTask, DueEntry } from '../../domain/task';
import { AttemptCompletion, CompletionResult } from '../../storage/store';
import { TimerHandle } from '../../domain/clock';
import { DEPS_RESOURCE, SchedulerDeps } from '../deps';
import { WorkerPool, WorkerSlot } from './worker-pool';
import { WorkItem, WorkResult } from '../protocol';
import { observeStarts, workItemOf } from './work-item';
import { queuesOf } from '../../observability/task-spans';
import { returnToOwners } from './claim-batch';
import { RunOutbox } from './run-outbox';
import { ExternalLanes } from './external-lanes';
import type { ExternalCompletion, ExternalCompletionResult } from '../../services/ports';
import { externalQueueSpecs } from '../../domain/external-queues';
import { AttemptWatchdog, FinishedAttempt, lostOutcome, RunningAttempt } from './attempt-watchdog';
import { recycledOutcome } from '../../domain/lost-attempt';
import { RunningReports } from './running-reports';
import { CompletionRecorder } from './completion-recorder';
import type { CheckpointReply, DispatcherMessages, ProgressItem } from '../protocol';

/** Longest timer delay Node accepts (2^31 − 1 ms, about 24.8 days); a later wake is re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The dispatcher (docs/DESIGN.md §5): ready tasks per tenant (priority inside, weighted round-robin
 * between), worker credits (a worker gets work only for its free slots), claims (PENDING →
 * RUNNING, batched per worker message), and completions (the retry policy decides the next state;
 * the store applies it as a compare-and-set). Retries go back to their partition owner.
 */
export class DispatcherActor {
  static inject(): string[] {
    return [DEPS_RESOURCE];
  }

  private self: ActorContext | null = null;
  private readonly ready: ReadyQueues;
  private releaseTimer: TimerHandle | null = null;
  private releaseAt = Infinity;
  private readonly workers: WorkerPool;
  private readonly running = new Map<string, RunningAttempt>();
  private draining = false;
  private drainWaiters: Array<() => void> = [];
  /** A pump is due at the end of this turn ({@link enqueue}). */
  private pumpScheduled = false;
  /** The `run` messages of this iteration's claims, one per worker. */
  private readonly outbox = new RunOutbox((slot, items) => this.sendRun(slot, items));
  /** Claims sent to the store and not yet answered (a drain waits for them too). */
  private claiming = 0;
  /** Overrun check and lease sweep over `running`. */
  private readonly watchdog: AttemptWatchdog;
  /** External queues (Redis streams) when configured: they replace "send to a worker" for their tasks. */
  private readonly external: ExternalLanes | null = null;
  /** Checkpoints and progress of the attempts the workers run. */
  private readonly reports: RunningReports;
  /** Writes completions and routes what they released, what waits again and which cron instances ended. */
  private readonly recorder: CompletionRecorder;

  constructor(private readonly deps: SchedulerDeps) {
    const { limits, config, metrics } = deps;
    this.ready = new ReadyQueues({
      weightOf: limits.weightOf,
      agingMs: config.priorityAgingMs,
      typeBucket: limits.typeBucket,
      tenantBucket: limits.tenantBucket,
      onWait: (kind, key) => metrics.rateLimitWaits.inc({ limit: kind, key }),
      concurrency: limits.concurrency,
    });
    limits.onChange(() => this.pump());
    // A key's limit changed or shared slots arrived: what was set aside on it is tried again (at
    // most a limit's worth: the rest could not start anyway, and a wake may come every poll).
    limits.concurrency.onChange((key) => {
      this.ready.reconsiderKey(key, limits.concurrency.maxRunningOf(key) ?? Infinity);
      this.pump();
    });
    metrics.setConcurrencySource(() => limits.concurrency.snapshot());
    metrics.setReadySource(() => [...this.ready.tenants()].map((t) => [t, this.ready.sizeOf(t)] as [string, number]));
    this.recorder = new CompletionRecorder(deps, {
      settled: (completions) => this.external?.settled(completions),
      ready: (entry) => this.addReady(entry),
    });
    const specs = externalQueueSpecs(config);
    if (deps.streams && specs.size > 0) {
      this.external = new ExternalLanes(deps, deps.streams, specs, { record: (c, now) => this.record(c, now), pump: () => this.pump() });
    }
    this.workers = new WorkerPool(
      deps,
      (slot, cause) => {
        this.loseAttemptsOf(slot.id, cause === 'killed');
        this.pump();
      },
      { onAlive: (slot) => void this.watchdog.alive(slot.id) },
    );
    this.reports = new RunningReports(deps, (taskId, attempt, workerId) => {
      const run = this.running.get(taskId);
      return run !== undefined && run.task.attempt === attempt && run.workerId === workerId;
    });
    this.watchdog = new AttemptWatchdog(deps, {
      running: this.running,
      workers: this.workers,
      draining: () => this.draining,
      hasExternal: this.external !== null,
      finish: (results) => this.finish(results),
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
    await this.workers.start(this.self as ActorContext);
    await this.external?.start();
    this.watchdog.start();
    this.pump();
  }

  /** A worker's report of a promise rejection nothing handled there (it logged it and goes on): counted. */
  unhandledRejection(msg: { workerId: string; pid: number }): void {
    this.deps.metrics.workerRejections.inc({ worker_id: msg.workerId });
  }

  /** A worker's running attempts are alive: extend their leases (only attempts it really runs). */
  async heartbeat(msg: { workerId: string; pid: number; attempts: Array<{ id: string; attempt: number }> }): Promise<void> {
    const items = msg.attempts
      .filter((a) => {
        const run = this.running.get(a.id);
        return run !== undefined && run.workerId === msg.workerId && run.task.attempt === a.attempt;
      })
      .map((a) => ({ taskId: a.id, attempt: a.attempt }));
    if (items.length === 0) return;
    const { store, clock, config, log } = this.deps;
    await store.extendLeases(items, clock.now() + config.leaseMs).catch((err) => log.error({ err }, 'lease extension failed'));
  }

  /** Handlers of aborted attempts stopped after their outcome was reported: their process need not be killed. */
  settled(msg: { workerId: string; pid: number; attempts: Array<{ id: string; attempt: number }> }): void {
    this.watchdog.settled(msg.workerId, msg.attempts);
  }

  /** A handler's `ctx.checkpoint(value)`: stored as a compare-and-set on its attempt; answered after the commit. */
  checkpoint(msg: { workerId: string; pid: number; taskId: string; attempt: number; value: unknown }): Promise<CheckpointReply> {
    return this.reports.checkpoint(msg);
  }

  /** The latest `ctx.progress(value)` of a worker's attempts (throttled there). */
  progress(msg: { workerId: string; pid: number; reports: ProgressItem[] }): Promise<void> {
    return this.reports.progress(msg);
  }

  /** comedy hook at system shutdown. */
  destroy(): void {
    this.external?.stop();
    this.workers.stop();
    this.workers.killLeftovers();
    this.watchdog.stop();
    if (this.releaseTimer) this.deps.clock.clearTimeout(this.releaseTimer);
    this.releaseTimer = null;
  }

  /**
   * Due entries from a partition owner join the ready queues; one pump runs once the turn's
   * messages are in (the hand-outs of many owners arrive together), so they are claimed in full
   * batches instead of a claim per message.
   */
  enqueue(entries: DueEntry[]): void {
    for (const e of entries) this.addReady(e);
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** A ready task joins the ready queues of its worker pool, or of its external queue. */
  private addReady(e: DueEntry): void {
    if (this.external?.handles(e)) this.external.add(e);
    else this.ready.add(e);
  }

  /** An external consumer's report: recorded like a worker's report, then dispatch goes on. */
  async completeExternal(msg: ExternalCompletion): Promise<ExternalCompletionResult> {
    if (!this.external) return { applied: false, state: null };
    const res = await this.external.complete(msg);
    this.pump();
    return res;
  }

  abort(msg: { taskId: string; attempt: number }): void {
    if (this.external?.abort(msg)) return;
    const run = this.running.get(msg.taskId);
    if (!run || run.task.attempt !== msg.attempt) return;
    this.workers.get(run.workerId)?.ref.tell('abort', msg);
    this.watchdog.cancelSent(msg.taskId, msg.attempt); // a handler that does not stop gets its process killed
  }

  /**
   * Finished attempts from a worker. Their credits return at once, except those of attempts whose
   * retry is due immediately: those come back only after the retry is in the ready queue, so the
   * freed slot cannot go to a lower-priority task ahead of it.
   */
  async completed(msg: { workerId: string; pid: number; results: WorkResult[] }): Promise<void> {
    const slot = this.workers.get(msg.workerId);
    const live = slot !== undefined && slot.pid === msg.pid;
    const now = this.deps.clock.now();
    this.watchdog.reported(msg.workerId, msg.results);
    const completions = this.decide(msg.results, now, msg.workerId);
    const held = completions.filter((c) => c.state === 'RETRYING' && (c.retryAt ?? 0) <= now).length;
    if (live) slot.credits += completions.length - held;
    this.pump();
    await this.record(completions, now);
    if (live) slot.credits += held;
    this.pump();
  }

  drain(msg: { graceMs: number }): Promise<{ stillRunning: number }> {
    this.draining = true;
    this.workers.disableRespawn(); // pings go on: running attempts may still report
    if (this.idle()) return Promise.resolve({ stillRunning: 0 });
    return new Promise((resolve) => {
      const done = () => resolve({ stillRunning: this.running.size });
      const timer = this.deps.clock.setTimeout(done, msg.graceMs);
      this.drainWaiters.push(() => {
        this.deps.clock.clearTimeout(timer);
        done();
      });
    });
  }

  stats(): DispatcherMessages['stats']['res'] {
    return {
      ready: this.ready.size,
      running: this.running.size,
      workers: [...this.workers.all()].map((w) => ({ id: w.id, pid: w.pid, credits: w.credits })),
    };
  }

  /**
   * Gives every worker with free credits a batch of ready tasks allowed to start now. When work is
   * left only behind empty token buckets, one timer wakes the pump at the next token (no polling).
   */
  private pump(): void {
    if (this.draining) return;
    const { config, clock } = this.deps;
    const now = clock.now();
    let idleCredits = false;
    for (const slot of this.workers.all()) {
      while (slot.credits > 0 && slot.pid !== 0 && this.ready.size > 0) {
        const entries = this.ready.take(Math.min(slot.credits, config.workerBatchMax), now);
        if (entries.length === 0) break;
        slot.credits -= entries.length;
        void this.claimAndSend(slot, entries);
      }
      if (slot.credits > 0 && slot.pid !== 0) idleCredits = true;
    }
    if (idleCredits && this.ready.size > 0) this.armRelease(this.ready.nextReleaseAt(now));
    if (this.external) this.armRelease(this.external.pump(now));
  }

  private armRelease(at: number | null): void {
    if (at === null || at >= this.releaseAt) return;
    if (this.releaseTimer) this.deps.clock.clearTimeout(this.releaseTimer);
    this.releaseAt = at;
    this.releaseTimer = this.deps.clock.setTimeout(
      () => {
        this.releaseTimer = null;
        this.releaseAt = Infinity;
        this.pump();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, at - this.deps.clock.now())),
    );
  }

  private async claimAndSend(slot: WorkerSlot, entries: DueEntry[]): Promise<void> {
    const { store, clock, metrics, log } = this.deps;
    const now = clock.now();
    let claimed: ClaimedTask[] = [];
    this.claiming++;
    try {
      // Cluster mode: each task's fencing token is its partition's lease epoch (-1: not held, not claimed).
      const epochs = this.deps.cluster?.fences.tokensFor(entries.map((e) => e.partition));
      // Each entry's seq is a lookup hint (SQLite: the rowid); the id still decides.
      const seqs = entries.map((e) => e.seq);
      claimed = await store.claimTasks(
        entries.map((e) => e.id),
        slot.id,
        now,
        this.deps.config.leaseMs,
        epochs,
        seqs,
      );
    } catch (err) {
      log.error({ err }, 'claim failed; the tasks stay waiting and will be reloaded');
    } finally {
      this.claiming--;
    }
    const refused = returnToOwners(this.deps.router, entries, claimed, now);
    slot.credits += entries.length - claimed.length;
    this.ready.refund(refused, now);
    if (claimed.length === 0) {
      this.settleDrain();
      return this.pump();
    }
    const items: WorkItem[] = [];
    // Tracing configured: each attempt's queue wait (due → claim) becomes a span of its task's trace.
    const queues = this.deps.spans ? queuesOf(entries) : null;
    if (queues) this.deps.spans?.queueWaits(claimed, queues);
    // Only claims with keyed tasks pay for the id → key map (most claims have none).
    const keys = entries.some((e) => e.concurrencyKey !== undefined)
      ? new Map(entries.filter((e) => e.concurrencyKey !== undefined).map((e) => [e.id, e.concurrencyKey as string]))
      : null;
    for (const t of claimed) {
      const concurrencyKey = keys?.get(t.id);
      this.running.set(t.id, { task: t, workerId: slot.id, ...(concurrencyKey !== undefined ? { concurrencyKey } : {}) });
      this.watchdog.attemptsStarted();
      items.push(workItemOf(t, queues ? { queue: queues.get(t.id) } : undefined));
    }
    observeStarts(metrics, claimed);
    this.outbox.add(slot, items);
    // Refused entries gave back their credits and their keys' slots: the tasks set aside may start.
    if (refused.length > 0) this.pump();
  }

  /** One `run` message (the attempts of a turn's claims for `slot`, gathered by {@link RunOutbox}). */
  private sendRun(slot: WorkerSlot, items: WorkItem[]): void {
    slot.ref.tell('run', { tasks: items }, (err) => {
      this.deps.log.warn({ err, worker_id: slot.id }, 'could not reach worker; its attempts are lost');
      void this.finish(items.map((i) => ({ id: i.id, attempt: i.attempt, outcome: lostOutcome(), durationMs: 0 })));
    });
  }

  /**
   * A worker's process was replaced: its attempts are lost, charged (`worker_lost`), or retried
   * free when this dispatcher had killed the process to stop another attempt (`recycled`).
   */
  private loseAttemptsOf(workerId: string, recycled: boolean): void {
    this.watchdog.workerReplaced(workerId);
    const lost = [...this.running.values()].filter((r) => r.workerId === workerId);
    const outcome = () => (recycled ? recycledOutcome('sent to it while it restarted') : lostOutcome());
    void this.finish(lost.map((r) => ({ id: r.task.id, attempt: r.task.attempt, outcome: outcome(), durationMs: 0 })));
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
    const completions: AttemptCompletion[] = [];
    for (const r of results) {
      const run = this.running.get(r.id);
      if (!run || run.task.attempt !== r.attempt || (fromWorker !== undefined && run.workerId !== fromWorker)) {
        // A late or duplicated report (e.g. attempt 1 after attempt 2 started): refused, counted.
        this.deps.metrics.staleCompletions.inc();
        continue;
      }
      this.running.delete(r.id);
      if (run.concurrencyKey !== undefined) this.ready.releaseKey(run.concurrencyKey, now);
      const c = attemptCompletion(r.id, r.attempt, r.outcome, run.task.retry, now, Math.round(r.durationMs));
      if (run.task.seq !== undefined) c.seq = run.task.seq; // the row's lookup hint, from its claim
      completions.push(c);
      this.deps.metrics.duration.observe(r.durationMs / 1000);
    }
    return completions;
  }

  /** Writes completions through the {@link CompletionRecorder}, then answers drain waiters once idle. */
  private async record(completions: AttemptCompletion[], now: number): Promise<CompletionResult[] | null> {
    const results = completions.length > 0 ? await this.recorder.record(completions, now) : [];
    this.settleDrain();
    return results;
  }

  /** Nothing runs and no claim is in flight (a claim answered during a drain still runs). */
  private idle(): boolean {
    return this.running.size === 0 && this.claiming === 0;
  }

  /** Answers drain waiters once idle. */
  private settleDrain(): void {
    if (this.idle()) for (const w of this.drainWaiters.splice(0)) w();
  }
}
