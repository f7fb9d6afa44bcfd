/**
 * completeAttempts — inputs: AttemptCompletion[] (decided by the retry policy), now. Output: a
 * CompletionResult per input, in input order, `applied: false` for stale or duplicate completions.
 *
 * Each completion is a compare-and-set `{_id, attempts: attempt, state: 'RUNNING'}` (with
 * `lease_expires_at < leaseExpiredBefore` for a lease sweep's, so a heartbeat since wins) in one
 * `findOneAndUpdate`:
 * - a terminal target (SUCCEEDED, FAILED, DEAD, CANCELLED) sets it with completed_at = now; the
 *   final attempt stays described by the task document itself (as in SQLite);
 * - a RETRYING target is two conditional updates, because its outcome depends on the cancel flag
 *   and the server cannot branch without an update pipeline (FerretDB has none): first with
 *   `cancel_requested: false` → RETRYING (due_at = retryAt), or PENDING at once when
 *   retryAt ≤ now; if that misses, with `cancel_requested: true` → CANCELLED. The flag only goes
 *   false → true while RUNNING, so exactly one of the two can match. The ending attempt is pushed
 *   onto the document's `history` in the same update, so the run history can never miss an
 *   attempt (no second write, no crash window); its worker and start come from a read of the
 *   RUNNING document, which cannot change them before the compare-and-set succeeds. A free retry
 *   (`freeRetry`) also moves the budget on in that update (`retry_base` + 1).
 * Workflow tasks: after a terminal compare-and-set the workflow steps run (workflow-progress.ts):
 * SUCCEEDED releases the downstream tasks whose last dependency it was (returned in `released`);
 * FAILED, DEAD or CANCELLED cancels its descendants (`upstream_failed`); then the workflow's count,
 * at 0 its final status; `wf_done` = true last. These steps run one completion after another, in
 * input order, once every compare-and-set of the call is done: tasks of one workflow share
 * documents (a join task, the workflow), and FerretDB does not apply concurrent updates of one
 * document atomically (docs/MONGODB.md). Crash window: a process dying after the task's
 * compare-and-set and before `wf_done` is set leaves a terminal task with `wf_done: false`; the
 * repair pass (repair-workflows.ts) finishes the steps and recounts the workflow.
 * Guarantee: an attempt completes at most once; a task never moves backwards. Completions of one
 * task apply in input order; different tasks side by side (a few at a time, ops/bounded.ts).
 */
import { TaskState, TERMINAL_STATES } from '../../../domain/task';
import { AttemptCompletion, CompletionResult } from '../../store';
import type { MongoCollections } from '../collections';
import { dueEntryFromDoc, HistoryDoc, TaskDoc, toJson } from '../documents';
import { mapBounded, WRITE_PARALLELISM } from './bounded';
import { finishProgress } from './workflow-progress';
import { TRANSITIONS } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export async function completeAttempts(c: MongoCollections, completions: AttemptCompletion[], now: number): Promise<CompletionResult[]> {
  // Completions of one task in input order (one lane per task); different tasks side by side.
  const lanes = new Map<string, number[]>();
  completions.forEach((comp, i) => lanes.set(comp.taskId, [...(lanes.get(comp.taskId) ?? []), i]));
  const results = new Array<CompletionResult>(completions.length);
  const ended = new Array<TaskDoc | null>(completions.length).fill(null);
  await mapBounded([...lanes.values()], WRITE_PARALLELISM, async (lane) => {
    for (const i of lane) [results[i], ended[i]] = await completeOne(c, completions[i], now);
  });
  for (let i = 0; i < completions.length; i++) {
    const doc = ended[i];
    if (!doc) continue;
    const released = await finishProgress(c, doc, now);
    if (doc.state === 'SUCCEEDED') results[i].released = released;
  }
  return results;
}

/** The compare-and-set of one completion; with the document of a workflow task it made terminal (its follow-up is the caller's). */
async function completeOne(c: MongoCollections, comp: AttemptCompletion, now: number): Promise<[CompletionResult, TaskDoc | null]> {
  const cas = {
    _id: comp.taskId,
    attempts: comp.attempt,
    state: inStates(TRANSITIONS.succeed.from),
    // A lease sweep's completion: only while the lease it found expired still is (a heartbeat since wins).
    ...(comp.leaseExpiredBefore !== undefined ? { lease_expires_at: { $lt: comp.leaseExpiredBefore } } : {}),
  };
  const error = toJson(comp.error);
  const common = { duration_ms: comp.durationMs, error, lease_expires_at: null, updated_at: now };
  let doc: TaskDoc | null;
  if (comp.state === 'RETRYING') {
    const running = await c.tasks.findOne(cas, { projection: { worker_id: 1, started_at: 1 } });
    if (!running) return [await notApplied(c, comp.taskId), null];
    const entry: HistoryDoc = {
      attempt: comp.attempt,
      worker_id: running.worker_id,
      started_at: running.started_at ?? now,
      ended_at: now,
      outcome: 'RETRYING',
      error,
    };
    const retryAt = comp.retryAt ?? now;
    doc = await c.tasks.findOneAndUpdate(
      { ...cas, cancel_requested: false },
      {
        $set: {
          ...common,
          state: retryAt <= now ? TRANSITIONS.retryNow.to : TRANSITIONS.retry.to,
          due_at: retryAt,
          completed_at: null,
          result: null,
        },
        $push: { history: entry },
        // A free retry moves the budget on, so the attempt is not counted.
        ...(comp.freeRetry ? { $inc: { retry_base: 1 } } : {}),
      },
      { returnDocument: 'after' },
    );
    doc ??= await c.tasks.findOneAndUpdate(
      { ...cas, cancel_requested: true },
      { $set: { ...common, state: TRANSITIONS.cancelRunning.to, completed_at: now, result: null } },
      { returnDocument: 'after' },
    );
  } else {
    const result = comp.state === 'SUCCEEDED' ? toJson(comp.result) : null;
    doc = await c.tasks.findOneAndUpdate(
      cas,
      { $set: { ...common, state: comp.state, completed_at: now, result } },
      { returnDocument: 'after' },
    );
  }
  if (!doc) return [await notApplied(c, comp.taskId), null];
  const state = doc.state as TaskState;
  // A due entry only for a task that waits again (the Store contract).
  const entry = state === TRANSITIONS.retryNow.to || state === TRANSITIONS.retry.to ? dueEntryFromDoc(doc) : null;
  const out: CompletionResult = { taskId: comp.taskId, applied: true, state, entry, taskType: doc.task_type };
  return [out, doc.workflow_id && TERMINAL_STATES.has(state) ? doc : null];
}

async function notApplied(c: MongoCollections, taskId: string): Promise<CompletionResult> {
  const found = await c.tasks.findOne({ _id: taskId }, { projection: { state: 1, task_type: 1 } });
  return {
    taskId,
    applied: false,
    state: (found?.state as TaskState | undefined) ?? null,
    entry: null,
    taskType: found?.task_type ?? null,
  };
}
