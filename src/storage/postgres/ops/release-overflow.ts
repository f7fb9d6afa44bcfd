/**
 * releaseOverflow — inputs: ids of held tasks, now. Transitions `releaseLater` (OVERFLOW →
 * SCHEDULED, due at its own `scheduled_at`, when that is after now) and `release` (OVERFLOW →
 * PENDING, due now), one UPDATE that is a compare-and-set on OVERFLOW per row: a task cancelled or
 * released meanwhile by another node is re-checked after its row lock and left out. Output: the
 * due entries of the tasks released, in the order of `ids`. Guarantee: one statement inside the
 * caller's transaction: all the releases or none; each task is released once.
 */
import type { Db } from '../db';
import type { DueEntry } from '../../../domain/task';
import { TRANSITIONS } from '../../../domain/state-machine';
import { DUE_COLUMNS, TaskRow, dueEntryFromRow } from '../../sql/row-mapping';
import { sqlState, sqlStates } from '../../sql/state-sql';

/** Releases the held tasks `ids` that are still held. @returns their due entries, in the order of `ids` */
export async function releaseOverflow(db: Db, ids: readonly string[], now: number): Promise<DueEntry[]> {
  if (ids.length === 0) return [];
  const later = `scheduled_at IS NOT NULL AND scheduled_at > $2`;
  const { rows } = await db.query<TaskRow>(
    `UPDATE tasks SET
       state = CASE WHEN ${later} THEN ${sqlState(TRANSITIONS.releaseLater.to)} ELSE ${sqlState(TRANSITIONS.release.to)} END,
       due_at = CASE WHEN ${later} THEN scheduled_at ELSE $2 END,
       updated_at = $2
     WHERE id = ANY($1::text[]) AND ${sqlStates(TRANSITIONS.release.from)}
     RETURNING ${DUE_COLUMNS}`,
    [[...new Set(ids)], now],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    byId.delete(id);
    return r ? [dueEntryFromRow(r)] : [];
  });
}
