/**
 * Idempotency keys, the part of insertTasks that decides whether a keyed task is new.
 *
 * claimKey — inputs: the keyed NewTask, the batch id of the insertTasks call, the takeover bound
 * (ms). Output: `claimed` (this call holds the key now; insert the task under `taskId`, which is
 * the task's own id, or the id a crashed earlier claim of the same request reserved), `replay`
 * (an earlier task with the same request hash stands for it), or `conflict` (held by another
 * request, or by the same request still being inserted by another caller: like Stripe's
 * `idempotency_key_in_use`, the client may retry; or by the same request whose task was deleted
 * since, `taskDeleted`: a replay never answers with a task that does not exist).
 *
 * Guarantee: one key has one holder at a time. The claim is a single conditional upsert on the
 * unique (tenant_id, key) index — "take it if absent or released (expires_at ≤ createdAt)" — so of
 * two concurrent identical requests exactly one claims it and the other sees it held.
 *
 * Without transactions the key and the tasks are separate writes, so a claim carries a status:
 * `pending` while its batch is being inserted, `committed` after (commitKeys). Only committed keys
 * (or the caller's own batch) answer replays: a reader never answers with a task id that may not
 * exist. A pending claim older than the takeover bound belongs to a call that died before
 * answering; it is taken over (compare-and-set on its batch id). The same request then reuses the
 * reserved task id, so if the dead call had inserted the task, the retry adopts that very task
 * (insert-tasks.ts) instead of creating a second one.
 */
import { NewTask } from '../../../domain/task';
import { IdempotencyKeyConflict } from '../../idempotency-conflict';
import type { MongoCollections } from '../collections';
import { isDuplicateKey } from '../documents';

export type KeyClaim =
  | { kind: 'claimed'; taskId: string; adopted: boolean }
  | { kind: 'replay'; taskId: string }
  | { kind: 'conflict'; heldBy: string; inUse: boolean; taskDeleted?: boolean };

/** The error insertTasks rejects with for a conflicting key (see IDEMPOTENCY_CONFLICT in store.ts). */
export function idempotencyConflict(t: NewTask, heldBy: string, inUse: boolean, taskDeleted = false): IdempotencyKeyConflict {
  const why = inUse ? 'is in use by a request still being stored' : `is held by task ${heldBy}${taskDeleted ? ', deleted' : ''}`;
  return new IdempotencyKeyConflict(`idempotency key "${t.idempotencyKey}" ${why}`, {
    taskId: heldBy,
    tenantId: t.tenantId,
    key: t.idempotencyKey as string,
    taskDeleted,
  });
}

export async function claimKey(c: MongoCollections, t: NewTask, batch: string, takeoverMs: number): Promise<KeyClaim> {
  const key = t.idempotencyKey as string;
  const hash = t.idempotency?.requestHash as string;
  const expiresAt = t.idempotency?.expiresAt as number;
  const claim = { request_hash: hash, expires_at: expiresAt, status: 'pending' as const, batch, claimed_at: t.createdAt };
  for (let round = 0; round < 5; round++) {
    try {
      // Absent or released: take it. Held: the filter misses, the upsert hits the unique index.
      await c.idempotencyKeys.updateOne(
        { tenant_id: t.tenantId, key, expires_at: { $lte: t.createdAt } },
        { $set: { ...claim, task_id: t.id } },
        { upsert: true },
      );
      return { kind: 'claimed', taskId: t.id, adopted: false };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const held = await c.idempotencyKeys.findOne({ tenant_id: t.tenantId, key });
    if (!held || held.expires_at <= t.createdAt) continue; // released or purged meanwhile: claim again
    const same = held.request_hash === hash;
    if (held.batch === batch)
      return same ? { kind: 'replay', taskId: held.task_id } : { kind: 'conflict', heldBy: held.task_id, inUse: false };
    if (held.status === 'committed') {
      if (!same) return { kind: 'conflict', heldBy: held.task_id, inUse: false };
      // A committed key's task was stored; if it is gone now, it was deleted (dead-letter delete, retention).
      const stored = await c.tasks.findOne({ _id: held.task_id }, { projection: { _id: 1 } });
      return stored
        ? { kind: 'replay', taskId: held.task_id }
        : { kind: 'conflict', heldBy: held.task_id, inUse: false, taskDeleted: true };
    }
    if (held.claimed_at > t.createdAt - takeoverMs) return { kind: 'conflict', heldBy: held.task_id, inUse: true };
    // A stale pending claim: its call died before answering. Take it over.
    const taskId = same ? held.task_id : t.id;
    const taken = await c.idempotencyKeys.updateOne(
      { tenant_id: t.tenantId, key, batch: held.batch, status: 'pending' },
      { $set: { ...claim, task_id: taskId } },
    );
    if (taken.matchedCount === 1) return { kind: 'claimed', taskId, adopted: same };
  }
  throw new Error(`idempotency key "${key}" of tenant "${t.tenantId}" kept changing while being claimed`);
}

/** Marks the keys claimed by `batch` committed: from now on they answer replays. */
export async function commitKeys(c: MongoCollections, batch: string): Promise<void> {
  await c.idempotencyKeys.updateMany({ batch, status: 'pending' }, { $set: { status: 'committed' } });
}

/** Releases the keys claimed by `batch` (its insert failed). */
export async function releaseKeys(c: MongoCollections, batch: string): Promise<void> {
  await c.idempotencyKeys.deleteMany({ batch, status: 'pending' });
}
