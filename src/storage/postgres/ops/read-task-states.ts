/**
 * getTaskStates: the states of many tasks in one read (the `?wait=` waiters' re-check).
 * Inputs: task ids (any number; duplicates allowed). Outputs: id → state for each id that exists
 * (absent ids are missing from the map). Guarantee: one statement on the pool (the ids travel as
 * one text[] parameter, looked up through the id index), committed data only; no write.
 */
import type { Db } from '../db';
import type { TaskState } from '../../../domain/task';

/** id → state of the ids that exist. */
export async function getTaskStates(db: Db, ids: readonly string[]): Promise<Map<string, TaskState>> {
  const states = new Map<string, TaskState>();
  if (ids.length === 0) return states;
  const { rows } = await db.query<{ id: string; state: TaskState }>(`SELECT id, state FROM tasks WHERE id = ANY($1::text[])`, [
    [...new Set(ids)],
  ]);
  for (const r of rows) states.set(r.id, r.state);
  return states;
}
