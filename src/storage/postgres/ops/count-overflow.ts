/**
 * countOverflowByTenant — inputs: none. Output: tenant → tasks held (state OVERFLOW); tenants
 * with none are absent. Guarantee: one statement on the pool, over the partial index
 * `tasks_overflow` (it holds the tenant): its cost follows the tasks held (at most
 * `overflow.maxTasks` plus one batch), not the table.
 */
import type { Db } from '../db';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlStates } from '../../sql/state-sql';

/** Tenant → tasks held in the overflow hold. */
export async function countOverflowByTenant(db: Db): Promise<Record<string, number>> {
  const { rows } = await db.query<{ tenant_id: string; n: number }>(
    `SELECT tenant_id, COUNT(*) AS n FROM tasks WHERE ${sqlStates(TRANSITIONS.release.from)} GROUP BY tenant_id`,
  );
  return Object.fromEntries(rows.map((r) => [r.tenant_id, r.n]));
}
