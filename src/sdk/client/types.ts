/**
 * The types of the typed client: request bodies derived from the API's JSON Schemas and the views
 * its routes answer (type-only imports from `src/contract/`, so importing the client loads none of
 * the server), and the client's own options.
 */
import type { ServiceQuery } from '../../contract/types';
import type {
  CronRunsQuery as CronRunsQuerySchema,
  DeadLetterQuery as DeadLetterQuerySchema,
  GetCronQuery,
  ListCronsQuery as ListCronsQuerySchema,
  ListTasksQuery as ListTasksQuerySchema,
  ListWorkflowsQuery as ListWorkflowsQuerySchema,
} from '../../contract/types';

export type {
  ConcurrencyLimitPutBody,
  CronCreateBody,
  CronPatchBody,
  CronPreviewBody,
  ExternalCheckpointBody,
  ExternalCompletionBody,
  ExternalHeartbeatBody,
  ExternalProgressBody,
  RateLimitPutBody,
  TaskBatchBody,
  TaskPatchBody,
  TaskSubmissionBody,
  TenantPutBody,
  WorkflowSubmissionBody,
} from '../../contract/types';
export type { AttemptView, CheckpointView, SubmitAck, TaskPageView, TaskView } from '../../contract/task-json';
export type { AttemptLogJson as AttemptLogView, AttemptLogLineJson as AttemptLogLineView } from '../../contract/attempt-log-json';
export type { CronPageView, CronPreviewView, CronRunPageView, CronRunView, CronView } from '../../contract/cron-json';
export type { WorkflowAck, WorkflowPageView, WorkflowTaskView, WorkflowView } from '../../contract/workflow-json';
export type { ConcurrencyLimitView, RateLimitJson, TaskTypeLimitView, TenantDeleteView, TenantView } from '../../contract/admin-json';
export type { AuditView } from '../../contract/audit-json';
export type {
  CheckpointSavedView,
  CompletionView,
  ConcurrencyLimitDeleteView,
  CronDeleteView,
  DeadLetterDeleteView,
  DeadLetterReplayView,
  HeartbeatView,
  ProgressSavedView,
  RateLimitDeleteView,
  TaskCancelView,
  WorkflowCancelView,
} from '../../contract/answer-json';

/** `GET /api/v1/tasks` filters; `limit` as a number or its text. */
export type ListTasksQuery = ServiceQuery<ListTasksQuerySchema>;
/** `GET /api/v1/dead-letter` filters. */
export type DeadLetterQuery = ServiceQuery<DeadLetterQuerySchema>;
/** `GET /api/v1/cron-tasks` filters (`enabled` as a boolean or its text). */
export type ListCronsQuery = ServiceQuery<ListCronsQuerySchema>;
/** `GET /api/v1/cron-tasks/{id}/runs` paging. */
export type CronRunsQuery = ServiceQuery<CronRunsQuerySchema>;
/** `GET /api/v1/workflows` filters. */
export type ListWorkflowsQuery = ServiceQuery<ListWorkflowsQuerySchema>;
/** `?preview=N` of a cron read or creation: the next N fire times (1..100). */
export type CronPreviewQuery = ServiceQuery<GetCronQuery>;

/** Options of a submission (task, batch, workflow). */
export interface SubmitOptions {
  /** A W3C `traceparent` the submission joins (sent as that header). */
  traceparent?: string;
}

/** Options of `tasks.wait` and `workflows.wait`. */
export interface WaitOptions {
  /**
   * How long to wait in all, in ms (0 or more; Infinity: until the end); then the wait rejects with
   * a WaitTimeoutError carrying the last view. Anything else (NaN, missing) rejects with a TypeError.
   */
  timeoutMs: number;
  /**
   * Pause between two reads when the server answers a long poll at once without the end (one that
   * ignores `?wait=`), in ms (default 500).
   */
  pollIntervalMs?: number;
}

/** `POST /api/v1/queues/{queue}/lease` and its answer; `POST /api/v1/tasks/{id}/logs` (types from the API's schemas). */
export type { LeaseRequestBody as LeaseRequest, ExternalLogsBody as AttemptLogAppendBody } from '../../contract/types';
export type { LeasedTaskJson as LeasedTask, LeaseResponseJson as LeaseView } from '../../contract/lease-json';

/** `GET /healthz`. */
export interface LivenessView {
  status: 'ok';
}

/** `GET /readyz` (answered whether 200 or 503). */
export interface ReadinessView {
  status: 'ready' | 'degraded' | 'not_ready';
  /** The store answers and has no fault. */
  store: boolean;
  partitions?: { owned: number; fencing: number; total: number };
  redis?: 'up' | 'down';
  store_fault?: { fault: string; target: string; cause: string; recoverable: boolean; since: string; message: string };
}
