import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Clock } from '../domain/clock';
import type { SchedulerMetrics } from '../observability/metrics';
import type { Store } from '../storage/store';
import type { DispatchLimits } from '../domain/dispatch-limits';
import type { TypedRef } from './typed-ref';
import type { CronActorMessages, DispatcherMessages, PartitionOwnerMessages } from './protocol';
import type { PartitionFences } from '../cluster/partition-fences';
import type { OwnershipStatus } from '../cluster/partition-leases';
import type { StreamDispatch } from './dispatcher/stream-dispatch';
import type { DueEntry } from '../domain/task';
import type { TaskSpans } from '../observability/task-spans';

/**
 * The other nodes of a cluster (cluster mode with Redis; absent in embedded mode). Told after the
 * local actors were: what it sends is a hint, never the only way a task is found.
 */
export interface PeerNotifier {
  /** Waiting tasks just offered to the local owners: wake their partitions' owners elsewhere. */
  offered(entries: readonly DueEntry[]): void;
  /** A RUNNING attempt must abort: tell the node that runs it. */
  abort(taskId: string, attempt: number): void;
}

/** Where the running actors can be reached; filled by the supervisor as it starts them. */
export interface ActorDirectory {
  dispatcher: TypedRef<DispatcherMessages> | null;
  owners: Array<TypedRef<PartitionOwnerMessages>>;
  cron: TypedRef<CronActorMessages> | null;
  /** Cluster mode: partition ownership as the supervisor's lease component sees it (readiness). */
  ownership?: () => OwnershipStatus;
  /** Other nodes (cluster mode); absent or null: this node is alone. */
  peers?: PeerNotifier | null;
}

/** What every in-process actor is given (a comedy resource named `SchedulerDeps`). */
export interface SchedulerDeps {
  store: Store;
  clock: Clock;
  config: Config;
  metrics: SchedulerMetrics;
  log: Logger;
  directory: ActorDirectory;
  /** Tenant weights and rate limits, changed at run time by admins. */
  limits: DispatchLimits;
  /**
   * Cluster mode (store `mongodb`): the partitions this process holds leases on, with their
   * epochs (fencing tokens for markPending and claims), plus this member's id. Absent or null in
   * the embedded profile: every partition is owned, nothing is fenced.
   */
  cluster?: { memberId: string; fences: PartitionFences } | null;
  /** Redis Streams of the external queues (config `externalQueues`); absent when there are none. */
  streams?: StreamDispatch;
  /**
   * Queue-wait and external hand-off spans (tracing configured). Absent or null: none, and the
   * dispatcher's claim path does no per-task tracing work.
   */
  spans?: TaskSpans | null;
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
