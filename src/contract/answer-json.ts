import type { RateLimitJson } from './admin-json';
import type { TaskState } from '../domain/task';
import type { WorkflowStatus } from '../domain/workflow';

/**
 * The answers of the routes that change a task, a workflow or a setting, whose shape the services
 * build inline: typed here so the SDK's client can name them (test/unit/contract-types.test.ts
 * checks the services' answers against these types).
 */

/** `POST /api/v1/tasks/{id}/cancel`: 200 cancelled (`cancelled_at` set), 202 running and being aborted (`cancelled_at` null). */
export interface TaskCancelView {
  task_id: string;
  status: TaskState;
  cancelled_at: string | null;
  cancel_requested: boolean;
}

/** `POST /api/v1/workflows/{id}/cancel`: 200 cancelled, 202 while `running_task_ids` are being aborted. */
export interface WorkflowCancelView {
  workflow_id: string;
  status: WorkflowStatus;
  cancel_requested: true;
  running_task_ids: string[];
}

/** `POST /api/v1/dead-letter/{id}/replay`. */
export interface DeadLetterReplayView {
  task_id: string;
  status: 'PENDING';
}

/** `DELETE /api/v1/dead-letter/{id}`. */
export interface DeadLetterDeleteView {
  task_id: string;
  deleted: true;
}

/** `DELETE /api/v1/cron-tasks/{id}`. */
export interface CronDeleteView {
  cron_id: string;
  deleted: true;
}

/**
 * `DELETE /api/v1/rate-limits/{task_type}`: the stored limit is gone; `rate_limit` is the one now
 * in force, the config file's `rateLimits.<type>` or null (none).
 */
export interface RateLimitDeleteView {
  task_type: string;
  deleted: true;
  rate_limit: RateLimitJson | null;
}

/** `DELETE /api/v1/concurrency-limits/{key}`. */
export interface ConcurrencyLimitDeleteView {
  key: string;
  deleted: true;
}

/** `POST /api/v1/tasks/{id}/complete`: the state the attempt moved the task to. */
export interface CompletionView {
  task_id: string;
  attempt: number;
  status: TaskState;
}

/** `POST /api/v1/tasks/{id}/heartbeat`: the attempt's new lease expiry (ISO-8601 UTC). */
export interface HeartbeatView {
  task_id: string;
  attempt: number;
  lease_expires_at: string;
}

/** `POST /api/v1/tasks/{id}/checkpoint`: when it was stored and its size as JSON text (0: cleared). */
export interface CheckpointSavedView {
  task_id: string;
  attempt: number;
  saved_at: string;
  size_bytes: number;
}

/** `POST /api/v1/tasks/{id}/progress`. */
export interface ProgressSavedView {
  task_id: string;
  attempt: number;
  progress_at: string;
}
