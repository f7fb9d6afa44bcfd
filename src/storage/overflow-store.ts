/**
 * The overflow part of the {@link Store} contract: low-priority tasks held (state OVERFLOW) while
 * the scheduler sheds load, and their release. The conformance suite
 * (test/storage/conformance/overflow.ts) checks it on every adapter.
 */
import type { DueEntry } from '../domain/task';
import type { HeldTask } from '../domain/overflow-policy';

export interface OverflowStore {
  /**
   * Held tasks (OVERFLOW), oldest first (by `seq`, the submission order), at most `limit`, without
   * those of the tenants in `excludeTenants`.
   */
  listOverflow(limit: number, excludeTenants?: readonly string[]): Promise<HeldTask[]>;
  /** Held tasks (OVERFLOW) per tenant. */
  countOverflowByTenant(): Promise<Record<string, number>>;
  /**
   * Releases held tasks, each a compare-and-set on OVERFLOW (a task cancelled or released
   * meanwhile is skipped): `releaseLater` to SCHEDULED due at its own `scheduled_at` when that is
   * after `now`, else `release` to PENDING due at `now` (a task cannot have waited for its turn
   * while it was held: priority aging and dispatch lag count from the release).
   * @returns the due entries of the tasks released, for their partition owners
   */
  releaseOverflow(ids: readonly string[], now: number): Promise<DueEntry[]>;
}
