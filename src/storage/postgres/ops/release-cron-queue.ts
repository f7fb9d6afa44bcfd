/**
 * releaseQueuedInstances — inputs: cron ids, now. For each cron whose live instances are all
 * BLOCKED (queued by overlap policy `queue`, or behind a cancelled or earlier instance), the oldest
 * queued one becomes PENDING. Output: the released instances (due entries for their partition
 * owners). Guarantee: per cron, under the cron row's lock (`SELECT … FOR UPDATE`, crons taken in id
 * order), the same lock fireCrons' compare-and-set holds: a release and a firing of one cron, on
 * any nodes, run one after the other, and the release is itself a compare-and-set on BLOCKED. So
 * at most one instance of a cron is ever out of BLOCKED and not terminal; calling it again, or from
 * two nodes at once, releases nothing more. (An instance whose cron was deleted has no row to
 * lock; it is released on the compare-and-set alone.)
 */
import type { Db } from '../db';
import type { DueEntry, TaskState } from '../../../domain/task';
import { TRANSITIONS, canTransition } from '../../../domain/state-machine';
import { DUE_COLUMNS, TaskRow, dueEntryFromRow } from '../../sql/row-mapping';
import { sqlState, sqlStates } from '../../sql/state-sql';
import { LIVE_CRON_INSTANCES_SQL } from './fire-crons';

/** Releases the oldest queued instance of each cron whose live instances are all BLOCKED. */
export async function releaseQueuedInstances(db: Db, cronIds: string[], now: number): Promise<DueEntry[]> {
  const released: DueEntry[] = [];
  const ids = [...new Set(cronIds)];
  // The row locks in one order, before any read of instances.
  await db.query(`SELECT id FROM cron_tasks WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`, [ids]);
  for (const cronId of ids) {
    const { rows } = await db.query<TaskRow>(LIVE_CRON_INSTANCES_SQL, [cronId]);
    if (rows.length === 0 || rows.some((r) => !canTransition(r.state as TaskState, 'releaseQueued'))) continue;
    const { rows: out } = await db.query<TaskRow>(
      `UPDATE tasks SET state = ${sqlState(TRANSITIONS.releaseQueued.to)}, updated_at = $1
       WHERE id = $2 AND ${sqlStates(TRANSITIONS.releaseQueued.from)} RETURNING ${DUE_COLUMNS}`,
      [now, rows[0].id],
    );
    if (out.length > 0) released.push(dueEntryFromRow(out[0]));
  }
  return released;
}
