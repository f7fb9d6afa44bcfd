/**
 * purgeCronFires — inputs: before (epoch ms), limit. Deletes up to `limit` fire records whose fire
 * time is before `before`, oldest first (index cron_fires_time). Output: how many were deleted.
 * Guarantee: one statement inside the caller's transaction; definitions and instances are not
 * touched (an instance keeps its own retention, see purge-finished.ts). Two nodes purging at once
 * delete each record once (a row deleted by the other is skipped, not counted).
 */
import type { Db } from '../db';

/** Deletes up to `limit` fire records older than `before`, oldest first. @returns how many */
export async function purgeCronFires(db: Db, before: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM cron_fires WHERE (cron_id, fire_time) IN (
       SELECT cron_id, fire_time FROM cron_fires WHERE fire_time < $1 ORDER BY fire_time LIMIT $2)`,
    [before, Math.max(0, Math.floor(limit))],
  );
  return rowCount ?? 0;
}
