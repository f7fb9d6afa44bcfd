/**
 * Cron definitions (docs/DESIGN.md §7): a schedule plus the task each firing creates. Times are epoch
 * milliseconds (UTC).
 */
import type { Priority, RetryBackoff } from '../task';

export const OVERLAP_POLICIES = ['skip', 'queue', 'cancel_running'] as const;
/**
 * What a firing does while an earlier instance of the same cron is not terminal:
 * `skip` records the firing as skipped; `queue` creates the instance BLOCKED, released when the
 * earlier ones end (Quartz's DisallowConcurrentExecution, Celery beat has no equivalent);
 * `cancel_running` cancels the earlier instance and starts the new one (Kubernetes CronJob
 * `Replace`).
 */
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

export const CATCH_UP_MODES = ['none', 'latest', 'all'] as const;
/** What happens to firings missed by more than the misfire grace (downtime): see catch-up.ts. */
export type CatchUpMode = (typeof CATCH_UP_MODES)[number];

export const FIRE_OUTCOMES = ['created', 'skipped', 'caught_up'] as const;
export type FireOutcome = (typeof FIRE_OUTCOMES)[number];

/** Why a firing was skipped: missed beyond the grace, an instance still running, or a full queue. */
export type SkipReason = 'misfire' | 'overlap' | 'queue_full';

/**
 * The task fields a cron copies into every instance (API names): a task submission without
 * `scheduled_at` and `idempotency_key` (see services/build-task.ts).
 */
export interface TaskTemplate {
  task_type: string;
  payload?: unknown;
  priority?: Priority;
  max_retries?: number;
  retry_backoff?: RetryBackoff;
  retry_delay_seconds?: number;
  max_retry_delay_seconds?: number;
  retry_jitter?: boolean;
  timeout_seconds?: number;
  queue?: string;
  /** Concurrency key of every instance (absent or null: none). */
  concurrency_key?: string | null;
  metadata?: Record<string, unknown> & { tenant_id?: string; correlation_id?: string | null };
}

/** A stored cron definition. */
export interface CronRecord {
  id: string;
  /** Partition the definition belongs to (cluster mode: whose owner evaluates it). */
  partition: number;
  name: string;
  cronExpression: string;
  timezone: string;
  template: TaskTemplate;
  tenantId: string;
  overlapPolicy: OverlapPolicy;
  catchUp: CatchUpMode;
  /** Bound on the missed firings `all` creates (and on skipped ones recorded), and on a `queue`. */
  maxCatchUp: number;
  enabled: boolean;
  /** The next scheduled fire instant; null when the expression never fires again. */
  nextFireTime: number | null;
  lastFireTime: number | null;
  /** Incremented by every change; firing compares it with what the evaluator read. */
  version: number;
  createdAt: number;
  updatedAt: number;
}

/** One fire record: what happened at one scheduled fire time. */
export interface CronFireRecord {
  cronId: string;
  fireTime: number;
  outcome: FireOutcome;
  reason: SkipReason | null;
  taskId: string | null;
  recordedAt: number;
}

/** The deterministic id of the instance fired at `fireTime`: `cron-<cron_id>-<epoch ms>`. */
export function cronInstanceId(cronId: string, fireTime: number): string {
  return `cron-${cronId}-${fireTime}`;
}

/** The cron id inside an instance id, or null when `taskId` is not a cron instance. */
export function cronIdOfInstance(taskId: string): string | null {
  const m = /^cron-(.+)-\d+$/.exec(taskId);
  return m ? m[1] : null;
}
