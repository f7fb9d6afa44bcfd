import type { SubmitAck } from '../contract/task-json';
import type { CancelResponse } from '../services/task-service';
import type { ErrorBody } from '../contract/error-catalog';
import type { WorkflowAck } from '../contract/workflow-json';
import type { WorkflowCancelResponse } from '../services/workflow-service';
import type { CompletionAnswer, HeartbeatAnswer, CheckpointAnswer, ProgressAnswer } from '../services/external-task-service';

/** A reply of the actor-message API: a value, or an error body from the catalog. */
export type Reply<T> = { ok: true; value: T } | { ok: false; error: ErrorBody };

/** The actor-message API (same operations, validation and errors as REST). */
export type SchedulerApiMessages = {
  submit: { req: unknown; res: Reply<SubmitAck> };
  submitBatch: { req: unknown; res: Reply<{ tasks: SubmitAck[] }> };
  get: { req: { id: string; include?: { attempts?: boolean } }; res: Reply<Record<string, unknown>> };
  list: { req: unknown; res: Reply<{ tasks: Array<Record<string, unknown>>; next_cursor: string | null }> };
  cancel: { req: { id: string }; res: Reply<CancelResponse['body']> };
  update: { req: { id: string; changes: unknown }; res: Reply<Record<string, unknown>> };
  listDeadLetter: { req: unknown; res: Reply<{ tasks: Array<Record<string, unknown>>; next_cursor: string | null }> };
  replayDeadLetter: { req: { id: string }; res: Reply<{ task_id: string; status: 'PENDING' }> };
  deleteDeadLetter: { req: { id: string }; res: Reply<{ task_id: string; deleted: true }> };
  createCron: { req: { body: unknown; preview?: number }; res: Reply<Record<string, unknown>> };
  getCron: { req: { id: string; query?: unknown }; res: Reply<Record<string, unknown>> };
  listCrons: { req: unknown; res: Reply<{ cron_tasks: Array<Record<string, unknown>>; next_cursor: string | null }> };
  updateCron: { req: { id: string; changes: unknown }; res: Reply<Record<string, unknown>> };
  deleteCron: { req: { id: string }; res: Reply<{ cron_id: string; deleted: true }> };
  cronRuns: { req: { id: string; query?: unknown }; res: Reply<{ runs: Array<Record<string, unknown>>; next_cursor: string | null }> };
  previewCron: { req: unknown; res: Reply<Record<string, unknown>> };
  putTenant: { req: { id: string; settings: unknown }; res: Reply<Record<string, unknown>> };
  deleteTenant: { req: { id: string }; res: Reply<{ tenant_id: string; deleted: boolean; weight: number; rate_limit: unknown }> };
  listTenants: { req: null; res: Reply<{ tenants: Array<Record<string, unknown>> }> };
  putRateLimit: { req: { taskType: string; limit: unknown }; res: Reply<Record<string, unknown>> };
  deleteRateLimit: { req: { taskType: string }; res: Reply<{ task_type: string; deleted: true }> };
  listRateLimits: { req: null; res: Reply<{ rate_limits: Array<Record<string, unknown>> }> };
  submitWorkflow: { req: unknown; res: Reply<WorkflowAck> };
  getWorkflow: { req: { id: string }; res: Reply<Record<string, unknown>> };
  listWorkflows: { req: unknown; res: Reply<{ workflows: Array<Record<string, unknown>>; next_cursor: string | null }> };
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
