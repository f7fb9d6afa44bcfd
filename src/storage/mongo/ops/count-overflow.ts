/**
 * countOverflowByTenant — inputs: none. Output: tenant → tasks held (state OVERFLOW); tenants
 * with none are absent. Guarantee: one `$group` over the tasks the `tasks_state_seq` index finds
 * in state OVERFLOW (at most `overflow.maxTasks` plus one batch).
 */
import type { MongoCollections } from '../collections';

export async function countOverflowByTenant(c: MongoCollections): Promise<Record<string, number>> {
  const groups = await c.tasks
    .aggregate<{ _id: string; n: number }>([{ $match: { state: 'OVERFLOW' } }, { $group: { _id: '$tenant_id', n: { $sum: 1 } } }])
    .toArray();
  return Object.fromEntries(groups.map((g) => [g._id, g.n]));
}
