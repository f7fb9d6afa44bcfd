/**
 * purgeCronFires — inputs: before (epoch ms), limit. Deletes up to `limit` fire records whose fire
 * time is before `before`, oldest first (index cron_fires_time). Output: how many were deleted.
 * Guarantee: one savepoint; definitions and instances are not touched (an instance keeps its
 * own retention, see purge-finished.ts).
 */
import type Database from 'better-sqlite3';

export function preparePurgeCronFires(db: Database.Database): (before: number, limit: number) => number {
  const purge = db.prepare(`
    DELETE FROM cron_fires WHERE (cron_id, fire_time) IN (
      SELECT cron_id, fire_time FROM cron_fires WHERE fire_time < ? ORDER BY fire_time LIMIT ?)`);
  return (before, limit) => purge.run(before, Math.max(0, Math.floor(limit))).changes;
}
