/**
 * Workflow progress: not an operation of its own, but the steps that every operation ending (or
 * restarting) a workflow task runs after its own compare-and-set — completeAttempts, cancelTask,
 * cancelWorkflow, replayDead — and that the repair pass (repair-workflows.ts) runs again for an
 * operation a crash interrupted. Same rules as the SQLite store (src/storage/sqlite/ops/
 * workflow-progress.ts); without a transaction, every step is written so that running it twice
 * changes nothing the second time:
 * - release (a task SUCCEEDED): each direct downstream task still BLOCKED gets the upstream added
 *   to `met_deps` and `unmet_deps` decremented, in one update filtered on `met_deps` not holding
 *   it yet (a repeat cannot count twice); one at 0 is released by a compare-and-set
 *   BLOCKED → PENDING (or SCHEDULED, due at its own later `scheduled_at`). Output: their entries.
 * - cancel descendants (a task ended FAILED, DEAD or CANCELLED): every descendant still waiting or
 *   BLOCKED becomes CANCELLED (`upstream_failed` naming the task), one `updateMany` per 1,000 ids
 *   filtered on those states; the descendants are found breadth-first over `downstream_ids`, each
 *   read once, so diamonds and wide fan-ins cost O(descendants + their edges).
 * - close: `open_tasks` decremented by the tasks that became terminal (`$inc`, exact when each
 *   step runs once); at 0 the workflow gets its final status (`finalWorkflowStatus`) as a
 *   compare-and-set on RUNNING and on the cancel flag it was computed with.
 * - reconcile (repair only, where an `$inc` may have been applied or not): `open_tasks` recounted
 *   from the tasks and set; a finished workflow with open tasks again is RUNNING; then as close.
 * - resume (a DEAD task was replayed): descendants it had cancelled (`upstream_failed`) whose
 *   upstreams can all still succeed go back to BLOCKED with recounted `unmet_deps`/`met_deps`, in
 *   topological order (compare-and-set on CANCELLED); the workflow is reopened.
 * Markers: a workflow task is stored with `wf_done: false`; once its end has been applied by the
 * steps above, `wf_done` is set true, last (a replay sets `wf_replay`, cleared last the same way).
 * A crash in between leaves a terminal task with `wf_done: false`, and the repair pass finishes
 * the steps (documents.ts, docs/MONGODB.md). Tasks ended by a covering cancel (their upstream's,
 * their workflow's) get `wf_done: true` in that same update.
 */
import { descendantsByLevel } from '../../../domain/dag/descendants';
import { DueEntry, TaskState, TERMINAL_STATES } from '../../../domain/task';
import { finalWorkflowStatus, UPSTREAM_FAILED, WORKFLOW_STATUSES } from '../../../domain/workflow';
import type { MongoCollections } from '../collections';
import { dueEntryFromDoc, fromJson, TaskDoc } from '../documents';
import type { WorkflowDoc } from '../workflow-documents';
import { mapBounded, WRITE_PARALLELISM } from './bounded';
import { MAX_ROUNDS } from './retry-rounds';
import { TRANSITIONS, canTransition } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

/** Most ids sent in one `$in` list. */
const ID_CHUNK = 1000;

export function chunks<T>(items: readonly T[], size = ID_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The fields of a workflow task the steps read. */
type Node = Pick<TaskDoc, '_id' | 'state' | 'error' | 'scheduled_at' | 'upstream_ids' | 'downstream_ids'>;
const NODE_FIELDS = { _id: 1, state: 1, error: 1, scheduled_at: 1, upstream_ids: 1, downstream_ids: 1 } as const;

/**
 * Release step of SUCCEEDED task `upId`: see the header. Idempotent.
 * @returns the entries of the tasks released (PENDING or SCHEDULED)
 */
export async function releaseDownstream(
  c: MongoCollections,
  up: Pick<TaskDoc, '_id' | 'downstream_ids'>,
  now: number,
): Promise<DueEntry[]> {
  const released = await mapBounded(up.downstream_ids ?? [], WRITE_PARALLELISM, async (id) => {
    let t = await c.tasks.findOneAndUpdate(
      { _id: id, state: inStates(TRANSITIONS.unblock.from), met_deps: { $ne: up._id } },
      { $addToSet: { met_deps: up._id }, $inc: { unmet_deps: -1 }, $set: { updated_at: now } },
      { returnDocument: 'after' },
    );
    if (!t) {
      // Counted already (a repeat after a crash): still release it if that was its last one.
      t = await c.tasks.findOne({ _id: id }, { projection: { history: 0 } });
      if (!t || !canTransition(t.state as TaskState, 'unblock') || !(t.met_deps ?? []).includes(up._id)) return null;
    }
    if ((t.unmet_deps ?? 0) > 0 || t.wf_hold !== undefined) return null;
    return releaseBlocked(c, t, now);
  });
  return released.filter((e): e is DueEntry => e !== null);
}

/** BLOCKED → PENDING, or SCHEDULED due at its own later `scheduled_at` (compare-and-set on BLOCKED, nothing unmet). */
export async function releaseBlocked(c: MongoCollections, t: Pick<TaskDoc, '_id' | 'scheduled_at'>, now: number): Promise<DueEntry | null> {
  const later = t.scheduled_at !== null && t.scheduled_at > now;
  const doc = await c.tasks.findOneAndUpdate(
    { _id: t._id, state: inStates(TRANSITIONS.unblock.from), unmet_deps: { $lte: 0 } },
    {
      $set: {
        state: later ? TRANSITIONS.unblockLater.to : TRANSITIONS.unblock.to,
        due_at: Math.max(t.scheduled_at ?? now, now),
        updated_at: now,
      },
    },
    { returnDocument: 'after' },
  );
  return doc ? dueEntryFromDoc(doc) : null;
}

/**
 * Every task reachable from `root` over `downstream_ids` (the domain's breadth-first search, one
 * level per batch of reads; each task read once), with the fields the steps read.
 */
async function descendantsOf(c: MongoCollections, root: Pick<TaskDoc, '_id' | 'downstream_ids'>): Promise<Map<string, Node>> {
  const found = new Map<string, Node>();
  await descendantsByLevel([root._id], async (frontier) => {
    const dependents = new Map<string, readonly string[]>();
    const ids = frontier.filter((id) => id !== root._id);
    if (ids.length < frontier.length) dependents.set(root._id, root.downstream_ids ?? []);
    for (const part of chunks(ids)) {
      for (const d of await c.tasks.find({ _id: { $in: part } }, { projection: NODE_FIELDS }).toArray()) {
        found.set(d._id, d);
        dependents.set(d._id, d.downstream_ids ?? []);
      }
    }
    return dependents;
  });
  return found;
}

/**
 * Cancel step of task `ended` (local id `workflow_task_id`) that became `state` (FAILED, DEAD,
 * CANCELLED): see the header. Idempotent. @returns how many descendants this call cancelled
 */
export async function cancelDescendants(
  c: MongoCollections,
  ended: Pick<TaskDoc, '_id' | 'workflow_task_id' | 'downstream_ids' | 'state'>,
  now: number,
): Promise<number> {
  if ((ended.downstream_ids ?? []).length === 0) return 0;
  const ids = [...(await descendantsOf(c, ended)).keys()];
  const error = JSON.stringify({
    message: `upstream task "${ended.workflow_task_id ?? ended._id}" ended ${ended.state}`,
    type: UPSTREAM_FAILED,
    retryable: false,
  });
  let n = 0;
  for (const part of chunks(ids)) {
    const r = await c.tasks.updateMany(
      { _id: { $in: part }, state: inStates(TRANSITIONS.upstreamFailed.from) },
      { $set: { state: TRANSITIONS.upstreamFailed.to, error, completed_at: now, updated_at: now, lease_expires_at: null, wf_done: true } },
    );
    n += r.modifiedCount;
  }
  return n;
}

/** Close step: `n` more tasks of the workflow are terminal; settles it at 0. */
export async function closeTasks(c: MongoCollections, workflowId: string, n: number, now: number): Promise<void> {
  if (n === 0) return;
  const wf = await c.workflows.findOneAndUpdate(
    { _id: workflowId },
    { $inc: { open_tasks: -n }, $set: { updated_at: now } },
    { returnDocument: 'after' },
  );
  await settleIfDone(c, wf, now);
}

/**
 * Reconcile step (repair): `open_tasks` recounted from the tasks; reopens a finished workflow that
 * has open tasks again, settles one that has none. Only for visible workflows (not mid-insert).
 */
export async function reconcileWorkflow(c: MongoCollections, workflowId: string, now: number): Promise<void> {
  const open = await c.tasks.countDocuments({ workflow_id: workflowId, state: { $nin: [...TERMINAL_STATES] } });
  const update: Partial<WorkflowDoc> =
    open > 0 ? { open_tasks: open, status: 'RUNNING', completed_at: null, updated_at: now } : { open_tasks: 0, updated_at: now };
  const wf = await c.workflows.findOneAndUpdate(
    { _id: workflowId, status: { $in: [...WORKFLOW_STATUSES] } },
    { $set: update },
    { returnDocument: 'after' },
  );
  await settleIfDone(c, wf, now);
}

/**
 * A RUNNING workflow without open tasks gets its final status and completed_at = now, by a
 * compare-and-set on RUNNING, no open tasks and the cancel flag the status was computed with
 * (a cancel landing in between is read again).
 */
export async function settleIfDone(c: MongoCollections, wf: WorkflowDoc | null, now: number): Promise<void> {
  for (let round = 0; wf && wf.status === 'RUNNING' && wf.open_tasks <= 0 && round < MAX_ROUNDS; round++) {
    const [failed, cancelled] = await Promise.all([
      c.tasks.countDocuments({ workflow_id: wf._id, state: { $in: ['FAILED', 'DEAD'] } }),
      c.tasks.countDocuments({ workflow_id: wf._id, state: 'CANCELLED' }),
    ]);
    const status = finalWorkflowStatus({ failed, cancelled, cancelRequested: wf.cancel_requested === true });
    const done = await c.workflows.updateOne(
      { _id: wf._id, status: 'RUNNING', open_tasks: { $lte: 0 }, cancel_requested: wf.cancel_requested },
      { $set: { status, completed_at: now, updated_at: now } },
    );
    if (done.modifiedCount === 1) return;
    wf = await c.workflows.findOne({ _id: wf._id });
  }
}

/**
 * The live follow-up of a workflow task that just became terminal (its document, as its
 * compare-and-set returned it): release or cancel, close, then `wf_done` = true.
 * @returns the tasks released (a SUCCEEDED task), else []
 */
export async function finishProgress(c: MongoCollections, task: TaskDoc, now: number): Promise<DueEntry[]> {
  const workflowId = task.workflow_id as string;
  let released: DueEntry[] = [];
  let closed = 1;
  if (task.state === 'SUCCEEDED') released = await releaseDownstream(c, task, now);
  else closed += await cancelDescendants(c, task, now);
  await closeTasks(c, workflowId, closed, now);
  await c.tasks.updateOne({ _id: task._id, state: task.state, wf_done: false }, { $set: { wf_done: true } });
  return released;
}

/**
 * Resume step of replayed task `taskId`: see the header. An upstream "can still succeed" when it is
 * SUCCEEDED, not terminal (the replayed task itself: PENDING), or resumed here. A candidate with
 * nothing unmet (possible only when the repair runs after the replayed task already succeeded) is
 * released at once instead of BLOCKED. Idempotent (a resumed task is no longer CANCELLED).
 * @returns how many tasks it resumed
 */
export async function resumeDescendants(
  c: MongoCollections,
  replayed: Pick<TaskDoc, '_id' | 'downstream_ids'>,
  now: number,
): Promise<number> {
  const found = await descendantsOf(c, replayed);
  const isCandidate = (d: Node) => d.state === 'CANCELLED' && (fromJson(d.error) as { type?: string } | null)?.type === UPSTREAM_FAILED;
  const candidates = new Map([...found].filter(([, d]) => isCandidate(d)));
  if (candidates.size === 0) return 0;
  // Current states of every upstream of a candidate (descendants are known; the others are read).
  const state = new Map<string, TaskState>([...found].map(([id, d]) => [id, d.state as TaskState]));
  const missing = [...new Set([...candidates.values()].flatMap((d) => d.upstream_ids ?? []))].filter((id) => !state.has(id));
  for (const ids of chunks(missing)) {
    for (const u of await c.tasks.find({ _id: { $in: ids } }, { projection: { _id: 1, state: 1 } }).toArray())
      state.set(u._id, u.state as TaskState);
  }
  // Kahn's algorithm over the candidates: a task is decided after all its candidate upstreams.
  const waiting = new Map<string, number>();
  const queue: string[] = [];
  for (const [id, d] of candidates) {
    const n = (d.upstream_ids ?? []).filter((u) => candidates.has(u)).length;
    waiting.set(id, n);
    if (n === 0) queue.push(id);
  }
  const resumed = new Set<string>();
  for (let head = 0; head < queue.length; head++) {
    const id = queue[head];
    const d = candidates.get(id) as Node;
    const ups = d.upstream_ids ?? [];
    const canRun = (u: string) => {
      const s = state.get(u);
      return resumed.has(u) || (s !== undefined && (s === 'SUCCEEDED' || !TERMINAL_STATES.has(s)));
    };
    if (ups.every(canRun)) {
      const met = ups.filter((u) => !resumed.has(u) && state.get(u) === 'SUCCEEDED');
      const unmet = ups.length - met.length;
      const later = d.scheduled_at !== null && d.scheduled_at > now;
      const target =
        unmet > 0
          ? { state: TRANSITIONS.resume.to }
          : { state: later ? TRANSITIONS.resumeLater.to : TRANSITIONS.resumeReady.to, due_at: Math.max(d.scheduled_at ?? now, now) };
      const r = await c.tasks.updateOne(
        { _id: id, state: inStates(TRANSITIONS.resume.from) },
        { $set: { ...target, unmet_deps: unmet, met_deps: met, error: null, completed_at: null, updated_at: now, wf_done: false } },
      );
      if (r.modifiedCount === 1) resumed.add(id);
    }
    for (const next of d.downstream_ids ?? []) {
      if (!candidates.has(next)) continue;
      const left = (waiting.get(next) ?? 1) - 1;
      waiting.set(next, left);
      if (left === 0) queue.push(next);
    }
  }
  return resumed.size;
}

/**
 * The live follow-up of a replay (the document as the compare-and-set that set `wf_replay`
 * returned it): resume, reopen the workflow (`open_tasks` + the replayed task + those resumed;
 * recounted instead when `recount`, i.e. when the task's earlier end had left its own follow-up
 * unfinished), clear the marker.
 */
export async function finishReplay(c: MongoCollections, task: TaskDoc, now: number, recount: boolean): Promise<void> {
  const workflowId = task.workflow_id as string;
  const resumed = await resumeDescendants(c, task, now);
  if (recount) await reconcileWorkflow(c, workflowId, now);
  else {
    await c.workflows.updateOne(
      { _id: workflowId, status: { $in: [...WORKFLOW_STATUSES] } },
      { $inc: { open_tasks: 1 + resumed }, $set: { status: 'RUNNING', completed_at: null, updated_at: now } },
    );
  }
  await c.tasks.updateOne({ _id: task._id, wf_replay: true }, { $unset: { wf_replay: '' } });
}
