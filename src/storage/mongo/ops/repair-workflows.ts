/**
 * repairWorkflows — inputs: now (epoch ms), limit (per kind). Finishes what a process that died
 * left between the single-document writes of a workflow operation (the crash windows stated in
 * insert-workflow.ts, workflow-progress.ts, cancel-workflow.ts, dead-letter.ts). Run by the
 * retention pass (purgeFinished, every `maintenanceIntervalMs`) before it deletes anything.
 * Output: how many items it repaired.
 *
 * Only work untouched for WORKFLOW_TAKEOVER_MS (by the workflow's `created_at` / `updated_at`, the
 * task's `updated_at`) is taken: with one store instance writes never interleave, so anything
 * found is a dead process's; the age keeps the pass off an operation still under way on another
 * node. In this order:
 * 1. an insert that died CREATING is undone (its held tasks deleted, never run or shown); one that
 *    died RELEASING is completed (holds released, RUNNING); an undo that died (ABORTING) is
 *    finished;
 * 2. a replay whose follow-up is unfinished (`wf_replay`): descendants resumed;
 * 3. a task end whose follow-up is unfinished (terminal, `wf_done: false`): release (SUCCEEDED) or cancel of
 *    descendants (FAILED, DEAD, CANCELLED) — released tasks are PENDING, loaded by their
 *    partition owner's next read of due tasks (the audit's overdue repair offers them too);
 * 4. a cancel-requested RUNNING workflow: steps 2–3 of cancelWorkflow again (a no-op when they
 *    were done; such a workflow may be waiting for a running task to stop);
 * then every workflow touched by 2–4 is reconciled: `open_tasks` recounted from its tasks, its
 * status settled (or reopened), and the markers cleared last (`wf_replay` unset, `wf_done` true). Each step is idempotent, so a crash
 * of the repair itself is repaired by the next pass.
 * Guarantee: after a pass, no workflow found is left half-inserted, and none with a finished
 * task whose effects on its downstream tasks or its status are missing.
 */
import { TERMINAL_STATES } from '../../../domain/task';
import type { MongoCollections } from '../collections';
import { abortInsert, completeInsert } from './insert-workflow';
import { cancelWorkflowTasks } from './cancel-workflow';
import { cancelDescendants, reconcileWorkflow, releaseDownstream, resumeDescendants } from './workflow-progress';

/** Work untouched for this long (ms) belongs to a dead process and is repaired. */
export const WORKFLOW_TAKEOVER_MS = 60_000;

export async function repairWorkflows(c: MongoCollections, now: number, limit: number): Promise<number> {
  const stale = now - WORKFLOW_TAKEOVER_MS;
  let repaired = 0;

  for (const wf of await c.workflows
    .find({ status: 'CREATING', created_at: { $lt: stale } }, { projection: { _id: 1 } })
    .limit(limit)
    .toArray()) {
    if (await abortInsert(c, wf._id)) repaired++;
  }
  for (const wf of await c.workflows
    .find({ status: 'ABORTING', updated_at: { $lt: stale } }, { projection: { _id: 1 } })
    .limit(limit)
    .toArray()) {
    if (await abortInsert(c, wf._id)) repaired++;
  }
  const reconcile = new Set<string>();
  for (const wf of await c.workflows
    .find({ status: 'RELEASING', created_at: { $lt: stale } }, { projection: { _id: 1 } })
    .limit(limit)
    .toArray()) {
    if (await completeInsert(c, wf._id, now)) {
      reconcile.add(wf._id);
      repaired++;
    }
  }

  const cleared: Array<{ id: string; marker: 'wf_replay' | 'wf_done' }> = [];
  for (const t of await c.tasks
    .find({ wf_replay: true, updated_at: { $lt: stale } }, { projection: { history: 0 } })
    .limit(limit)
    .toArray()) {
    await resumeDescendants(c, t, now);
    reconcile.add(t.workflow_id as string);
    cleared.push({ id: t._id, marker: 'wf_replay' });
  }
  const unfinished = { wf_done: false, state: { $in: [...TERMINAL_STATES] }, updated_at: { $lt: stale } };
  for (const t of await c.tasks
    .find(unfinished, { projection: { history: 0 } })
    .limit(limit)
    .toArray()) {
    if (t.state === 'SUCCEEDED') await releaseDownstream(c, t, now);
    else await cancelDescendants(c, t, now);
    reconcile.add(t.workflow_id as string);
    cleared.push({ id: t._id, marker: 'wf_done' });
  }
  for (const wf of await c.workflows
    .find({ status: 'RUNNING', cancel_requested: true, updated_at: { $lt: stale } }, { projection: { _id: 1 } })
    .limit(limit)
    .toArray()) {
    await cancelWorkflowTasks(c, wf._id, now);
    reconcile.add(wf._id);
  }

  for (const id of reconcile) await reconcileWorkflow(c, id, now);
  for (const { id, marker } of cleared) {
    if (marker === 'wf_replay') await c.tasks.updateOne({ _id: id, wf_replay: true }, { $unset: { wf_replay: '' } });
    else await c.tasks.updateOne({ _id: id, state: { $in: [...TERMINAL_STATES] }, wf_done: false }, { $set: { wf_done: true } });
    repaired++;
  }
  return repaired;
}
