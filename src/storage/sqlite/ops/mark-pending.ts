/**
 * markPending — inputs: task ids, now. Transition `due`: SCHEDULED/RETRYING → PENDING where
 * due_at <= now (compare-and-set on state). Output: ids that are PENDING afterwards (including
 * ones that already were). Guarantee: never touches a task in any other state.
 */
import type Database from 'better-sqlite3';

export function prepareMarkPending(db: Database.Database): (ids: string[], now: number) => string[] {
  const update = db.prepare(`
    UPDATE tasks SET state = 'PENDING', updated_at = ?
    WHERE id = ? AND state IN ('SCHEDULED', 'RETRYING') AND due_at <= ?`);
  const check = db.prepare(`SELECT state FROM tasks WHERE id = ?`).pluck();
  return (ids, now) => {
    const pending: string[] = [];
    for (const id of ids) {
      if (update.run(now, id, now).changes === 1 || check.get(id) === 'PENDING') pending.push(id);
    }
    return pending;
  };
}
