import type { ProcessExit } from '../../domain/lost-attempt';
import type { ReadyPolicy } from '../../domain/ready-queues';
import type { SchedulerDeps } from '../deps';
import { RestartCause, WorkerPool, WorkerSlot } from './worker-pool';
import { PoolWorkers, WorkerPools } from './worker-pools';
import { PoolSpec, poolSpecs } from './pool-specs';

/** A worker process was replaced (`cause` `killed`: by the dispatcher, to stop an attempt). */
export type OnRestart = (slot: WorkerSlot, exit: ProcessExit | null, cause: RestartCause) => void;

/** The worker processes of one pool: forked {@link WorkerPool}s, or a test's fakes. */
export type WorkersOf = (spec: PoolSpec, onRestart: OnRestart) => PoolWorkers;

/** What the pools tell the dispatcher. */
export interface PoolHooks {
  onRestart: OnRestart;
  /** A forked worker's liveness beat. */
  onAlive: (slot: WorkerSlot) => void;
  /** Work may start now: a concurrency key's limit changed or its shared slots arrived. */
  pump: () => void;
}

/**
 * The dispatcher's worker pools, one per pool of the config (`poolSpecs`), each with ready queues
 * under the tenants' weights, the priority aging, the type and tenant token buckets and the
 * concurrency keys of `deps.limits` (a wait on a bucket counted in `rate_limit_waits`); their
 * ready counts, workers and concurrency slots are the metrics' sources. `workersOf` replaces the
 * forked workers (tests).
 */
export function dispatcherPools(deps: SchedulerDeps, hooks: PoolHooks, workersOf?: WorkersOf): WorkerPools {
  const { limits, config, metrics } = deps;
  const policy: ReadyPolicy = {
    weightOf: limits.weightOf,
    agingMs: config.priorityAgingMs,
    typeBucket: limits.typeBucket,
    tenantBucket: limits.tenantBucket,
    onWait: (kind, key) => metrics.rateLimitWaits.inc({ limit: kind, key }),
    concurrency: limits.concurrency,
  };
  const pools = new WorkerPools(poolSpecs(config), policy, (spec) =>
    workersOf
      ? workersOf(spec, hooks.onRestart)
      : new WorkerPool(deps, hooks.onRestart, spec, { onAlive: hooks.onAlive, onAnswered: () => hooks.pump() }),
  );
  // A key's limit changed or shared slots arrived: what was set aside on it is tried again (at
  // most a limit's worth: the rest could not start anyway, and a wake may come every poll).
  limits.concurrency.onChange((key) => {
    pools.reconsiderKey(key, limits.concurrency.maxRunningOf(key) ?? Infinity);
    hooks.pump();
  });
  metrics.setConcurrencySource(() => limits.concurrency.snapshot());
  metrics.setReadySource(() => pools.readyByTenant());
  metrics.setWorkerSource(() => pools.snapshot());
  return pools;
}
