/**
 * The concurrency-limit part of the {@link Store} contract: the limit per concurrency key set at
 * run time by admins, stored so it survives a restart and every node of a cluster reads the same.
 * The conformance suite (test/storage/conformance/concurrency-limits.ts) checks it.
 */

/** A stored limit: at most `maxRunning` attempts of tasks with `key` run at once. */
export interface ConcurrencyLimitRecord {
  key: string;
  maxRunning: number;
  /** When it was last set (epoch ms). */
  updatedAt: number;
}

export interface ConcurrencyStore {
  /** Sets (or with null removes) the limit of `key`; removing one that is not set does nothing. `now`: epoch ms. */
  putConcurrencyLimit(key: string, maxRunning: number | null, now: number): Promise<void>;
  /** Every stored limit, by key. */
  listConcurrencyLimits(): Promise<ConcurrencyLimitRecord[]>;
}
