/**
 * Dead-letter operations.
 * replayDead — inputs: id, now. DEAD → PENDING, due now, retry budget restarted after the attempts
 * made so far (retry_base = attempts), completion fields cleared; the last error stays until the
 * next attempt ends. The dead attempt, described until now by the task fields, is pushed onto the
 * embedded history in the same update. Output: the due entry for the partition owner, or null.
 * Guarantee: one `findOneAndUpdate` with the compare-and-set `{state: 'DEAD', attempts}` (the
 * attempt count read just before): one replay per DEAD state, archive and transition together.
 * A workflow task's replay also sets `wf_replay` and `wf_done: false` in that update, then
 * resumes the descendants its death cancelled and reopens the workflow (workflow-progress.ts);
 * `wf_replay` is unset last. Crash window: a process dying in between leaves `wf_replay`; the
 * repair pass (repair-workflows.ts) resumes the descendants and recounts the workflow.
 * deleteDead — inputs: id. Deletes a DEAD task (compare-and-set on DEAD) with its embedded
 * history, in one `deleteOne`, then its attempts' log lines (`attempt_logs`; a crash in between
 * leaves lines of a task that is gone, which no read reaches). Output: whether it did.
 */
import { DueEntry } from '../../../domain/task';
import type { MongoCollections } from '../collections';
import { dueEntryFromDoc, HistoryDoc } from '../documents';
import { finishReplay } from './workflow-progress';
import { TRANSITIONS } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export async function replayDead(c: MongoCollections, id: string, now: number): Promise<DueEntry | null> {
  const dead = await c.tasks.findOne({ _id: id, state: inStates(TRANSITIONS.replay.from) }, { projection: { history: 0 } });
  if (!dead) return null;
  const update: Record<string, unknown> = {
    $set: { state: TRANSITIONS.replay.to, due_at: now, retry_base: dead.attempts, completed_at: null, result: null, updated_at: now },
  };
  if (dead.workflow_id) {
    Object.assign(update.$set as Record<string, unknown>, { wf_replay: true, wf_done: false });
  }
  if (dead.attempts > 0) {
    const archived: HistoryDoc = {
      attempt: dead.attempts,
      worker_id: dead.worker_id,
      started_at: dead.started_at ?? dead.completed_at ?? now,
      ended_at: dead.completed_at ?? now,
      outcome: 'DEAD',
      error: dead.error,
    };
    update.$push = { history: archived };
  }
  const doc = await c.tasks.findOneAndUpdate({ _id: id, state: inStates(TRANSITIONS.replay.from), attempts: dead.attempts }, update, {
    returnDocument: 'after',
  });
  if (!doc) return null;
  // A death whose own follow-up never finished left the workflow's count unknown: recount it.
  if (doc.workflow_id) await finishReplay(c, doc, now, dead.wf_done === false);
  return dueEntryFromDoc(doc);
}

export async function deleteDead(c: MongoCollections, id: string): Promise<boolean> {
  if ((await c.tasks.deleteOne({ _id: id, state: TRANSITIONS.exhaust.to })).deletedCount !== 1) return false;
  await c.attemptLogs.deleteMany({ task_id: id });
  return true;
}
