import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Clock } from '../domain/clock';
import type { SchedulerMetrics } from '../observability/metrics';
import type { Store } from '../storage/store';
import type { DispatchLimits } from '../domain/dispatch-limits';
import type { ActorRouter } from './router';
import type { PartitionFences } from '../cluster/partition-fences';
import type { StreamDispatch } from './dispatcher/stream-dispatch';
import type { TaskSpans } from '../observability/task-spans';
import type { TaskEndPublisher } from '../services/ports';

/** What every in-process actor is given (a comedy resource named `SchedulerDeps`). */
export interface SchedulerDeps {
  store: Store;
  clock: Clock;
  config: Config;
  metrics: SchedulerMetrics;
  log: Logger;
  /** Where every message to another actor goes. */
  router: ActorRouter;
  /** Tenant weights and rate limits, changed at run time by admins. */
  limits: DispatchLimits;
  /**
   * Cluster mode (store `mongodb`): the partitions this process holds leases on, with their
   * epochs (fencing tokens for markPending and claims), plus this member's id and this process's
   * instance token (the member record's holder, cluster/member-claim.ts; absent: a fresh one).
   * Absent or null in the embedded profile: every partition is owned, nothing is fenced.
   */
  cluster?: { memberId: string; instance?: string; fences: PartitionFences } | null;
  /** Redis Streams of the external queues (config `externalQueues`); absent when there are none. */
  streams?: StreamDispatch;
  /**
   * Queue-wait and external hand-off spans (tracing configured). Absent or null: none, and the
   * dispatcher's claim path does no per-task tracing work.
   */
  spans?: TaskSpans | null;
  /** Where the dispatcher announces the tasks it recorded as terminal (the `?wait=` waiters); absent: not announced. */
  taskEnds?: TaskEndPublisher;
}

/** Resource name under which {@link SchedulerDeps} is injected (`static inject()`). */
export const DEPS_RESOURCE = 'SchedulerDeps';

/** A comedy resource definition class that hands out `deps` (comedy finds it by its `resourceName`). */
export function depsResource(deps: SchedulerDeps): new () => { getResource(): SchedulerDeps } {
  return class SchedulerDepsResource {
    static readonly resourceName = DEPS_RESOURCE;
    getResource(): SchedulerDeps {
      return deps;
    }
  };
}
