/**
 * Task reads (no writes): getTask, getAttempts, listTasks, findOrphanedAttempts, countByState.
 * Each is one query (listTasks: one `find` on the seq or (state, seq) index; countByState: one
 * `$group`). They read the primary with the client's read concern, so they see every
 * acknowledged write of this store.
 */
import { AttemptRecord, TASK_STATES, TaskRecord, TaskState, TERMINAL_STATES } from '../../../domain/task';
import { decodeCursor, encodeCursor } from '../../cursor';
import { EXTERNAL_WORKER_PREFIX, HTTP_WORKER_PREFIX } from '../../../domain/external-queues';
import { OrphanedAttempt, OrphanSearch, TaskListQuery, TaskPage } from '../../store';
import type { MongoCollections } from '../collections';
import { attemptFromHistory, fromJson, RETRY_FIELDS, retryFromDoc, TaskDoc, taskFromDoc } from '../documents';

/** A task held by a workflow insert under way is not shown yet (insert-workflow.ts). */
export async function getTask(c: MongoCollections, id: string): Promise<TaskRecord | null> {
  const doc = await c.tasks.findOne({ _id: id });
  return doc && doc.wf_hold === undefined ? taskFromDoc(doc) : null;
}

/**
 * Attempt history, oldest first: the archived attempts embedded in the task document, then the
 * final attempt of a finished task, which the task fields themselves describe (as in SQLite).
 */
export async function getAttempts(c: MongoCollections, id: string): Promise<AttemptRecord[]> {
  const doc = await c.tasks.findOne({ _id: id });
  if (!doc) return [];
  const history = (doc.history ?? []).map((h) => attemptFromHistory(id, h));
  if (doc.attempts > 0 && TERMINAL_STATES.has(doc.state as TaskState) && doc.completed_at !== null) {
    if (!history.some((a) => a.attempt === doc.attempts)) {
      history.push({
        taskId: id,
        attempt: doc.attempts,
        workerId: doc.worker_id,
        startedAt: doc.started_at ?? doc.completed_at,
        endedAt: doc.completed_at,
        outcome: doc.state as TaskState,
        error: fromJson(doc.error) as AttemptRecord['error'],
      });
    }
  }
  return history.sort((a, b) => a.attempt - b.attempt);
}

/**
 * Newest first (seq descending); the cursor is the last seq of the previous page. Tasks held by a
 * workflow insert under way are left out.
 */
export async function listTasks(c: MongoCollections, q: TaskListQuery): Promise<TaskPage> {
  const filter: Record<string, unknown> = { wf_hold: { $exists: false } };
  if (q.status) filter.state = q.status;
  if (q.taskType) filter.task_type = q.taskType;
  if (q.queue) filter.queue = q.queue;
  if (q.tenantId) filter.tenant_id = q.tenantId;
  if (q.idempotencyKey !== undefined) filter.idempotency_key = q.idempotencyKey;
  if (q.completedSince !== undefined) filter.completed_at = { $gte: q.completedSince };
  if (q.cursor !== undefined) filter.seq = { $lt: decodeCursor(q.cursor) };
  const docs = await c.tasks
    .find(filter)
    .sort({ seq: -1 })
    .limit(q.limit + 1)
    .toArray();
  const page = docs.slice(0, q.limit).map(taskFromDoc);
  const nextCursor = docs.length > q.limit && page.length > 0 ? encodeCursor(page[page.length - 1].seq) : null;
  return { tasks: page, nextCursor };
}

/** A worker id of an external consumer (the prefixes are constants without regex metacharacters). */
const EXTERNAL_WORKER_ID = new RegExp(`^(${EXTERNAL_WORKER_PREFIX}|${HTTP_WORKER_PREFIX})`);

/**
 * Every RUNNING task (embedded semantics: at start-up, all of them belong to a dead process);
 * `external: false`: not those of external consumers (worker ids `external:…`, `http:…`).
 */
export async function findOrphanedAttempts(c: MongoCollections, limit: number, options?: OrphanSearch): Promise<OrphanedAttempt[]> {
  const own = options?.external === false ? { worker_id: { $not: EXTERNAL_WORKER_ID } } : {};
  const docs = await c.tasks
    .find({ state: 'RUNNING', ...own }, { projection: { _id: 1, attempts: 1, worker_id: 1, ...RETRY_FIELDS } })
    .sort({ seq: 1 })
    .limit(limit)
    .toArray();
  return docs.map((d) => ({ taskId: d._id, attempt: d.attempts, workerId: d.worker_id, retry: retryFromDoc(d as TaskDoc) }));
}

export async function countByState(c: MongoCollections): Promise<Record<TaskState, number>> {
  const out = Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as Record<TaskState, number>;
  const groups = await c.tasks.aggregate<{ _id: TaskState; n: number }>([{ $group: { _id: '$state', n: { $sum: 1 } } }]).toArray();
  for (const g of groups) out[g._id] = g.n;
  return out;
}
