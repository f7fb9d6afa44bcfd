import type { CronGateway, ExternalGateway, SchedulingGateway } from '../services/ports';
import type { ActorRouter } from './router';

/** The services' {@link SchedulingGateway} over the actors: new tasks to their owners, aborts to the dispatcher, ends to the cron actor. */
export function actorGateway(router: ActorRouter): SchedulingGateway {
  return {
    tasksStored: (entries) => router.offer(entries),
    tasksEnded: (taskIds) => router.instancesEnded(taskIds),
    abortRunning: (taskId, attempt) => router.abort(taskId, attempt),
  };
}

/** Cron edits to the cron actor (a new or changed definition fires without waiting). */
export function cronGateway(router: ActorRouter): CronGateway {
  return { cronChanged: (id) => router.cronChanged(id) };
}

/** External consumers' completions and pull workers' lease requests go to the dispatcher, which owns the external queues' attempts. */
export function externalGateway(router: ActorRouter): ExternalGateway {
  return {
    complete: (c) => router.completeExternal(c),
    lease: (req) => router.lease(req),
    leaveLease: (waiterId) => router.leaveLease(waiterId),
    leaseUndelivered: (attempts) => router.leaseUndelivered(attempts),
  };
}
