/**
 * insertTasks — inputs: validated NewTask[] (SCHEDULED or PENDING, due_at set; optional
 * idempotency hash and expiry), the partition count. Output: per task, the id that stands for it,
 * whether it was a replay, and its `seq` (from the reserved range: increasing in submission order;
 * 0 for a replay).
 *
 * Order of single-document writes (no transactions):
 * 1. refuse a list that repeats an id, before writing anything;
 * 2. claim the idempotency keys in list order (idempotency-keys.ts); a conflict releases the
 *    claims made so far and throws IdempotencyConflict — no task was written yet;
 * 3. reserve one range of `seq` for the tasks to store (seq-counter.ts);
 * 4. `insertMany` ordered; on a duplicate id, delete the tasks this call inserted, release its
 *    key claims and throw — except for a task whose id was reserved by a dead earlier claim of
 *    the same request, which is adopted as it is (that is the retry converging). A duplicate
 *    key whose `_id` is not stored was on `seq`, the collection's other unique index: the rest
 *    is numbered from a new range and inserted (at most SEQ_RETRIES times). MongoDB's `$inc` never
 *    hands out a range twice; FerretDB 1.x's does under concurrent nodes (not atomic);
 * 5. commit the key claims; then answer.
 *
 * Guarantee: every answered call stored all of its list or none of it (an error is answered only
 * after the rollback), and concurrent duplicates of one keyed request make one task. Crash
 * window, documented honestly: a process that dies inside step 4 leaves the prefix it inserted;
 * it never answered, so nothing acknowledged is lost, but unkeyed tasks of that prefix stay and
 * run (at-least-once for unacknowledged submissions, as a client retry after a timeout would).
 * Keyed tasks converge: the retry takes the stale claim over and adopts the task.
 */
import { randomUUID } from 'node:crypto';
import { MongoBulkWriteError } from 'mongodb';
import { partitionOf } from '../../../domain/partition';
import { NewTask } from '../../../domain/task';
import { InsertResult } from '../../store';
import type { MongoCollections } from '../collections';
import { isDuplicateKey, TaskDoc, taskToDoc } from '../documents';
import { claimKey, commitKeys, idempotencyConflict, releaseKeys } from './idempotency-keys';
import { collidedOnSeq, reserveSeq, SEQ_RETRIES } from './seq-counter';

/** A pending key claim older than this (ms, by the tasks' createdAt) belongs to a dead call. */
export const KEY_TAKEOVER_MS = 60_000;

export async function insertTasks(c: MongoCollections, partitions: number, tasks: NewTask[]): Promise<InsertResult[]> {
  if (tasks.length === 0) return [];
  const seen = new Set<string>();
  for (const t of tasks) {
    if (seen.has(t.id)) throw new Error(`duplicate task id "${t.id}" in one insert`);
    seen.add(t.id);
  }

  const batch = randomUUID();
  const results: InsertResult[] = [];
  const toStore: Array<{ task: NewTask; adopted: boolean }> = [];
  for (const t of tasks) {
    if (t.idempotencyKey === null || !t.idempotency) {
      results.push({ taskId: t.id, replayed: false, seq: 0 });
      toStore.push({ task: t, adopted: false });
      continue;
    }
    const claim = await claimKey(c, t, batch, KEY_TAKEOVER_MS);
    if (claim.kind === 'conflict') {
      await releaseKeys(c, batch);
      throw idempotencyConflict(t, claim.heldBy, claim.inUse, claim.taskDeleted);
    }
    if (claim.kind === 'replay') {
      results.push({ taskId: claim.taskId, replayed: true, seq: 0 });
      continue;
    }
    const task = claim.taskId === t.id ? t : { ...t, id: claim.taskId, partition: partitionOf(claim.taskId, partitions) };
    results.push({ taskId: task.id, replayed: false, seq: 0 });
    toStore.push({ task, adopted: claim.adopted });
  }

  if (toStore.length > 0) {
    const first = await reserveSeq(c, 'task_seq', toStore.length);
    const docs = toStore.map((s, i) => taskToDoc(s.task, first + i));
    const inserted: string[] = [];
    try {
      await insertInOrder(c, docs, toStore, inserted);
    } catch (err) {
      if (inserted.length > 0) await c.tasks.deleteMany({ _id: { $in: inserted } });
      await releaseKeys(c, batch);
      throw err;
    }
    // Each stored task's sequence, as numbered (renumbered after a collision on seq). An adopted
    // task (stored by a dead call of the same request) keeps its own; this one is its place here.
    const seqOf = new Map(docs.map((d) => [d._id, d.seq]));
    for (const r of results) if (!r.replayed) r.seq = seqOf.get(r.taskId) ?? 0;
  }
  await commitKeys(c, batch);
  return results;
}

/**
 * Inserts `docs` in order, collecting the ids inserted into `inserted`. A duplicate id of an
 * adopted task (reserved by a dead claim of the same request) is skipped; any other error throws.
 */
async function insertInOrder(c: MongoCollections, docs: TaskDoc[], plan: Array<{ adopted: boolean }>, inserted: string[]): Promise<void> {
  let from = 0;
  let renumbered = 0;
  while (from < docs.length) {
    try {
      await c.tasks.insertMany(docs.slice(from), { ordered: true });
      inserted.push(...docs.slice(from).map((d) => d._id));
      return;
    } catch (err) {
      const index = failedIndex(err);
      if (index === null) throw err;
      inserted.push(...docs.slice(from, from + index).map((d) => d._id));
      const at = from + index;
      if (!isDuplicateKey(firstWriteError(err))) throw err;
      if (plan[at].adopted) {
        from = at + 1; // the dead call's task is there already: adopt it, go on with the rest
        continue;
      }
      if (renumbered >= SEQ_RETRIES || !(await collidedOnSeq(c.tasks, docs[at]._id))) throw err;
      // The collision was on seq: number the rest from a new range.
      renumbered++;
      const next = await reserveSeq(c, 'task_seq', docs.length - at);
      for (let i = at; i < docs.length; i++) docs[i] = { ...docs[i], seq: next + i - at };
      from = at;
    }
  }
}

/** Index (within the insertMany call) of the document an ordered insertMany stopped at. */
function failedIndex(err: unknown): number | null {
  if (!(err instanceof MongoBulkWriteError)) return null;
  const w = firstWriteError(err) as { index?: number } | null;
  return typeof w?.index === 'number' ? w.index : null;
}

function firstWriteError(err: unknown): unknown {
  const errors = (err as MongoBulkWriteError).writeErrors;
  if (Array.isArray(errors)) return errors[0] ?? null;
  return errors ?? null;
}
