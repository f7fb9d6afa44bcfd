import { InternalError, SchedulerError, ValidationError } from '../domain/errors';
import { nonJsonValue } from '../contract/json-value';
import type { SchedulerService } from '../service';
import type { CronService } from '../cron/cron-service';
import type { TenantAdmin } from '../tenancy/tenant-admin';
import type { Reply } from './protocol';
import type { WorkflowService } from '../workflows/workflow-service';
import type { ExternalTaskService } from '../external/external-task-service';

/**
 * Runs `op` and answers with a {@link Reply}. `body`, the part of the message REST would get as its
 * JSON body or query, is refused first (`VALIDATION_FAILED` naming the field) if it holds a value
 * JSON cannot keep as it is (`Infinity`, a `bigint`, a `Map`, a cycle, …: {@link nonJsonValue}): a
 * caller in the same process hands its objects over as they are, and the store would write such a
 * value as null or `{}`, or fail with a 500.
 */
async function reply<T>(op: () => Promise<T>, body?: unknown): Promise<Reply<T>> {
  try {
    const bad = body === undefined ? null : nonJsonValue(body);
    if (bad) throw new ValidationError(bad.path, bad.reason);
    return { ok: true, value: await op() };
  } catch (err) {
    const e = err instanceof SchedulerError ? err : new InternalError();
    return { ok: false, error: e.toJSON().error };
  }
}

/**
 * The actor that serves {@link SchedulerApiMessages} to actors of the same system: each topic calls
 * the service and answers with a {@link Reply}, so errors keep their catalog code across the actor
 * boundary. Built as a class over `service` because comedy instantiates actor definitions itself.
 */
export function schedulerApiActor(
  service: SchedulerService,
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
      return reply(() => service.submit(body), body);
    }
    submitBatch(body: unknown) {
      return reply(() => service.submitBatch(body), body);
    }
    get(msg: { id: string; include?: { attempts?: boolean } }) {
      return reply(() => service.get(String(msg?.id ?? ''), msg?.include));
    }
    list(query: unknown) {
      return reply(() => service.list(query), query);
    }
    cancel(msg: { id: string }) {
      return reply(async () => (await service.cancel(String(msg?.id ?? ''))).body);
    }
    update(msg: { id: string; changes: unknown }) {
      return reply(() => service.update(String(msg?.id ?? ''), msg?.changes), msg?.changes);
    }
    listDeadLetter(query: unknown) {
      return reply(() => service.listDeadLetter(query), query);
    }
    replayDeadLetter(msg: { id: string }) {
      return reply(() => service.replayDeadLetter(String(msg?.id ?? '')));
    }
    deleteDeadLetter(msg: { id: string }) {
      return reply(() => service.deleteDeadLetter(String(msg?.id ?? '')));
    }
    createCron(msg: { body: unknown; preview?: number }) {
      return reply(() => crons.create(msg?.body, msg?.preview === undefined ? {} : { preview: msg.preview }), msg?.body);
    }
    getCron(msg: { id: string; query?: unknown }) {
      return reply(() => crons.get(String(msg?.id ?? ''), msg?.query), msg?.query);
    }
    listCrons(query: unknown) {
      return reply(() => crons.list(query), query);
    }
    updateCron(msg: { id: string; changes: unknown }) {
      return reply(() => crons.update(String(msg?.id ?? ''), msg?.changes), msg?.changes);
    }
    deleteCron(msg: { id: string }) {
      return reply(() => crons.delete(String(msg?.id ?? '')));
    }
    cronRuns(msg: { id: string; query?: unknown }) {
      return reply(() => crons.runs(String(msg?.id ?? ''), msg?.query), msg?.query);
    }
    previewCron(body: unknown) {
      return reply(async () => crons.preview(body), body);
    }
    putTenant(msg: { id: string; settings: unknown }) {
      return reply(async () => (await admin()).putTenant(String(msg?.id ?? ''), msg?.settings), msg?.settings);
    }
    listTenants() {
      return reply(async () => (await admin()).listTenants());
    }
    putRateLimit(msg: { taskType: string; limit: unknown }) {
      return reply(async () => (await admin()).putRateLimit(String(msg?.taskType ?? ''), msg?.limit), msg?.limit);
    }
    deleteRateLimit(msg: { taskType: string }) {
      return reply(async () => (await admin()).deleteRateLimit(String(msg?.taskType ?? '')));
    }
    listRateLimits() {
      return reply(async () => (await admin()).listRateLimits());
    }
    submitWorkflow(body: unknown) {
      return reply(async () => (await wf()).submit(body), body);
    }
    getWorkflow(msg: { id: string }) {
      return reply(async () => (await wf()).get(String(msg?.id ?? '')));
    }
    listWorkflows(query: unknown) {
      return reply(async () => (await wf()).list(query), query);
    }
    cancelWorkflow(msg: { id: string }) {
      return reply(async () => (await (await wf()).cancel(String(msg?.id ?? ''))).body);
    }
    completeExternal(msg: { id: string; report: unknown }) {
      return reply(async () => (await ext()).complete(String(msg?.id ?? ''), msg?.report), msg?.report);
    }
    heartbeatExternal(msg: { id: string; report: unknown }) {
      return reply(async () => (await ext()).heartbeat(String(msg?.id ?? ''), msg?.report), msg?.report);
    }
  };
}
