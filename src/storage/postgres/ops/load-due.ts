/**
 * loadDue — inputs: partition, until (epoch ms), limit.
 * Output: DueEntry[] of waiting tasks (SCHEDULED, PENDING, RETRYING) of the partition with
 * due_at <= until, ordered by (due_at, seq), at most `limit`. Guarantee: one statement on the pool,
 * committed data only; a range scan of the partial index `tasks_waiting_due (partition, due_at,
 * seq)`, which is in the order asked, so it stops after `limit` entries and reads no other
 * partition's entries.
 */
import type { Db } from '../db';
import { DueEntry, WAITING_STATES } from '../../../domain/task';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../../sql/row-mapping';
import { sqlStates } from '../../sql/state-sql';

/** The waiting-state condition, written as the partial index's predicate is. */
export const WAITING = sqlStates(WAITING_STATES);

const LOAD_DUE = `
  SELECT ${DUE_COLUMNS} FROM tasks
  WHERE partition = $1 AND due_at <= $2 AND ${WAITING}
  ORDER BY due_at, seq
  LIMIT $3`;

/** The partition's waiting tasks due by `until`, in (due_at, seq) order. */
export async function loadDue(db: Db, partition: number, until: number, limit: number): Promise<DueEntry[]> {
  const { rows } = await db.query<TaskRow>(LOAD_DUE, [partition, until, limit]);
  return rows.map(dueEntryFromRow);
}
