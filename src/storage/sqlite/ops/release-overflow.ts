/**
 * releaseOverflow — inputs: ids of held tasks, now. Transitions `releaseLater` (OVERFLOW →
 * SCHEDULED, due at its own `scheduled_at`, when that is after now) and `release` (OVERFLOW →
 * PENDING, due now), each a compare-and-set on OVERFLOW by id. Output: the due entries of the
 * tasks released, in the order of `ids`; a task no longer held (cancelled, released by an earlier
 * call) is left out. Guarantee: one group-commit savepoint: all the releases or none.
 */
import type Database from 'better-sqlite3';
import { DueEntry } from '../../../domain/task';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../../sql/row-mapping';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

export function prepareReleaseOverflow(db: Database.Database): (ids: readonly string[], now: number) => DueEntry[] {
  const stmt = db.prepare(`
    UPDATE tasks SET
      state = CASE WHEN scheduled_at IS NOT NULL AND scheduled_at > @now THEN ${sqlState(TRANSITIONS.releaseLater.to)} ELSE ${sqlState(TRANSITIONS.release.to)} END,
      due_at = CASE WHEN scheduled_at IS NOT NULL AND scheduled_at > @now THEN scheduled_at ELSE @now END,
      updated_at = @now
    WHERE id = @id AND ${sqlStates(TRANSITIONS.release.from)}
    RETURNING ${DUE_COLUMNS}`);
  return (ids, now) => {
    const out: DueEntry[] = [];
    for (const id of ids) {
      const row = stmt.get({ id, now }) as TaskRow | undefined;
      if (row) out.push(dueEntryFromRow(row));
    }
    return out;
  };
}
