/**
 * purgeFinished — inputs: before, now (epoch ms), limit. The store's periodic write pass (run by
 * Maintenance every `maintenanceIntervalMs`):
 * 1. repairs the workflow operations a dead process left half-done (repair-workflows.ts: work
 *    untouched for WORKFLOW_TAKEOVER_MS before `now`), so nothing below sees them half-done;
 * 2. deletes up to `limit` finished tasks (SUCCEEDED, FAILED, DEAD, CANCELLED) whose
 *    completed_at < before — their attempt history is embedded, so it goes with them in the same
 *    delete; their attempts' log lines (`attempt_logs`) are deleted next — except tasks of a workflow not finished (RUNNING, or still being inserted: a
 *    replay may need their results); a purged task's edges are ids in its neighbours' documents,
 *    which readers skip once the task is gone (as SQLite deletes the edge rows);
 * 3. deletes up to `limit` finished workflows whose completed_at < before;
 * 4. deletes up to `limit` idempotency keys whose expires_at ≤ now (released already; see
 *    idempotency-keys.ts).
 * Output: how many tasks and keys were deleted.
 * Guarantee: the ids are found first (index `tasks_state_completed`), then deleted with the same
 * filter repeated as a compare-and-set, so a task replayed from the dead-letter queue meanwhile
 * (PENDING, completed_at cleared) is not touched; waiting and RUNNING tasks never are. Keys are
 * deleted here, not by a TTL index: whether a key is released is decided by the `now` passed in
 * (see docs/MONGODB.md).
 */
import { TERMINAL_STATES } from '../../../domain/task';
import type { MongoCollections } from '../collections';
import { repairWorkflows } from './repair-workflows';
import { WorkflowStatus } from '../../../domain/workflow';

/** Workflow statuses whose tasks may be purged. */
const FINISHED_WORKFLOW: WorkflowStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

export async function purgeFinished(
  c: MongoCollections,
  before: number,
  now: number,
  limit: number,
): Promise<{ tasks: number; idempotencyKeys: number }> {
  const n = Math.max(0, Math.floor(limit));
  if (n === 0) return { tasks: 0, idempotencyKeys: 0 };
  await repairWorkflows(c, now, n);
  // Workflows whose tasks stay: not finished (a handful at any time, found by the status index).
  const open = (await c.workflows.find({ status: { $nin: FINISHED_WORKFLOW } }, { projection: { _id: 1 } }).toArray()).map((w) => w._id);
  const finished = {
    state: { $in: [...TERMINAL_STATES] },
    completed_at: { $lt: before },
    ...(open.length > 0 ? { workflow_id: { $nin: open } } : {}),
  };
  const ids = (
    await c.tasks
      .find(finished, { projection: { _id: 1 } })
      .limit(n)
      .toArray()
  ).map((d) => d._id);
  const tasks = ids.length === 0 ? 0 : (await c.tasks.deleteMany({ _id: { $in: ids }, ...finished })).deletedCount;
  if (tasks > 0) {
    // The log lines of the tasks really deleted (not of one replayed meantime).
    const kept = new Set((await c.tasks.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
    await c.attemptLogs.deleteMany({ task_id: { $in: ids.filter((id) => !kept.has(id)) } });
  }
  const oldWorkflows = { status: { $in: FINISHED_WORKFLOW }, completed_at: { $lt: before } };
  const wfIds = (
    await c.workflows
      .find(oldWorkflows, { projection: { _id: 1 } })
      .limit(n)
      .toArray()
  ).map((w) => w._id);
  if (wfIds.length > 0) await c.workflows.deleteMany({ _id: { $in: wfIds }, ...oldWorkflows });
  const released = { expires_at: { $lte: now } };
  const keyIds = (
    await c.idempotencyKeys
      .find(released, { projection: { _id: 1 } })
      .limit(n)
      .toArray()
  ).map((d) => d._id);
  const idempotencyKeys =
    keyIds.length === 0 ? 0 : (await c.idempotencyKeys.deleteMany({ _id: { $in: keyIds }, ...released })).deletedCount;
  return { tasks, idempotencyKeys };
}
