/**
 * listOverflow — inputs: limit, tenants to leave out. Output: held tasks (state OVERFLOW) as
 * {id, tenantId}, oldest first (by `seq`, the submission order), at most `limit`.
 * Guarantee: one `find` on the `tasks_state_seq` index (state, then seq): its cost follows the
 * tasks held, not the collection. Reads the primary, so it sees every acknowledged submission.
 */
import type { HeldTask } from '../../../domain/overflow-policy';
import type { MongoCollections } from '../collections';

export async function listOverflow(c: MongoCollections, limit: number, excludeTenants: readonly string[] = []): Promise<HeldTask[]> {
  const filter = excludeTenants.length > 0 ? { state: 'OVERFLOW', tenant_id: { $nin: [...excludeTenants] } } : { state: 'OVERFLOW' };
  const docs = await c.tasks
    .find(filter, { projection: { _id: 1, tenant_id: 1 } })
    .sort({ seq: 1 })
    .limit(limit)
    .toArray();
  return docs.map((d) => ({ id: d._id, tenantId: d.tenant_id }));
}
