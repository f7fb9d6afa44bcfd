import type { Logger } from 'pino';
import type { Config } from '../../config';
import { planFirings } from '../../domain/cron/catch-up';
import { CronRecord, cronIdOfInstance } from '../../domain/cron/cron-definition';
import { CronSchedule, parseCronSchedule } from '../../domain/cron/cron-schedule';
import { Clock } from '../../domain/clock';
import { WallWake } from '../../domain/wall-wake';
import { MinHeap } from '../../domain/min-heap';
import { SerialPump } from '../../domain/serial-pump';
import { DueEntry, NewTask } from '../../domain/task';
import { SchedulerMetrics } from '../../observability/metrics';
import { CronFiring, CronFiringResult } from '../../storage/cron-store';
import { Store } from '../../storage/store';
import { StoreUnavailableError } from '../../domain/errors';

/** While the store cannot take writes, a due firing is tried again at most this often (ms). */
const STORE_FAULT_RETRY_MS = 1000;
import { buildCronInstance } from './cron-instance';
import type { SubmissionSpan, TaskSpans } from '../../observability/task-spans';

export interface CronEvaluatorDeps {
  store: Store;
  clock: Clock;
  config: Config;
  metrics: SchedulerMetrics;
  log: Logger;
  /** New instances ready to run (hand them to their partition owners). */
  onInstances(entries: DueEntry[]): void;
  /** RUNNING instances cancelled by `cancel_running` (abort their handlers). */
  onAborts(aborts: Array<{ taskId: string; attempt: number }>): void;
  /** Tracing configured: each instance gets a `fire` span, the root of its trace. Absent or null: none. */
  spans?: TaskSpans | null;
}

interface WindowEntry {
  cron: CronRecord;
  schedule: CronSchedule;
}

/** Most firings sent to the store in one operation. */
const FIRE_CHUNK = 500;

/**
 * Fires cron definitions on time (docs/DESIGN.md §7). Keeps the enabled definitions due within
 * `cronHorizonMs` in a min-heap keyed by next fire time, with one timer to the earliest (or to the
 * window reload, every half horizon). At a fire time it plans the firings (catch-up.ts), builds
 * the instances and asks the store to apply them: a compare-and-set on next_fire_time and
 * version, so any number of evaluators on one store fire each instant once. Definitions edited
 * here arrive through {@link changed}; edits by another process are seen at the next reload or
 * when a compare-and-set fails. Releases the queued instances of `queue` crons, and the instance
 * a `cancel_running` firing queued behind a running one, when an instance ends
 * ({@link instancesEnded}; also swept at each reload).
 *
 * Uses only the injected clock; every store call gets `now`. One pump runs at a time.
 */
export class CronEvaluator {
  private readonly window = new Map<string, WindowEntry>();
  private readonly heap = new MinHeap<{ at: number; id: string }>((a, b) => a.at - b.at);
  private windowEnd = -Infinity;
  private reloadAt = -Infinity;
  /** The last reload was cut at `cronWindowMax`: definitions due after {@link windowEnd}, or at it beyond the cut, were left in the store. */
  private truncated = false;
  /** A firing applied since the last reload (so an emptied, truncated window is worth reloading at once). */
  private firedSinceReload = false;
  private readonly changedIds = new Set<string>();
  private readonly endedCrons = new Set<string>();
  private readonly wake: WallWake;
  private stopped = false;
  private readonly pumper: SerialPump;

  constructor(private readonly deps: CronEvaluatorDeps) {
    this.wake = new WallWake(deps.clock, () => this.pump());
    this.pumper = new SerialPump(() => this.pumpOnce(), {
      // A store fault is logged once, by the store's health.
      onError: (err) => (err instanceof StoreUnavailableError ? undefined : deps.log.error({ err }, 'cron evaluator pass failed')),
      onIdle: () => this.arm(),
      stopped: () => this.stopped,
    });
  }

  /** Loads the window and starts firing. */
  start(): void {
    this.stopped = false;
    this.pump();
  }

  /** Stops firing (the timer is cleared; a firing in progress completes). */
  stop(): void {
    this.stopped = true;
    this.wake.clear();
  }

  /** A definition was created, edited or deleted in this process: re-read it. */
  changed(cronId: string): void {
    this.changedIds.add(cronId);
    this.pump();
  }

  /** These tasks reached a terminal state; those that are cron instances may release queued ones. */
  instancesEnded(taskIds: string[]): void {
    let any = false;
    for (const id of taskIds) {
      const cronId = cronIdOfInstance(id);
      if (cronId) {
        this.endedCrons.add(cronId);
        any = true;
      }
    }
    if (any) this.pump();
  }

  /** Resolves when no pump is running or queued (tests, shutdown). */
  settled(): Promise<void> {
    return this.pumper.settled();
  }

  /** Definitions in the window (diagnostics, tests). */
  get windowSize(): number {
    return this.window.size;
  }

  private pump(): void {
    this.pumper.trigger();
  }

  private async pumpOnce(): Promise<void> {
    const { clock, store } = this.deps;
    if (clock.now() >= this.reloadAt) await this.reload();
    if (this.changedIds.size > 0) {
      const ids = [...this.changedIds];
      this.changedIds.clear();
      for (const id of ids) await this.refresh(id);
    }
    if (this.endedCrons.size > 0) {
      const ids = [...this.endedCrons];
      this.endedCrons.clear();
      const released = await store.releaseQueuedInstances(ids, clock.now());
      if (released.length > 0) this.deps.onInstances(released);
    }
    await this.fireDue();
    // A window cut at cronWindowMax that its firings emptied: read on, and fire what is due now.
    while (this.drained()) {
      await this.reload();
      await this.fireDue();
    }
  }

  /** Fires the definitions of the window due now. */
  private async fireDue(): Promise<void> {
    const now = this.deps.clock.now();
    const due: WindowEntry[] = [];
    for (let top = this.heap.peek(); top && top.at <= now; top = this.heap.peek()) {
      this.heap.pop();
      const entry = this.window.get(top.id);
      if (!entry || entry.cron.nextFireTime !== top.at) continue; // superseded
      this.window.delete(top.id);
      due.push(entry);
    }
    for (let i = 0; i < due.length; i += FIRE_CHUNK) await this.fire(due.slice(i, i + FIRE_CHUNK), now);
  }

  /**
   * A window cut at `cronWindowMax` whose definitions have all fired: what comes next is only in
   * the store, so it is read at once rather than at the half-horizon reload. Without this, more than
   * `cronWindowMax` definitions due at one instant left the rest (and every next fire time of the
   * ones fired) unread until that reload, up to 30 s, and so skipped as misfires. Only after a
   * firing applied: a cut window of definitions that cannot fire (an expression that no longer
   * parses) waits for the reload as before, instead of reading the store in a loop.
   */
  private drained(): boolean {
    return this.truncated && this.firedSinceReload && this.window.size === 0;
  }

  /** Replaces the window with the enabled definitions due within the horizon. */
  private async reload(): Promise<void> {
    const { clock, store, config } = this.deps;
    const now = clock.now();
    const until = now + config.cronHorizonMs;
    const rows = await store.loadDueCrons(until, config.cronWindowMax);
    this.window.clear();
    this.heap.clear();
    const truncated = rows.length >= config.cronWindowMax;
    this.truncated = truncated;
    this.firedSinceReload = false;
    this.windowEnd = truncated ? (rows[rows.length - 1].nextFireTime as number) : until;
    for (const cron of rows) this.admit(cron);
    this.reloadAt = now + Math.max(1, Math.floor(config.cronHorizonMs / 2));
    for (const id of await store.cronsWithQueuedInstances(1000)) this.endedCrons.add(id);
  }

  /** Re-reads one definition and keeps it in the window if it is enabled and due within it. */
  private async refresh(id: string): Promise<void> {
    const cron = await this.deps.store.getCron(id);
    this.window.delete(id);
    if (cron) this.admit(cron);
  }

  /** Adds a definition to the window; `parsed` is its schedule when already known (same expression). */
  private admit(cron: CronRecord, parsed?: CronSchedule): void {
    if (!cron.enabled || cron.nextFireTime === null || cron.nextFireTime > this.windowEnd) return;
    let schedule: CronSchedule;
    try {
      schedule = parsed ?? parseCronSchedule(cron.cronExpression, cron.timezone);
    } catch (err) {
      this.deps.log.error({ err, cronId: cron.id }, 'stored cron expression no longer parses; not fired');
      return;
    }
    this.window.set(cron.id, { cron, schedule });
    this.heap.push({ at: cron.nextFireTime, id: cron.id });
  }

  /** Plans, applies and reports the firings of due definitions. */
  private async fire(due: WindowEntry[], now: number): Promise<void> {
    const { store, log } = this.deps;
    const firings: CronFiring[] = [];
    const byId = new Map<string, WindowEntry>();
    const spans: SubmissionSpan[] = [];
    for (const e of due) {
      try {
        firings.push(this.firingOf(e, now, spans));
        byId.set(e.cron.id, e);
      } catch (err) {
        log.error({ err, cronId: e.cron.id }, 'cron firing could not be planned; retried at the next reload');
      }
    }
    if (firings.length === 0) return;
    let results: CronFiringResult[];
    try {
      results = await store.fireCrons(firings, now);
    } finally {
      const at = this.deps.clock.now();
      for (const span of spans) span.end(at);
    }
    const stale: string[] = [];
    const entries: DueEntry[] = [];
    results.forEach((r, i) => {
      const entry = byId.get(r.cronId) as WindowEntry;
      if (!r.applied) {
        stale.push(r.cronId);
        return;
      }
      this.report(r, now);
      this.firedSinceReload = true;
      entries.push(...r.entries);
      const f = firings[i];
      const last = f.instances.length > 0 ? f.instances[f.instances.length - 1].fireTime : entry.cron.lastFireTime;
      this.admit({ ...entry.cron, nextFireTime: f.nextFireTime, lastFireTime: last }, entry.schedule);
    });
    if (entries.length > 0) this.deps.onInstances(entries); // one message per partition, not per firing
    // `cancel_running` queued the new instance behind a running or pending one. An end normally
    // releases it (instancesEnded, on the node that records the end); trying once here releases
    // it at once behind a pending one cancelled outright, and covers an end recorded elsewhere
    // between this firing's read of the live instances and its insert.
    const queuedBehind = results
      .filter((r, i) => r.applied && firings[i].overlapPolicy === 'cancel_running' && r.entries.length === 0)
      .filter((r) => r.records.some((rec) => rec.outcome !== 'skipped'))
      .map((r) => r.cronId);
    if (queuedBehind.length > 0) {
      const released = await store.releaseQueuedInstances(queuedBehind, this.deps.clock.now());
      if (released.length > 0) this.deps.onInstances(released);
    }
    // Lost a race or read an old version: the store has the truth.
    for (const id of stale) await this.refresh(id);
  }

  /** The firing of a due definition; while tracing, each instance's `fire` span is added to `spans`. */
  private firingOf(e: WindowEntry, now: number, spans: SubmissionSpan[]): CronFiring {
    const { cron, schedule } = e;
    const { config, metrics } = this.deps;
    const plan = planFirings(schedule, {
      due: cron.nextFireTime as number,
      now,
      misfireGraceMs: config.cronMisfireGraceMs,
      catchUp: cron.catchUp,
      maxCatchUp: cron.maxCatchUp,
    });
    if (plan.uncounted > 0) metrics.cronFirings.inc({ outcome: 'skipped', reason: 'misfire' }, plan.uncounted);
    return {
      cronId: cron.id,
      expectedNextFireTime: cron.nextFireTime as number,
      expectedVersion: cron.version,
      nextFireTime: plan.nextFireTime,
      overlapPolicy: cron.overlapPolicy,
      maxQueued: cron.maxCatchUp,
      instances: plan.firings.map((p) => ({
        ...p,
        task: p.outcome === 'skipped' ? null : this.traced(cron.id, buildCronInstance(cron, p.fireTime, now, config), now, spans),
      })),
    };
  }

  /** While tracing, the instance keeps the context of a new `fire` span (added to `spans`). */
  private traced(cronId: string, task: NewTask, now: number, spans: SubmissionSpan[]): NewTask {
    if (!this.deps.spans) return task;
    const span = this.deps.spans.cronFire(cronId, task, now);
    spans.push(span);
    return { ...task, traceparent: span.traceparent };
  }

  private report(r: CronFiringResult, now: number): void {
    const { metrics } = this.deps;
    for (const rec of r.records) {
      metrics.cronFirings.inc({ outcome: rec.outcome, reason: rec.reason ?? 'none' });
      if (rec.outcome === 'created') metrics.cronFireLag.observe(Math.max(0, now - rec.fireTime) / 1000);
    }
    if (r.aborts.length > 0) this.deps.onAborts(r.aborts);
  }

  private arm(): void {
    if (this.stopped) return;
    const next = this.heap.peek();
    const due = Math.min(next ? next.at : Infinity, this.reloadAt);
    const at = this.deps.store.health.fault ? Math.max(due, this.deps.clock.now() + STORE_FAULT_RETRY_MS) : due;
    this.wake.arm(at);
  }
}
