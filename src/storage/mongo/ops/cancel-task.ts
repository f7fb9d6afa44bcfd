/**
 * cancelTask — inputs: id, now. Transition `cancel`: SCHEDULED/PENDING/RETRYING/BLOCKED/OVERFLOW →
 * CANCELLED as a compare-and-set on those states; a RUNNING task gets cancel_requested = true
 * instead (compare-and-set on RUNNING; its worker is told to abort, and the attempt's completion
 * decides CANCELLED or SUCCEEDED). Terminal → conflict. Output: CancelResult with the task as it
 * is after the write.
 * Guarantee: each step is one atomic `findOneAndUpdate`. The state can change between two steps
 * (a waiting task claimed, a running one retried), so the steps repeat until one applies or the
 * task is found terminal or gone: the answer always matches a state the task really had. A
 * cancelled task is never claimed afterwards (a claim needs PENDING). A workflow task's cancel then
 * cancels its descendants (`upstream_failed`) and counts them on its workflow (workflow-progress.ts;
 * crash window and repair as in complete-attempts.ts).
 */
import { CancelResult } from '../../store';
import type { MongoCollections } from '../collections';
import { MAX_ROUNDS } from './retry-rounds';
import { taskFromDoc } from '../documents';
import { finishProgress } from './workflow-progress';
import { GUARDS, TRANSITIONS, canTransition } from '../../../domain/state-machine';
import { inSet, inStates } from '../state-filter';
import { TaskState } from '../../../domain/task';

export async function cancelTask(c: MongoCollections, id: string, now: number): Promise<CancelResult> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    // A task held by a workflow insert under way does not exist yet for callers (insert-workflow.ts).
    const waiting = { _id: id, state: inStates(TRANSITIONS.cancel.from), wf_hold: { $exists: false } };
    const set = { state: TRANSITIONS.cancel.to, completed_at: now, updated_at: now };
    const cancelled = await c.tasks.findOneAndUpdate(waiting, { $set: set }, { returnDocument: 'after' });
    if (cancelled?.workflow_id) await finishProgress(c, cancelled, now);
    if (cancelled) return { kind: 'cancelled', task: taskFromDoc(cancelled) };
    const running = await c.tasks.findOneAndUpdate(
      { _id: id, state: inStates(GUARDS.attempt) },
      { $set: { cancel_requested: true, updated_at: now } },
      { returnDocument: 'after' },
    );
    if (running) return { kind: 'cancelling', task: taskFromDoc(running) };
    const doc = await c.tasks.findOne({ _id: id });
    if (!doc || doc.wf_hold !== undefined) return { kind: 'not_found' };
    if (!inSet(GUARDS.attempt, doc.state) && !canTransition(doc.state as TaskState, 'cancel'))
      return { kind: 'conflict', task: taskFromDoc(doc) };
    // It moved between the steps (e.g. RUNNING → RETRYING): try again from its new state.
  }
  throw new Error(`task ${id} kept changing state while being updated`);
}
