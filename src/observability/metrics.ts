import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { TASK_STATES, TaskState } from '../domain/task';
import { TenantLabels } from './tenant-labels';
import { FastHistogram } from './fast-histogram';

/** A worker slot as `/metrics` reads it at scrape time (`WorkerSnapshot`). */
export interface WorkerSlotView {
  pool: string;
  id: string;
  pid: number;
  /** Free slots (credits). */
  credits: number;
  /** Slots taken: claimed or running attempts (0 while the process is not running). */
  busy: number;
  /** Its last ping went unanswered (`WorkerSlot.unanswered`): it takes no new attempt. */
  unanswered: boolean;
}

/**
 * The service's Prometheus metrics (docs/DESIGN.md §12; names are a contract). One instance per service,
 * with its own registry: no module-level state.
 */
export class SchedulerMetrics {
  readonly registry = new Registry();
  readonly submitted: Counter<'task_type'>;
  readonly completed: Counter<'task_type' | 'status'>;
  /** When this node last saw an attempt's end of its task committed (Unix seconds, ms resolution). */
  readonly lastFinished: Gauge<string>;
  readonly dispatchLag: FastHistogram;
  readonly duration: FastHistogram;
  readonly depth: Gauge<'state'>;
  readonly deadLetter: Gauge<string>;
  readonly auditFindings: Gauge<'kind'>;
  readonly staleCompletions: Counter<string>;
  readonly workerRestarts: Counter<'worker_id'>;
  readonly workerKills: Counter<'worker_id'>;
  readonly workerRejections: Counter<'worker_id'>;
  readonly purgedTasks: Counter<string>;
  readonly cronFireLag: Histogram<string>;
  readonly rateLimitWaits: Counter<'limit' | 'key'>;
  readonly tenantDispatched: Counter<'tenant'>;
  readonly tenantDispatchLag: FastHistogram<'tenant'>;
  readonly tenantReady: Gauge<'tenant'>;
  /** Bounded tenant label values (see {@link TenantLabels}). */
  readonly tenantLabels: TenantLabels;
  private readyByTenant: () => Iterable<[string, number]> = () => [];
  /** Attempts running per limited concurrency key on this node (read at scrape time). */
  readonly concurrencyRunning: Gauge<'key'>;
  private concurrencySource: () => Iterable<{ key: string; maxRunning: number; running: number }> = () => [];
  readonly cronFirings: Counter<'outcome' | 'reason'>;
  /** Low-priority submissions stored into the overflow hold (state OVERFLOW). */
  readonly overflowAccepted: Counter<string>;
  /** Held tasks released from the overflow hold (to PENDING or SCHEDULED). */
  readonly overflowReleased: Counter<string>;
  readonly overflowDepth: Gauge<string>;
  /** Slots of each worker process by pool, busy and free (read at scrape time). */
  readonly workerSlots: Gauge<'pool' | 'worker_id' | 'state'>;
  readonly workerUnanswered: Gauge<'pool' | 'worker_id'>;
  private workerSource: () => Iterable<WorkerSlotView> = () => [];

  /**
   * @param depthByState reads the number of tasks per state when /metrics is scraped; null when there
   *   is no count yet (the `scheduler_tasks` gauge then has no samples in that scrape). A rejection
   *   (the store is away) counts as null: the scrape still answers, with every other series (the
   *   store's and Redis's health among them) when they matter most.
   * @param maxTenantLabels distinct tenants with their own label in per-tenant metrics (default 50)
   */
  constructor(readDepth: () => Promise<Record<TaskState, number> | null>, maxTenantLabels = 50) {
    const depthByState = () => readDepth().catch(() => null);
    this.tenantLabels = new TenantLabels(maxTenantLabels);
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'scheduler_' });
    this.submitted = new Counter({
      name: 'scheduler_tasks_submitted_total',
      help: 'Tasks accepted and stored, by task type.',
      labelNames: ['task_type'],
      registers,
    });
    this.completed = new Counter({
      name: 'scheduler_tasks_completed_total',
      help: 'Tasks that reached a terminal state, by task type and state.',
      labelNames: ['task_type', 'status'],
      registers,
    });
    this.lastFinished = new Gauge({
      name: 'scheduler_last_task_finished_timestamp_seconds',
      help: 'Unix time at which this node last had an attempt that ended its task committed (the instant counted in scheduler_tasks_completed_total); 0 before the first.',
      registers,
    });
    this.dispatchLag = new FastHistogram({
      name: 'scheduler_dispatch_lag_seconds',
      help: 'Start of an attempt minus the time it was due.',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.duration = new FastHistogram({
      name: 'scheduler_task_duration_seconds',
      help: 'Handler run time of finished attempts.',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
      registers,
    });
    this.depth = new Gauge({
      name: 'scheduler_tasks',
      help: 'Tasks in the store by state (queue depth).',
      labelNames: ['state'],
      registers,
      async collect() {
        const counts = await depthByState();
        if (counts === null) return; // no count yet (the first is still running): no samples
        for (const s of TASK_STATES) this.set({ state: s }, counts[s] ?? 0);
      },
    });
    this.auditFindings = new Gauge({
      name: 'scheduler_audit_findings',
      help: 'What the last audit found: overdue waiting tasks, RUNNING attempts with an expired lease, BLOCKED workflow tasks in limbo (must be 0).',
      labelNames: ['kind'],
      registers,
    });
    this.deadLetter = new Gauge({
      name: 'scheduler_dead_letter_tasks',
      help: 'Tasks in the dead-letter queue (DEAD).',
      registers,
      async collect() {
        const counts = await depthByState();
        if (counts !== null) this.set(counts.DEAD ?? 0); // else the last value (0 before the first count)
      },
    });
    this.staleCompletions = new Counter({
      name: 'scheduler_stale_completions_total',
      help: 'Completions refused because the attempt was no longer RUNNING (late or duplicate).',
      registers,
    });
    this.workerKills = new Counter({
      name: 'scheduler_worker_kills_total',
      help: 'Worker processes killed because a handler overran its timeout and grace period.',
      labelNames: ['worker_id'],
      registers,
    });
    this.workerRejections = new Counter({
      name: 'scheduler_worker_unhandled_rejections_total',
      help: 'Promise rejections nothing handled in a worker process (most likely a handler that did not await a promise); the worker goes on.',
      labelNames: ['worker_id'],
      registers,
    });
    this.purgedTasks = new Counter({
      name: 'scheduler_purged_tasks_total',
      help: 'Finished tasks deleted by retention (older than resultRetentionMs), their history with them.',
      registers,
    });
    this.workerRestarts = new Counter({
      name: 'scheduler_worker_restarts_total',
      help: 'Worker processes that came back after a crash.',
      labelNames: ['worker_id'],
      registers,
    });
    this.tenantDispatched = new Counter({
      name: 'scheduler_tenant_dispatched_total',
      help: 'Attempts started, per tenant (at most maxTenantLabels tenants; the rest as "_other").',
      labelNames: ['tenant'],
      registers,
    });
    this.tenantDispatchLag = new FastHistogram({
      name: 'scheduler_tenant_dispatch_lag_seconds',
      help: 'Start of an attempt minus the time it was due, per tenant (bounded labels as above).',
      labelNames: ['tenant'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    const readyByTenant = () => this.readyByTenant();
    const labels = this.tenantLabels;
    this.tenantReady = new Gauge({
      name: 'scheduler_tenant_ready_tasks',
      help: "Tasks in the dispatcher's ready queues, per tenant (bounded labels as above).",
      labelNames: ['tenant'],
      registers,
      collect() {
        this.reset();
        const sums = new Map<string, number>();
        for (const [tenant, n] of readyByTenant()) sums.set(labels.of(tenant), (sums.get(labels.of(tenant)) ?? 0) + n);
        for (const [tenant, n] of sums) this.set({ tenant }, n);
      },
    });
    this.rateLimitWaits = new Counter({
      name: 'scheduler_rate_limit_waits_total',
      help: 'Times a queue with ready tasks found its token bucket empty and waited (limit: task_type or tenant; key: its name). The tasks wait and spend no retries (PENDING, or SCHEDULED/RETRYING for up to twice dueMarkDelayMs).',
      labelNames: ['limit', 'key'],
      registers,
    });
    const concurrency = () => this.concurrencySource();
    this.concurrencyRunning = new Gauge({
      name: 'scheduler_concurrency_running',
      help: 'Attempts this node runs (or is claiming) per concurrency key that has a limit (the limit caps them across the cluster).',
      labelNames: ['key'],
      registers,
      collect() {
        this.reset();
        for (const { key, running } of concurrency()) this.set({ key }, running);
      },
    });
    const workers = () => this.workerSource();
    this.workerSlots = new Gauge({
      name: 'scheduler_worker_slots',
      help: 'Attempt slots of each worker process, by pool: busy (claimed or running) and free; 0 and 0 while the process is down.',
      labelNames: ['pool', 'worker_id', 'state'],
      registers,
      collect() {
        this.reset();
        for (const w of workers()) {
          this.set({ pool: w.pool, worker_id: w.id, state: 'busy' }, w.busy);
          this.set({ pool: w.pool, worker_id: w.id, state: 'free' }, w.pid === 0 ? 0 : w.credits);
        }
      },
    });
    this.workerUnanswered = new Gauge({
      name: 'scheduler_worker_unanswered',
      help: "1 while a worker process's last ping went unanswered (a handler holding its event loop, or the process stopped): it takes no new attempt meanwhile; else 0.",
      labelNames: ['pool', 'worker_id'],
      registers,
      collect() {
        this.reset();
        for (const w of workers()) this.set({ pool: w.pool, worker_id: w.id }, w.unanswered ? 1 : 0);
      },
    });
    this.cronFireLag = new Histogram({
      name: 'scheduler_cron_fire_lag_seconds',
      help: 'When a cron firing was made minus its scheduled fire time (on-time firings).',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.cronFirings = new Counter({
      name: 'scheduler_cron_firings_total',
      help: 'Cron fire records by outcome (created, caught_up, skipped) and skip reason (misfire, overlap, queue_full; none otherwise).',
      labelNames: ['outcome', 'reason'],
      registers,
    });
    this.overflowAccepted = new Counter({
      name: 'scheduler_overflow_accepted_total',
      help: 'Low-priority submissions accepted into the overflow hold (202, status OVERFLOW) instead of refused while shedding load.',
      registers,
    });
    this.overflowReleased = new Counter({
      name: 'scheduler_overflow_released_total',
      help: 'Tasks released from the overflow hold (to PENDING, or SCHEDULED for a later scheduled_at) once the waiting depth fell under the low-water mark.',
      registers,
    });
    this.overflowDepth = new Gauge({
      name: 'scheduler_overflow_tasks',
      help: 'Tasks in the overflow hold (OVERFLOW), as scheduler_tasks{state="OVERFLOW"}.',
      registers,
      async collect() {
        const counts = await depthByState();
        if (counts !== null) this.set(counts.OVERFLOW ?? 0); // else the last value (0 before the first count)
      },
    });
  }

  /** Where the ready depth per tenant is read at scrape time (the dispatcher registers itself). */
  setReadySource(source: () => Iterable<[string, number]>): void {
    this.readyByTenant = source;
  }

  /** Where the worker slots are read at scrape time (the dispatcher registers them). */
  setWorkerSource(source: () => Iterable<WorkerSlotView>): void {
    this.workerSource = source;
  }

  /** Where the running count per limited concurrency key is read at scrape time (the dispatcher registers it). */
  setConcurrencySource(source: () => Iterable<{ key: string; maxRunning: number; running: number }>): void {
    this.concurrencySource = source;
  }
}
