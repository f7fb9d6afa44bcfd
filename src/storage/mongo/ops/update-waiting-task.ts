/**
 * updateWaitingTask — inputs: id, changes {scheduledAt (epoch ms, or null = now), priority,
 * payload}, now. Changes a task that has not started its next attempt (SCHEDULED, PENDING,
 * RETRYING, BLOCKED, OVERFLOW). A new time sets scheduled_at and due_at (the later of the time and now: a
 * time already past is due now, see `buildNewTask`), and the state follows it: later
 * than now → SCHEDULED (transition `reschedule`), otherwise → PENDING (`due`); BLOCKED stays
 * BLOCKED with its due time, OVERFLOW stays held (its release reads the new `scheduled_at`).
 * Output: the updated task (and its due entry unless BLOCKED or OVERFLOW), the
 * task as it is when its state does not allow it, or not_found.
 * Guarantee: the new fields depend only on the current state, so the write is one
 * `findOneAndUpdate` with a compare-and-set on the state read just before; if the state changed
 * meanwhile it reads again. Never touches a RUNNING or finished task.
 */
import { UpdateWaitingChanges, UpdateWaitingResult } from '../../store';
import type { MongoCollections } from '../collections';
import { MAX_ROUNDS } from './retry-rounds';
import { dueEntryFromDoc, rankOfPriority, taskFromDoc } from '../documents';
import { GUARDS, TRANSITIONS, canTransition } from '../../../domain/state-machine';
import { inSet } from '../state-filter';
import { TaskState } from '../../../domain/task';

export async function updateWaitingTask(
  c: MongoCollections,
  id: string,
  changes: UpdateWaitingChanges,
  now: number,
): Promise<UpdateWaitingResult> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const current = await c.tasks.findOne({ _id: id }, { projection: { history: 0 } });
    // A task held by a workflow insert under way does not exist yet for callers (insert-workflow.ts).
    if (!current || current.wf_hold !== undefined) return { kind: 'not_found' };
    if (!inSet(GUARDS.edit, current.state)) return { kind: 'conflict', task: taskFromDoc(current) };
    const set: Record<string, unknown> = { updated_at: now };
    if (changes.scheduledAt !== undefined) {
      set.scheduled_at = changes.scheduledAt;
      if (canTransition(current.state as TaskState, 'reschedule')) {
        const dueAt = Math.max(changes.scheduledAt ?? now, now);
        set.due_at = dueAt;
        set.state = dueAt > now ? TRANSITIONS.reschedule.to : TRANSITIONS.rescheduleNow.to;
      }
    }
    if (changes.priority !== undefined) set.priority = rankOfPriority(changes.priority);
    if (changes.payload !== undefined) set.payload = JSON.stringify(changes.payload);
    const doc = await c.tasks.findOneAndUpdate({ _id: id, state: current.state }, { $set: set }, { returnDocument: 'after' });
    if (doc)
      return {
        kind: 'updated',
        task: taskFromDoc(doc),
        entry: canTransition(doc.state as TaskState, 'reschedule') ? dueEntryFromDoc(doc) : null,
      };
  }
  throw new Error(`task ${id} kept changing state while being updated`);
}
