/**
 * purgeCronFires — inputs: before (epoch ms), limit. Deletes up to `limit` fire records whose fire
 * time is before `before`, oldest first (index cron_fires_time): a `find` of their ids, then a
 * `deleteMany` of those ids. Output: how many were deleted. Definitions and instances are not
 * touched (an instance has its own retention, see purge-finished.ts).
 */
import type { MongoCollections } from '../collections';

export async function purgeCronFires(c: MongoCollections, before: number, limit: number): Promise<number> {
  const n = Math.max(0, Math.floor(limit));
  if (n === 0) return 0;
  const ids = (
    await c.cronFires
      .find({ fire_time: { $lt: before } }, { projection: { _id: 1 } })
      .sort({ fire_time: 1 })
      .limit(n)
      .toArray()
  ).map((d) => d._id);
  if (ids.length === 0) return 0;
  return (await c.cronFires.deleteMany({ _id: { $in: ids } })).deletedCount;
}
