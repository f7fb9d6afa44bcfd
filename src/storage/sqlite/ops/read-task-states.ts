/**
 * getTaskStates: the states of many tasks in one read (the `?wait=` waiters' re-check).
 * Inputs: task ids (any number; duplicates allowed). Outputs: id → state for each id that exists
 * (absent ids are missing from the map). Guarantee: one statement per 500 ids on the caller's
 * connection, committed data only; no write.
 */
import type Database from 'better-sqlite3';
import type { TaskState } from '../../../domain/task';

/** Ids per statement (the id list travels as one JSON array parameter). */
const CHUNK = 500;

export function prepareGetTaskStates(db: Database.Database): (ids: readonly string[]) => Map<string, TaskState> {
  const stmt = db.prepare(`SELECT id, state FROM tasks WHERE id IN (SELECT value FROM json_each(?))`);
  return (ids) => {
    const states = new Map<string, TaskState>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = stmt.all(JSON.stringify(ids.slice(i, i + CHUNK))) as Array<{ id: string; state: TaskState }>;
      for (const r of rows) states.set(r.id, r.state);
    }
    return states;
  };
}
