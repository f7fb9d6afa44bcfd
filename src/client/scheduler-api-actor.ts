import { InternalError, SchedulerError } from '../domain/errors';
import type { SchedulerService } from '../service';
import type { Reply } from './protocol';
import type { WorkflowService } from '../workflows/workflow-service';

async function reply<T>(op: () => Promise<T>): Promise<Reply<T>> {
  try {
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
export function schedulerApiActor(service: SchedulerService, workflows?: WorkflowService) {
  const wf = async (): Promise<WorkflowService> => {
    if (!workflows) throw new InternalError('workflows are not configured');
    return workflows;
  };
  return class SchedulerApiActor {
    submit(body: unknown) {
      return reply(() => service.submit(body));
    }
    submitBatch(body: unknown) {
      return reply(() => service.submitBatch(body));
    }
    get(msg: { id: string; include?: { attempts?: boolean } }) {
      return reply(() => service.get(String(msg?.id ?? ''), msg?.include));
    }
    list(query: unknown) {
      return reply(() => service.list(query));
    }
    cancel(msg: { id: string }) {
      return reply(async () => (await service.cancel(String(msg?.id ?? ''))).body);
    }
    update(msg: { id: string; changes: unknown }) {
      return reply(() => service.update(String(msg?.id ?? ''), msg?.changes));
    }
    listDeadLetter(query: unknown) {
      return reply(() => service.listDeadLetter(query));
    }
    replayDeadLetter(msg: { id: string }) {
      return reply(() => service.replayDeadLetter(String(msg?.id ?? '')));
    }
    deleteDeadLetter(msg: { id: string }) {
      return reply(() => service.deleteDeadLetter(String(msg?.id ?? '')));
    }
    submitWorkflow(body: unknown) {
      return reply(async () => (await wf()).submit(body));
    }
    getWorkflow(msg: { id: string }) {
      return reply(async () => (await wf()).get(String(msg?.id ?? '')));
    }
    listWorkflows(query: unknown) {
      return reply(async () => (await wf()).list(query));
    }
    cancelWorkflow(msg: { id: string }) {
      return reply(async () => (await (await wf()).cancel(String(msg?.id ?? ''))).body);
    }
  };
}
