import type { Config } from '../../config';

/** Name of the pool every task type not pinned elsewhere runs in. */
export const DEFAULT_POOL = 'default';

/**
 * One pool of forked worker processes: `processes` processes, each running up to `concurrency`
 * attempts at once (its credits), for `taskTypes` (empty for the default pool: every type not
 * pinned to another pool).
 */
export interface PoolSpec {
  name: string;
  taskTypes: readonly string[];
  processes: number;
  concurrency: number;
}

/**
 * The pools a dispatcher runs, from the configuration: the default pool first (`workers` ×
 * `workerConcurrency`), then each of `workerPools` in its order.
 */
export function poolSpecs(config: Pick<Config, 'workers' | 'workerConcurrency' | 'workerPools'>): PoolSpec[] {
  return [
    { name: DEFAULT_POOL, taskTypes: [], processes: config.workers, concurrency: config.workerConcurrency },
    ...(config.workerPools ?? []).map((p) => ({
      name: p.name,
      taskTypes: p.taskTypes,
      processes: p.processes,
      concurrency: p.concurrency,
    })),
  ];
}

/**
 * The id of a pool's worker process `index` (from 0): `worker-<n>` in the default pool (as before
 * pools existed, so stored attempts and metrics keep their ids), `<pool>-worker-<n>` in another.
 * Distinct across pools: a default pool's id is `worker-` and digits only.
 */
export function workerIdOf(pool: string, index: number): string {
  return pool === DEFAULT_POOL ? `worker-${index + 1}` : `${pool}-worker-${index + 1}`;
}
