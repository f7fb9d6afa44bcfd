/**
 * listOverflow — inputs: limit, tenants to leave out. Output: held tasks (state OVERFLOW) as
 * {id, tenantId}, oldest first (by seq, the submission order), at most `limit`. Guarantee: one
 * statement on the pool over the partial index `tasks_overflow`: its cost follows the tasks held,
 * not the table.
 */
import type { Db } from '../db';
import type { HeldTask } from '../../../domain/overflow-policy';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlStates } from '../../sql/state-sql';

/** Held tasks oldest first, without those of `excludeTenants`. */
export async function listOverflow(db: Db, limit: number, excludeTenants: readonly string[] = []): Promise<HeldTask[]> {
  const { rows } = await db.query<{ id: string; tenant_id: string }>(
    `SELECT id, tenant_id FROM tasks
     WHERE ${sqlStates(TRANSITIONS.release.from)} AND tenant_id <> ALL($1::text[])
     ORDER BY seq LIMIT $2`,
    [excludeTenants, limit],
  );
  return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id }));
}
