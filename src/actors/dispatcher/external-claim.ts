import { ReadyQueues } from '../../domain/ready-queues';
import type { ClaimedTask, DueEntry } from '../../domain/task';
import type { SchedulerDeps } from '../deps';

/**
 * The ready queues of one external queue (stream or pull): the same priorities, aging, tenant
 * round-robin and token buckets (the shared `DispatchLimits` objects) as the worker pools'.
 */
export function externalReadyQueues(deps: SchedulerDeps): ReadyQueues {
  const { limits, config, metrics } = deps;
  return new ReadyQueues({
    weightOf: limits.weightOf,
    agingMs: config.priorityAgingMs,
    typeBucket: limits.typeBucket,
    tenantBucket: limits.tenantBucket,
    onWait: (kind, key) => metrics.rateLimitWaits.inc({ limit: kind, key }),
  });
}

/**
 * Claims `entries` of external queue `queue` for `workerId` at `now` (epoch ms) with a lease of `leaseMs` (the
 * dispatcher's claim: PENDING → RUNNING, attempt + 1; in cluster mode each task's fencing token is
 * its partition's lease epoch: this node's, or `granted`, parallel to `entries`, the tokens of
 * another node's owners that granted the tasks to a pull request here). A failed claim is logged and claims nothing: the tasks stay
 * waiting and are reloaded by their owners.
 * @returns the attempts claimed (those refused are missing: cancelled, taken, not due)
 */
export async function claimExternal(
  deps: SchedulerDeps,
  queue: string,
  entries: readonly DueEntry[],
  workerId: string,
  now: number,
  leaseMs: number,
  granted?: readonly number[],
): Promise<ClaimedTask[]> {
  try {
    const epochs = granted ?? deps.cluster?.fences.tokensFor(entries.map((e) => e.partition));
    return await deps.store.claimTasks(
      entries.map((e) => e.id),
      workerId,
      now,
      leaseMs,
      epochs,
    );
  } catch (err) {
    deps.log.error({ err, queue }, 'claim failed; the tasks stay waiting and will be reloaded');
    return [];
  }
}
