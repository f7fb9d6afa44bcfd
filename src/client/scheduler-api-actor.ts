import { InternalError, SchedulerError, ValidationError } from '../domain/errors';
import { nonJsonValue } from '../contract/json-value';
import type { TaskService } from '../services/task-service';
import type { CronService } from '../services/cron-service';
import type { TenantAdmin } from '../services/tenant-admin';
import type { Reply } from './protocol';
import type { WorkflowService } from '../services/workflow-service';
import type { ExternalTaskService } from '../services/external-task-service';
import type {
  CronCreateBody,
  CronPatchBody,
  CronPreviewBody,
  CronRunsQuery,
  DeadLetterQuery,
  ExternalCheckpointBody,
  ExternalCompletionBody,
  ExternalHeartbeatBody,
  ExternalProgressBody,
  GetCronQuery,
  ListCronsQuery,
  ListTasksQuery,
  ListWorkflowsQuery,
  RateLimitPutBody,
  ServiceQuery,
  TaskBatchBody,
  TaskPatchBody,
  TaskSubmissionBody,
  TenantPutBody,
  WorkflowSubmissionBody,
} from '../contract/types';

/** Runs `op` and answers with a {@link Reply}: a catalog error keeps its code, anything else is INTERNAL_ERROR. */
async function reply<T>(op: () => Promise<T>): Promise<Reply<T>> {
  try {
    return { ok: true, value: await op() };
  } catch (err) {
    const e = err instanceof SchedulerError ? err : new InternalError();
    return { ok: false, error: e.toJSON().error };
  }
}

/**
 * {@link reply} for a message whose `body` is what REST would get as its JSON body or query. A
 * caller in the same process hands its objects over as they are, so `body` is first refused
 * (`VALIDATION_FAILED` naming the field) if it holds a value JSON cannot keep as it is
 * ({@link nonJsonValue}: `Infinity`, a `bigint`, a `Map`, a cycle, …), then handed to `op` as its
 * JSON round trip: exactly what REST would parse (a `Date` becomes its ISO string, a function
 * field is left out), never a live object the store would write as null or `{}`, or fail on.
 * `op` names the request type the service takes; the plain value is handed over as that type
 * unchecked, since every service validates its bodies and queries against their schemas itself.
 */
function replyWith<T>(body: unknown, op: (plain: never) => Promise<T>): Promise<Reply<T>> {
  return reply(() => {
    const bad = body === undefined ? null : nonJsonValue(body);
    if (bad) throw new ValidationError(bad.path, bad.reason);
    return op((body === undefined ? undefined : JSON.parse(JSON.stringify(body))) as never);
  });
}

/**
 * The actor that serves {@link SchedulerApiMessages} to actors of the same system: each topic calls
 * the service and answers with a {@link Reply}, so errors keep their catalog code across the actor
 * boundary. Built as a class over `service` because comedy instantiates actor definitions itself.
 */
export function schedulerApiActor(
  service: TaskService,
  crons: CronService,
  workflows?: WorkflowService,
  tenants?: TenantAdmin,
  external?: ExternalTaskService,
) {
  const ext = async (): Promise<ExternalTaskService> => {
    if (!external) throw new InternalError('external queues are not configured');
    return external;
  };
  const admin = async (): Promise<TenantAdmin> => {
    if (!tenants) throw new InternalError('tenant admin is not configured');
    return tenants;
  };
  const wf = async (): Promise<WorkflowService> => {
    if (!workflows) throw new InternalError('workflows are not configured');
    return workflows;
  };
  return class SchedulerApiActor {
    submit(body: unknown) {
      return replyWith(body, (b: TaskSubmissionBody) => service.submit(b));
    }
    submitBatch(body: unknown) {
      return replyWith(body, (b: TaskBatchBody) => service.submitBatch(b));
    }
    get(msg: { id: string; include?: { attempts?: boolean } }) {
      return reply(() => service.get(String(msg?.id ?? ''), msg?.include));
    }
    attemptLog(msg: { id: string; attempt: number }) {
      return reply(() => service.attemptLog(String(msg?.id ?? ''), msg?.attempt));
    }
    list(query: unknown) {
      return replyWith(query, (q: ServiceQuery<ListTasksQuery>) => service.list(q));
    }
    cancel(msg: { id: string }) {
      return reply(async () => (await service.cancel(String(msg?.id ?? ''))).body);
    }
    update(msg: { id: string; changes: unknown }) {
      return replyWith(msg?.changes, (c: TaskPatchBody) => service.update(String(msg?.id ?? ''), c));
    }
    listDeadLetter(query: unknown) {
      return replyWith(query, (q: ServiceQuery<DeadLetterQuery>) => service.listDeadLetter(q));
    }
    replayDeadLetter(msg: { id: string }) {
      return reply(() => service.replayDeadLetter(String(msg?.id ?? '')));
    }
    deleteDeadLetter(msg: { id: string }) {
      return reply(() => service.deleteDeadLetter(String(msg?.id ?? '')));
    }
    createCron(msg: { body: unknown; preview?: number }) {
      return replyWith(msg?.body, (b: CronCreateBody) => crons.create(b, msg?.preview === undefined ? {} : { preview: msg.preview }));
    }
    getCron(msg: { id: string; query?: unknown }) {
      return replyWith(msg?.query, (q: ServiceQuery<GetCronQuery>) => crons.get(String(msg?.id ?? ''), q));
    }
    listCrons(query: unknown) {
      return replyWith(query, (q: ServiceQuery<ListCronsQuery>) => crons.list(q));
    }
    updateCron(msg: { id: string; changes: unknown }) {
      return replyWith(msg?.changes, (c: CronPatchBody) => crons.update(String(msg?.id ?? ''), c));
    }
    deleteCron(msg: { id: string }) {
      return reply(() => crons.delete(String(msg?.id ?? '')));
    }
    cronRuns(msg: { id: string; query?: unknown }) {
      return replyWith(msg?.query, (q: ServiceQuery<CronRunsQuery>) => crons.runs(String(msg?.id ?? ''), q));
    }
    previewCron(body: unknown) {
      return replyWith(body, async (b: CronPreviewBody) => crons.preview(b));
    }
    putTenant(msg: { id: string; settings: unknown }) {
      return replyWith(msg?.settings, async (v: TenantPutBody) => (await admin()).putTenant(String(msg?.id ?? ''), v));
    }
    deleteTenant(msg: { id: string }) {
      return reply(async () => (await admin()).deleteTenant(String(msg?.id ?? '')));
    }
    listTenants() {
      return reply(async () => (await admin()).listTenants());
    }
    putRateLimit(msg: { taskType: string; limit: unknown }) {
      return replyWith(msg?.limit, async (v: RateLimitPutBody) => (await admin()).putRateLimit(String(msg?.taskType ?? ''), v));
    }
    deleteRateLimit(msg: { taskType: string }) {
      return reply(async () => (await admin()).deleteRateLimit(String(msg?.taskType ?? '')));
    }
    listRateLimits() {
      return reply(async () => (await admin()).listRateLimits());
    }
    submitWorkflow(body: unknown) {
      return replyWith(body, async (b: WorkflowSubmissionBody) => (await wf()).submit(b));
    }
    getWorkflow(msg: { id: string }) {
      return reply(async () => (await wf()).get(String(msg?.id ?? '')));
    }
    listWorkflows(query: unknown) {
      return replyWith(query, async (q: ServiceQuery<ListWorkflowsQuery>) => (await wf()).list(q));
    }
    cancelWorkflow(msg: { id: string }) {
      return reply(async () => (await (await wf()).cancel(String(msg?.id ?? ''))).body);
    }
    completeExternal(msg: { id: string; report: unknown }) {
      return replyWith(msg?.report, async (r: ExternalCompletionBody) => (await ext()).complete(String(msg?.id ?? ''), r));
    }
    heartbeatExternal(msg: { id: string; report: unknown }) {
      return replyWith(msg?.report, async (r: ExternalHeartbeatBody) => (await ext()).heartbeat(String(msg?.id ?? ''), r));
    }
    checkpointExternal(msg: { id: string; report: unknown }) {
      return replyWith(msg?.report, async (r: ExternalCheckpointBody) => (await ext()).checkpoint(String(msg?.id ?? ''), r));
    }
    progressExternal(msg: { id: string; report: unknown }) {
      return replyWith(msg?.report, async (r: ExternalProgressBody) => (await ext()).progress(String(msg?.id ?? ''), r));
    }
  };
}
