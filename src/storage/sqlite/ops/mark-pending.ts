/**
 * markPending — inputs: task ids, now. Transition `due`: SCHEDULED/RETRYING → PENDING where
 * due_at <= now (compare-and-set on state). Output: ids that are PENDING afterwards (including
 * ones that already were). Guarantee: never touches a task in any other state.
 * With `epoch` (cluster mode, the caller's lease epoch): the compare-and-set also requires
 * owner_epoch <= epoch and sets owner_epoch = epoch; an id fenced by a newer owner (owner_epoch >
 * epoch) is neither changed nor returned. Without it the statements do not read owner_epoch (the
 * embedded hot path is unchanged).
 */
import type Database from 'better-sqlite3';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

export function prepareMarkPending(db: Database.Database): (ids: string[], now: number, epoch?: number) => string[] {
  const update = db.prepare(`
    UPDATE tasks SET state = ${sqlState(TRANSITIONS.due.to)}, updated_at = ?
    WHERE id = ? AND ${sqlStates(TRANSITIONS.due.from)} AND due_at <= ?`);
  const check = db.prepare(`SELECT state FROM tasks WHERE id = ?`).pluck();
  const fencedUpdate = db.prepare(`
    UPDATE tasks SET state = ${sqlState(TRANSITIONS.due.to)}, updated_at = ?, owner_epoch = ?
    WHERE id = ? AND ${sqlStates(TRANSITIONS.due.from)} AND due_at <= ? AND owner_epoch <= ?`);
  const fencedCheck = db.prepare(`SELECT state FROM tasks WHERE id = ? AND owner_epoch <= ?`).pluck();
  return (ids, now, epoch) => {
    const pending: string[] = [];
    if (epoch !== undefined) {
      for (const id of ids) {
        if (fencedUpdate.run(now, epoch, id, now, epoch).changes === 1 || fencedCheck.get(id, epoch) === TRANSITIONS.due.to)
          pending.push(id);
      }
      return pending;
    }
    for (const id of ids) {
      if (update.run(now, id, now).changes === 1 || check.get(id) === TRANSITIONS.due.to) pending.push(id);
    }
    return pending;
  };
}
