import { ActorRef, TypedRef } from '../actors/runtime/typed-ref';
import { RemoteSchedulerError } from '../contract/error-catalog';
import type { Reply, SchedulerApiMessages } from './protocol';

/**
 * SchedulerClient for in-cluster callers: an actor of the same actor system submits, reads, lists
 * and cancels tasks by message instead of HTTP. Bodies use the REST field names (snake_case).
 * Every method throws {@link RemoteSchedulerError} carrying the catalog `code`, `status` and
 * `details` (e.g. `VALIDATION_FAILED` with `details.field`) exactly where REST would answer an error.
 */
export class SchedulerClient {
  private readonly api: TypedRef<SchedulerApiMessages>;

  /** @param apiActor reference to the scheduler's API actor (`runtime.apiActor`) */
  constructor(apiActor: ActorRef) {
    this.api = new TypedRef(apiActor);
  }

  /** Submits one task (REST: POST /api/v1/tasks). */
  submit(body: unknown) {
    return this.call(this.api.ask('submit', body));
  }

  /** Submits up to the batch limit atomically (REST: POST /api/v1/tasks/batch). */
  submitBatch(body: { tasks: unknown[] }) {
    return this.call(this.api.ask('submitBatch', body));
  }

  /** Reads a task (REST: GET /api/v1/tasks/{id}). */
  get(id: string, include?: { attempts?: boolean }) {
    return this.call(this.api.ask('get', { id, include }));
  }

  /** An attempt's kept `ctx.log` lines, oldest first (REST: GET /api/v1/tasks/{id}/attempts/{n}/logs). */
  attemptLog(id: string, attempt: number) {
    return this.call(this.api.ask('attemptLog', { id, attempt }));
  }

  /** Lists tasks (REST: GET /api/v1/tasks). Query values as in the REST query string. */
  list(query: Record<string, string | number> = {}) {
    return this.call(this.api.ask('list', query));
  }

  /**
   * An external consumer completes an attempt of an external task (REST: POST
   * /api/v1/tasks/{id}/complete): `{attempt, result?}` or `{attempt, error: {message, permanent?}}`.
   */
  complete(id: string, report: { attempt: number; result?: unknown; error?: { message: string; permanent?: boolean; type?: string } }) {
    return this.call(this.api.ask('completeExternal', { id, report }));
  }

  /** Extends the lease of an external task's running attempt (REST: POST /api/v1/tasks/{id}/heartbeat). */
  heartbeat(id: string, report: { attempt: number }) {
    return this.call(this.api.ask('heartbeatExternal', { id, report }));
  }

  /** Saves a checkpoint of an external task's running attempt (REST: POST /api/v1/tasks/{id}/checkpoint). */
  checkpoint(id: string, report: { attempt: number; value: unknown }) {
    return this.call(this.api.ask('checkpointExternal', { id, report }));
  }

  /** Reports the progress of an external task's running attempt (REST: POST /api/v1/tasks/{id}/progress). */
  progress(id: string, report: { attempt: number; progress: number | { done?: number; total?: number; message?: string } }) {
    return this.call(this.api.ask('progressExternal', { id, report }));
  }

  /** Cancels a task (REST: POST /api/v1/tasks/{id}/cancel). */
  cancel(id: string) {
    return this.call(this.api.ask('cancel', { id }));
  }

  /** Reschedules / re-prioritises / changes the payload of a task not yet started (REST: PATCH). */
  update(id: string, changes: { scheduled_at?: string | null; priority?: string; payload?: unknown }) {
    return this.call(this.api.ask('update', { id, changes }));
  }

  /** Lists DEAD tasks (REST: GET /api/v1/dead-letter). */
  listDeadLetter(query: Record<string, string | number> = {}) {
    return this.call(this.api.ask('listDeadLetter', query));
  }

  /** Replays a DEAD task with a fresh retry budget (REST: POST /api/v1/dead-letter/{id}/replay). */
  replayDeadLetter(id: string) {
    return this.call(this.api.ask('replayDeadLetter', { id }));
  }

  /** Deletes a DEAD task (REST: DELETE /api/v1/dead-letter/{id}). */
  deleteDeadLetter(id: string) {
    return this.call(this.api.ask('deleteDeadLetter', { id }));
  }

  /** Creates a cron task; `preview` adds that many next fire times (REST: POST /api/v1/cron-tasks). */
  createCron(body: unknown, preview?: number) {
    return this.call(this.api.ask('createCron', { body, preview }));
  }

  /** Reads a cron task; `query.preview` as in REST (GET /api/v1/cron-tasks/{id}). */
  getCron(id: string, query?: { preview?: number | string }) {
    return this.call(this.api.ask('getCron', { id, query }));
  }

  /** Lists cron tasks (REST: GET /api/v1/cron-tasks). */
  listCrons(query: Record<string, string | number | boolean | undefined> = {}) {
    return this.call(this.api.ask('listCrons', query));
  }

  /** Edits a cron task, e.g. `{enabled: false}` to pause (REST: PATCH /api/v1/cron-tasks/{id}). */
  updateCron(id: string, changes: unknown) {
    return this.call(this.api.ask('updateCron', { id, changes }));
  }

  /** Deletes a cron task (REST: DELETE /api/v1/cron-tasks/{id}). */
  deleteCron(id: string) {
    return this.call(this.api.ask('deleteCron', { id }));
  }

  /** Fire records of a cron task (REST: GET /api/v1/cron-tasks/{id}/runs). */
  cronRuns(id: string, query?: { limit?: number | string; cursor?: string }) {
    return this.call(this.api.ask('cronRuns', { id, query }));
  }

  /** Next fire times of an expression (REST: POST /api/v1/cron-tasks/preview). */
  previewCron(body: unknown) {
    return this.call(this.api.ask('previewCron', body));
  }

  /** Submits a workflow (DAG) atomically (REST: POST /api/v1/workflows). */
  submitWorkflow(body: { workflow_name?: string | null; tasks: unknown[]; metadata?: Record<string, unknown> }) {
    return this.call(this.api.ask('submitWorkflow', body));
  }

  /** Reads a workflow with its tasks (REST: GET /api/v1/workflows/{id}). */
  getWorkflow(id: string) {
    return this.call(this.api.ask('getWorkflow', { id }));
  }

  /** Lists workflows (REST: GET /api/v1/workflows). Query values as in the REST query string. */
  listWorkflows(query: Record<string, string | number> = {}) {
    return this.call(this.api.ask('listWorkflows', query));
  }

  /** Cancels a workflow (REST: POST /api/v1/workflows/{id}/cancel). */
  cancelWorkflow(id: string) {
    return this.call(this.api.ask('cancelWorkflow', { id }));
  }

  /** Sets a tenant's weight and/or rate limit (REST: PUT /api/v1/tenants/{id}). */
  putTenant(id: string, settings: { weight?: number; rate_limit?: { rate_per_second: number; burst?: number } | null }) {
    return this.call(this.api.ask('putTenant', { id, settings }));
  }

  /** Deletes a tenant's stored settings; its tasks are not touched (REST: DELETE /api/v1/tenants/{id}). */
  deleteTenant(id: string) {
    return this.call(this.api.ask('deleteTenant', { id }));
  }

  /** Tenants with settings (REST: GET /api/v1/tenants). */
  listTenants() {
    return this.call(this.api.ask('listTenants', null));
  }

  /** Limits the starts of a task type (REST: PUT /api/v1/rate-limits/{task_type}). */
  putRateLimit(taskType: string, limit: { rate_per_second: number; burst?: number }) {
    return this.call(this.api.ask('putRateLimit', { taskType, limit }));
  }

  /** Removes a task type's limit (REST: DELETE /api/v1/rate-limits/{task_type}). */
  deleteRateLimit(taskType: string) {
    return this.call(this.api.ask('deleteRateLimit', { taskType }));
  }

  /** Task-type limits in force (REST: GET /api/v1/rate-limits). */
  listRateLimits() {
    return this.call(this.api.ask('listRateLimits', null));
  }

  private async call<T>(pending: Promise<Reply<T>>): Promise<T> {
    const r = await pending;
    if (!r.ok) throw new RemoteSchedulerError(r.error);
    return r.value;
  }
}
