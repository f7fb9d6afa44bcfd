/**
 * getTaskStates: the states of many tasks in one read (the `?wait=` waiters' re-check).
 * Inputs: task ids (any number; duplicates allowed). Outputs: id → state for each id that exists
 * and is visible (a task held by a workflow insert under way is not, as in getTask). Order of
 * writes: none (a read). Crash window: none. One `find` on `_id` per 1,000 ids, state only.
 */
import type { TaskState } from '../../../domain/task';
import type { MongoCollections } from '../collections';

/** Ids per `find`. */
const CHUNK = 1000;

export async function getTaskStates(c: MongoCollections, ids: readonly string[]): Promise<Map<string, TaskState>> {
  const states = new Map<string, TaskState>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    const docs = await c.tasks
      .find({ _id: { $in: unique.slice(i, i + CHUNK) } }, { projection: { _id: 1, state: 1, wf_hold: 1 } })
      .toArray();
    for (const d of docs) if (d.wf_hold === undefined) states.set(d._id, d.state as TaskState);
  }
  return states;
}
