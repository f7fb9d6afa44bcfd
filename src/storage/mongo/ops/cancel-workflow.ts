/**
 * cancelWorkflow — inputs: workflow id, now. Output: the workflow as it is after the writes and
 * the running attempts to abort; or conflict (already finished) / not_found (unknown, or its
 * insert has not completed).
 *
 * Order of single-document writes (no transactions):
 * 1. compare-and-set on status RUNNING: cancel_requested = true (the commit point: from here the
 *    workflow ends CANCELLED whatever its tasks do, see `finalWorkflowStatus`);
 * 2. every task of the workflow not yet started (SCHEDULED, PENDING, RETRYING, BLOCKED) →
 *    CANCELLED, error type `workflow_cancelled` (`updateMany` filtered on those states);
 * 3. its RUNNING tasks get cancel_requested (their completion then decides CANCELLED, or
 *    SUCCEEDED if they finished first), then are read for the answer;
 * 4. `open_tasks` − the tasks step 2 cancelled; CANCELLED at once when none is left open, else
 *    when its last running task ends.
 * Guarantee: a task cancelled here is never claimed (a claim needs PENDING); the steps are
 * idempotent. Crash window: a process dying after step 1 leaves a RUNNING, cancel-requested
 * workflow whose tasks may still wait and whose `open_tasks` may be too high; the repair pass
 * (repair-workflows.ts) redoes steps 2–3 for such a workflow untouched for WORKFLOW_TAKEOVER_MS
 * and recounts `open_tasks` from its tasks (so it settles). With one store, writes do not
 * interleave; across nodes, a task whose attempt ends in a retry between steps 2 and 3 on
 * another node is not cancelled by this call (its next attempt runs; the workflow still ends
 * CANCELLED).
 */
import { WORKFLOW_CANCELLED } from '../../../domain/workflow';
import { WorkflowCancelResult } from '../../store';
import type { MongoCollections } from '../collections';
import { isVisibleWorkflow, workflowFromDoc } from '../workflow-documents';
import { closeTasks } from './workflow-progress';
import { GUARDS, TRANSITIONS } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export async function cancelWorkflow(c: MongoCollections, id: string, now: number): Promise<WorkflowCancelResult> {
  const marked = await c.workflows.updateOne({ _id: id, status: 'RUNNING' }, { $set: { cancel_requested: true, updated_at: now } });
  if (marked.matchedCount !== 1) {
    const doc = await c.workflows.findOne({ _id: id });
    return doc && isVisibleWorkflow(doc) ? { kind: 'conflict', workflow: workflowFromDoc(doc) } : { kind: 'not_found' };
  }
  const { cancelled, running } = await cancelWorkflowTasks(c, id, now);
  await closeTasks(c, id, cancelled, now);
  const doc = await c.workflows.findOne({ _id: id });
  if (!doc) return { kind: 'not_found' }; // purged meanwhile: only possible across nodes
  return { kind: 'cancelled', workflow: workflowFromDoc(doc), running };
}

/**
 * Steps 2 and 3 (also run by the repair pass). Idempotent.
 * @returns how many tasks step 2 cancelled, and the RUNNING attempts asked to stop
 */
export async function cancelWorkflowTasks(
  c: MongoCollections,
  id: string,
  now: number,
): Promise<{ cancelled: number; running: Array<{ taskId: string; attempt: number }> }> {
  const error = JSON.stringify({ message: 'the workflow was cancelled', type: WORKFLOW_CANCELLED, retryable: false });
  const waiting = await c.tasks.updateMany(
    { workflow_id: id, state: inStates(TRANSITIONS.cancelWorkflow.from) },
    { $set: { state: TRANSITIONS.cancelWorkflow.to, error, completed_at: now, updated_at: now, wf_done: true } },
  );
  await c.tasks.updateMany({ workflow_id: id, state: inStates(GUARDS.attempt) }, { $set: { cancel_requested: true, updated_at: now } });
  const running = await c.tasks
    .find({ workflow_id: id, state: 'RUNNING', cancel_requested: true }, { projection: { _id: 1, attempts: 1 } })
    .sort({ seq: 1 })
    .toArray();
  return { cancelled: waiting.modifiedCount, running: running.map((r) => ({ taskId: r._id, attempt: r.attempts })) };
}
