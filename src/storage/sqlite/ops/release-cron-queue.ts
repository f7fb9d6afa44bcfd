/**
 * releaseQueuedInstances — inputs: cron ids, now. For each cron whose live instances are all
 * BLOCKED (queued by overlap policy `queue`), the oldest queued one becomes PENDING. Output: the
 * released instances (due entries for their partition owners). Guarantee: atomic per call inside
 * one group-commit savepoint, so at most one instance of a `queue` cron is ever out of BLOCKED
 * and not terminal; calling it again, or from two evaluators, releases nothing more.
 */
import type Database from 'better-sqlite3';
import { DueEntry } from '../../../domain/task';
import { DUE_COLUMNS, TaskRow, dueEntryFromRow } from '../../sql/row-mapping';
import { LIVE_CRON_INSTANCES_SQL } from './fire-crons';
import { TaskState } from '../../../domain/task';
import { TRANSITIONS, canTransition } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

export function prepareReleaseQueuedInstances(db: Database.Database): (cronIds: string[], now: number) => DueEntry[] {
  const live = db.prepare(LIVE_CRON_INSTANCES_SQL);
  const release = db.prepare(`
    UPDATE tasks SET state = ${sqlState(TRANSITIONS.releaseQueued.to)}, updated_at = ? WHERE id = ? AND ${sqlStates(TRANSITIONS.releaseQueued.from)} RETURNING ${DUE_COLUMNS}`);
  return (cronIds, now) => {
    const released: DueEntry[] = [];
    for (const cronId of new Set(cronIds)) {
      const rows = live.all(cronId) as TaskRow[];
      if (rows.length === 0 || rows.some((r) => !canTransition(r.state as TaskState, 'releaseQueued'))) continue;
      const row = release.get(now, rows[0].id) as TaskRow | undefined;
      if (row) released.push(dueEntryFromRow(row));
    }
    return released;
  };
}
