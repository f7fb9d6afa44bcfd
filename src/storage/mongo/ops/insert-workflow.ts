/**
 * insertWorkflow — inputs: a validated NewWorkflow (tasks in input order, each with its state —
 * roots PENDING or SCHEDULED, the others BLOCKED — its workflow-local id and the task ids it
 * depends on). Output: each task's seq, in input order. Stores the workflow document and every
 * task, each with its edges embedded both ways (`upstream_ids`, `downstream_ids`) and `unmet_deps`
 * = its number of dependencies.
 *
 * Order of single-document writes (no transactions); the workflow document's status is the commit
 * record:
 * 1. refuse a list that repeats a task id, before writing anything;
 * 2. insert the workflow document with status CREATING (a duplicate workflow id throws here,
 *    nothing else written). Readers do not show a CREATING workflow;
 * 3. reserve one `task_seq` range for all tasks (task i gets first + i), then `insertMany`
 *    (ordered) every task BLOCKED with `wf_hold` = the state it is to take: held tasks never run
 *    (not waiting, so no owner loads them) and task reads do not show them. On an error (a task id
 *    in use) the tasks of this workflow and the document are deleted, then the error is thrown;
 * 4. compare-and-set CREATING → RELEASING: from here the insert is completed, never undone;
 * 5. release the holds (three `updateMany` on workflow id and `wf_hold`, compare-and-set on
 *    BLOCKED): roots become PENDING or SCHEDULED, the rest plain BLOCKED;
 * 6. compare-and-set RELEASING → RUNNING: the workflow is visible. Answer.
 *
 * Guarantee: an answered call stored the whole DAG, or nothing (an error is answered after the
 * undo). No reader sees part of a workflow: the workflow is shown from step 6, its tasks from
 * step 5 (a root may start a moment before step 6; its end is counted on the workflow all the
 * same). Crash windows and who repairs them — the repair pass (repair-workflows.ts, run by the
 * retention pass, purgeFinished) once the workflow is older than WORKFLOW_TAKEOVER_MS:
 * - died in 2–4 (CREATING): undone — CREATING → ABORTING, its tasks deleted, the document
 *   deleted; an ABORTING document is a repair in progress and is finished the same way. Nothing
 *   of it ever ran or was shown; the caller, never answered, submits again under a new id.
 * - died in 5–6 (RELEASING): completed — holds released, RUNNING, `open_tasks` recounted; a
 *   root may have run meanwhile (its end is counted; tasks it made ready are released then).
 * An insert that outlives WORKFLOW_TAKEOVER_MS in step 3 loses the step 4 compare-and-set to the
 * repair; it then deletes its tasks and throws (the undo wins, the caller gets an error).
 */
import { NewTask } from '../../../domain/task';
import { NewWorkflow } from '../../../domain/workflow';
import type { MongoCollections } from '../collections';
import { TaskDoc, taskToDoc, WorkflowHold } from '../documents';
import { releaseBlocked, settleIfDone } from './workflow-progress';
import { insertNumbered, reserveSeq } from './seq-counter';
import { TRANSITIONS } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export async function insertWorkflow(c: MongoCollections, w: NewWorkflow): Promise<number[]> {
  const seen = new Set<string>();
  for (const t of w.tasks) {
    if (seen.has(t.id)) throw new Error(`duplicate task id "${t.id}" in one workflow`);
    seen.add(t.id);
  }
  const now = w.createdAt;
  await insertNumbered(c, c.workflows, 'workflow_seq', (seq) => ({
    _id: w.id,
    seq,
    name: w.workflowName,
    tenant_id: w.tenantId,
    metadata: JSON.stringify(w.metadata),
    status: 'CREATING' as const,
    task_count: w.tasks.length,
    open_tasks: w.tasks.length,
    cancel_requested: false,
    created_at: now,
    updated_at: now,
    completed_at: null,
  }));

  const downstream = new Map<string, string[]>();
  for (const t of w.tasks) for (const up of t.dependsOn) downstream.set(up, [...(downstream.get(up) ?? []), t.id]);
  const first = w.tasks.length > 0 ? await reserveSeq(c, 'task_seq', w.tasks.length) : 0;
  const docs: TaskDoc[] = w.tasks.map((t, i) => ({
    // Workflow tasks carry no idempotency key (as in the SQLite store); BLOCKED and held until step 5.
    ...taskToDoc({ ...t, state: 'BLOCKED', idempotencyKey: null, idempotency: undefined } as unknown as NewTask, first + i),
    workflow_id: w.id,
    workflow_task_id: t.workflowTaskId,
    unmet_deps: t.dependsOn.length,
    upstream_ids: t.dependsOn,
    downstream_ids: downstream.get(t.id) ?? [],
    met_deps: [],
    wf_done: false,
    wf_hold: t.state as WorkflowHold,
  }));
  try {
    if (docs.length > 0) await c.tasks.insertMany(docs, { ordered: true });
  } catch (err) {
    await abortInsert(c, w.id);
    throw err;
  }

  const releasing = await c.workflows.updateOne({ _id: w.id, status: 'CREATING' }, { $set: { status: 'RELEASING', updated_at: now } });
  if (releasing.modifiedCount !== 1) {
    // The repair pass took this insert for a dead one and is undoing it: finish the undo, refuse.
    await abortInsert(c, w.id);
    throw new Error(`workflow ${w.id}: the insert took longer than the repair's takeover age and was undone`);
  }
  await completeInsert(c, w.id, now);
  return docs.map((d) => d.seq);
}

/**
 * Steps 5 and 6 of an insert in RELEASING (the insert itself, or the repair of one that died
 * there). Idempotent. @returns whether the workflow is RUNNING (visible) afterwards
 */
export async function completeInsert(c: MongoCollections, workflowId: string, now: number): Promise<boolean> {
  const held = { workflow_id: workflowId, state: inStates(TRANSITIONS.unblock.from) };
  await c.tasks.updateMany(
    { ...held, wf_hold: 'PENDING' },
    { $set: { state: TRANSITIONS.unblock.to, updated_at: now }, $unset: { wf_hold: '' } },
  );
  await c.tasks.updateMany(
    { ...held, wf_hold: 'SCHEDULED' },
    { $set: { state: TRANSITIONS.unblockLater.to, updated_at: now }, $unset: { wf_hold: '' } },
  );
  await c.tasks.updateMany({ ...held, wf_hold: 'BLOCKED' }, { $unset: { wf_hold: '' } });
  const wf = await c.workflows.findOneAndUpdate(
    { _id: workflowId, status: 'RELEASING' },
    { $set: { status: 'RUNNING', updated_at: now } },
    { returnDocument: 'after' },
  );
  if (wf && wf.open_tasks < wf.task_count) {
    // Tasks ended while RELEASING (only after a crash, or from another node): a held task whose
    // upstreams succeeded then was counted but not released (held tasks are not); release it now.
    const ready = await c.tasks
      .find(
        { workflow_id: workflowId, state: inStates(TRANSITIONS.unblock.from), unmet_deps: { $lte: 0 } },
        { projection: { _id: 1, scheduled_at: 1 } },
      )
      .toArray();
    for (const t of ready) await releaseBlocked(c, t, now);
    await settleIfDone(c, wf, now);
  }
  return wf !== null;
}

/**
 * Undoes an insert: the workflow document CREATING (or ABORTING: an undo resumed) → ABORTING, the
 * tasks of the workflow deleted, then the document. Also deletes the tasks when the document is
 * gone already (an undo by the repair pass that finished while this insert was still writing).
 * Idempotent; a crash in it leaves ABORTING, which the repair pass finishes.
 * @returns false when the workflow is in another status (its insert went on): nothing is deleted
 */
export async function abortInsert(c: MongoCollections, workflowId: string): Promise<boolean> {
  const mine = await c.workflows.updateOne(
    { _id: workflowId, status: { $in: ['CREATING', 'ABORTING'] } },
    { $set: { status: 'ABORTING' } },
  );
  if (mine.matchedCount !== 1 && (await c.workflows.findOne({ _id: workflowId }, { projection: { _id: 1 } })) !== null) return false;
  await c.tasks.deleteMany({ workflow_id: workflowId });
  await c.workflows.deleteOne({ _id: workflowId, status: 'ABORTING' });
  return true;
}
