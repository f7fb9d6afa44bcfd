import type { SubmitAck, TaskPageView, TaskView } from '../contract/task-json';
import type { CronPageView, CronPreviewView, CronRunPageView, CronView } from '../contract/cron-json';
import type { TaskTypeLimitView, TenantDeleteView, TenantView } from '../contract/admin-json';
import type { RateLimitDeleteView } from '../contract/answer-json';
import type { CancelResponse } from '../services/task-service';
import type { ErrorBody } from '../contract/error-catalog';
import type { WorkflowAck, WorkflowPageView, WorkflowView } from '../contract/workflow-json';
import type { AttemptLogJson } from '../contract/attempt-log-json';
import type { WorkflowCancelResponse } from '../services/workflow-service';
import type { CompletionAnswer, HeartbeatAnswer, CheckpointAnswer, ProgressAnswer } from '../services/external-task-service';

/** A reply of the actor-message API: a value, or an error body from the catalog. */
export type Reply<T> = { ok: true; value: T } | { ok: false; error: ErrorBody };

/** The actor-message API (same operations, validation and errors as REST). */
export type SchedulerApiMessages = {
  submit: { req: unknown; res: Reply<SubmitAck> };
  submitBatch: { req: unknown; res: Reply<{ tasks: SubmitAck[] }> };
  get: { req: { id: string; include?: { attempts?: boolean } }; res: Reply<TaskView> };
  list: { req: unknown; res: Reply<TaskPageView> };
  /** An attempt's kept `ctx.log` lines (REST: GET /api/v1/tasks/{id}/attempts/{n}/logs). */
  attemptLog: { req: { id: string; attempt: number }; res: Reply<AttemptLogJson> };
  cancel: { req: { id: string }; res: Reply<CancelResponse['body']> };
  update: { req: { id: string; changes: unknown }; res: Reply<TaskView> };
  listDeadLetter: { req: unknown; res: Reply<TaskPageView> };
  replayDeadLetter: { req: { id: string }; res: Reply<{ task_id: string; status: 'PENDING' }> };
  deleteDeadLetter: { req: { id: string }; res: Reply<{ task_id: string; deleted: true }> };
  createCron: { req: { body: unknown; preview?: number }; res: Reply<CronView> };
  getCron: { req: { id: string; query?: unknown }; res: Reply<CronView> };
  listCrons: { req: unknown; res: Reply<CronPageView> };
  updateCron: { req: { id: string; changes: unknown }; res: Reply<CronView> };
  deleteCron: { req: { id: string }; res: Reply<{ cron_id: string; deleted: true }> };
  cronRuns: { req: { id: string; query?: unknown }; res: Reply<CronRunPageView> };
  previewCron: { req: unknown; res: Reply<CronPreviewView> };
  putTenant: { req: { id: string; settings: unknown }; res: Reply<TenantView> };
  deleteTenant: { req: { id: string }; res: Reply<TenantDeleteView> };
  listTenants: { req: null; res: Reply<{ tenants: TenantView[] }> };
  putRateLimit: { req: { taskType: string; limit: unknown }; res: Reply<TaskTypeLimitView> };
  deleteRateLimit: { req: { taskType: string }; res: Reply<RateLimitDeleteView> };
  listRateLimits: { req: null; res: Reply<{ rate_limits: TaskTypeLimitView[] }> };
  submitWorkflow: { req: unknown; res: Reply<WorkflowAck> };
  getWorkflow: { req: { id: string }; res: Reply<WorkflowView> };
  listWorkflows: { req: unknown; res: Reply<WorkflowPageView> };
  cancelWorkflow: { req: { id: string }; res: Reply<WorkflowCancelResponse['body']> };
  /** An external consumer's completion of an attempt (REST: POST /api/v1/tasks/{id}/complete). */
  completeExternal: { req: { id: string; report: unknown }; res: Reply<CompletionAnswer> };
  /** An external consumer's heartbeat (REST: POST /api/v1/tasks/{id}/heartbeat). */
  heartbeatExternal: { req: { id: string; report: unknown }; res: Reply<HeartbeatAnswer> };
  /** An external consumer's checkpoint (REST: POST /api/v1/tasks/{id}/checkpoint). */
  checkpointExternal: { req: { id: string; report: unknown }; res: Reply<CheckpointAnswer> };
  /** An external consumer's progress report (REST: POST /api/v1/tasks/{id}/progress). */
  progressExternal: { req: { id: string; report: unknown }; res: Reply<ProgressAnswer> };
};
