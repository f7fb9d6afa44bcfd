import type { SubmitAck } from '../contract/task-json';
import type { CancelResponse } from '../service';
import type { ErrorBody } from '../domain/errors';
import type { WorkflowAck } from '../contract/workflow-json';
import type { WorkflowCancelResponse } from '../workflows/workflow-service';

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
  submitWorkflow: { req: unknown; res: Reply<WorkflowAck> };
  getWorkflow: { req: { id: string }; res: Reply<Record<string, unknown>> };
  listWorkflows: { req: unknown; res: Reply<{ workflows: Array<Record<string, unknown>>; next_cursor: string | null }> };
  cancelWorkflow: { req: { id: string }; res: Reply<WorkflowCancelResponse['body']> };
};
