/**
 * insertTasks — inputs: validated NewTask[] (state SCHEDULED or PENDING, due_at set; optional
 * idempotency key with its request hash and expiry). Output: per task, in input order, the id that
 * stands for it, whether it was a replay, and its `seq` (identity, increasing in list order; 0 for a
 * replay).
 * Guarantee: runs inside the write queue's transaction, so the whole list is stored or none of it:
 * a duplicate id (unique violation), or an idempotency key held (per tenant, while its
 * `expires_at > createdAt`) by a request with another hash, or by the same request whose task was
 * deleted since, throws (IdempotencyKeyConflict for a key) and the list is rolled back.
 * Statements per call: one INSERT of all the list's tasks (`unnest` of column arrays); with keys,
 * one `INSERT … ON CONFLICT DO NOTHING` claiming the free keys, and only for keys already held one
 * `SELECT … FOR UPDATE` of them, one read of their tasks' existence (a statement of its own: its
 * snapshot sees what committed while the lock waited) and one upsert taking over the expired ones.
 * Between nodes: PostgreSQL's unique index makes a second inserter of the same key
 * wait for the first one's transaction, then see its key as held (a replay or a conflict), so
 * concurrent duplicates create one task.
 */
import type { Db } from '../db';
import type { InsertResult } from '../../store';
import type { NewTask } from '../../../domain/task';
import { IdempotencyKeyConflict } from '../../idempotency-conflict';
import { insertTaskRows } from './task-row-insert';

/** Who holds a key after the statements: task, hash, expiry and whether the task exists. */
interface Holder {
  taskId: string;
  hash: string;
  expiresAt: number;
  exists: boolean;
  /** The task of this list that took the key in this call (it is inserted), if any. */
  claimer?: NewTask;
}

const CLAIM_FREE_KEYS = `
  INSERT INTO idempotency_keys (tenant_id, key, task_id, request_hash, expires_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[])
  ON CONFLICT (tenant_id, key) DO NOTHING
  RETURNING tenant_id, key`;

const LOCK_HELD_KEYS = `
  SELECT k.tenant_id, k.key, k.task_id, k.request_hash, k.expires_at
  FROM idempotency_keys k JOIN unnest($1::text[], $2::text[]) AS w(tenant_id, key) ON k.tenant_id = w.tenant_id AND k.key = w.key
  ORDER BY k.tenant_id, k.key
  FOR UPDATE OF k`;

const TAKE_OVER_KEYS = `
  INSERT INTO idempotency_keys (tenant_id, key, task_id, request_hash, expires_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[])
  ON CONFLICT (tenant_id, key) DO UPDATE SET task_id = excluded.task_id, request_hash = excluded.request_hash,
    expires_at = excluded.expires_at`;

/** Map key of a tenant's idempotency key. */
export const keyOf = (tenantId: string, key: string): string => JSON.stringify([tenantId, key]);

/** Stores `tasks` (see the file header); throws IdempotencyKeyConflict or the database's unique violation. */
export async function insertTasks(db: Db, tasks: NewTask[]): Promise<InsertResult[]> {
  if (tasks.length === 0) return [];
  const holders = await holdKeys(db, tasks);
  const results: Array<InsertResult | null> = [];
  const fresh: NewTask[] = [];
  for (const t of tasks) {
    if (t.idempotencyKey !== null && t.idempotency) {
      const k = keyOf(t.tenantId, t.idempotencyKey);
      const held = holders.get(k);
      if (held && held.claimer !== t && held.expiresAt > t.createdAt) {
        const same = held.hash === t.idempotency.requestHash;
        if (same && held.exists) {
          results.push({ taskId: held.taskId, replayed: true, seq: 0 });
          continue;
        }
        throw new IdempotencyKeyConflict(`idempotency key "${t.idempotencyKey}" is held by task ${held.taskId}${same ? ', deleted' : ''}`, {
          taskId: held.taskId,
          tenantId: t.tenantId,
          key: t.idempotencyKey,
          taskDeleted: same,
        });
      }
      if (held?.claimer !== t) {
        // An expired holder within the same list (not reached in practice): this task takes the key over.
        await takeOver(db, [t]);
        holders.set(k, { taskId: t.id, hash: t.idempotency.requestHash, expiresAt: t.idempotency.expiresAt, exists: true, claimer: t });
      }
    }
    results.push(null);
    fresh.push(t);
  }
  const seqs = fresh.length > 0 ? await insertRows(db, fresh) : new Map<string, number>();
  let f = 0;
  return results.map((r) => {
    if (r) return r;
    const id = fresh[f++].id;
    return { taskId: id, replayed: false, seq: seqs.get(id) ?? 0 };
  });
}

/**
 * Claims the list's keys: each key's first task in the list gets a free key, or an expired one;
 * a key held live is left as it is. Returns every key's holder afterwards (locked until commit).
 */
async function holdKeys(db: Db, tasks: NewTask[]): Promise<Map<string, Holder>> {
  const firsts = new Map<string, NewTask>();
  for (const t of tasks) {
    if (t.idempotencyKey !== null && t.idempotency) {
      const k = keyOf(t.tenantId, t.idempotencyKey);
      if (!firsts.has(k)) firsts.set(k, t);
    }
  }
  const holders = new Map<string, Holder>();
  if (firsts.size === 0) return holders;
  let pending = [...firsts.values()];
  // A held key found gone by the lock (purged between the statements) is tried again.
  for (let round = 0; pending.length > 0 && round < 3; round++) {
    const claimed = await db.query<{ tenant_id: string; key: string }>(CLAIM_FREE_KEYS, keyColumns(pending));
    const won = new Set(claimed.rows.map((r) => keyOf(r.tenant_id, r.key)));
    for (const t of pending) {
      const k = keyOf(t.tenantId, t.idempotencyKey as string);
      if (won.has(k)) holders.set(k, holderOf(t));
    }
    const held = pending.filter((t) => !won.has(keyOf(t.tenantId, t.idempotencyKey as string)));
    if (held.length === 0) break;
    const locked = await db.query<{
      tenant_id: string;
      key: string;
      task_id: string;
      request_hash: string;
      expires_at: number;
    }>(LOCK_HELD_KEYS, [held.map((t) => t.tenantId), held.map((t) => t.idempotencyKey)]);
    const rows = new Map(locked.rows.map((r) => [keyOf(r.tenant_id, r.key), r]));
    const expired: NewTask[] = [];
    for (const t of held) {
      const k = keyOf(t.tenantId, t.idempotencyKey as string);
      const r = rows.get(k);
      if (!r) continue;
      if (r.expires_at > t.createdAt) {
        holders.set(k, { taskId: r.task_id, hash: r.request_hash, expiresAt: r.expires_at, exists: false });
      } else {
        expired.push(t);
        holders.set(k, holderOf(t));
      }
    }
    if (expired.length > 0) await takeOver(db, expired);
    pending = held.filter((t) => !rows.has(keyOf(t.tenantId, t.idempotencyKey as string)));
  }
  await markExisting(db, holders);
  return holders;
}

/**
 * Sets `exists` of the holders this call did not make. A statement of its own, after the lock: its
 * snapshot sees the task of a holder that committed while the lock waited (a snapshot taken with
 * the lock's statement would not).
 */
async function markExisting(db: Db, holders: Map<string, Holder>): Promise<void> {
  const others = [...holders.values()].filter((h) => !h.claimer);
  if (others.length === 0) return;
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM tasks WHERE id = ANY($1::text[])`, [others.map((h) => h.taskId)]);
  const found = new Set(rows.map((r) => r.id));
  for (const h of others) h.exists = found.has(h.taskId);
}

/** `t` as the holder of its key, taken in this call. */
function holderOf(t: NewTask): Holder {
  return { taskId: t.id, hash: t.idempotency!.requestHash, expiresAt: t.idempotency!.expiresAt, exists: true, claimer: t };
}

/** Sets each task as the holder of its key (expired and locked by this transaction, or free). */
async function takeOver(db: Db, tasks: NewTask[]): Promise<void> {
  await db.query(TAKE_OVER_KEYS, keyColumns(tasks));
}

/** Column arrays (tenant, key, task, hash, expiry) of keyed tasks. */
function keyColumns(tasks: NewTask[]): unknown[] {
  return [
    tasks.map((t) => t.tenantId),
    tasks.map((t) => t.idempotencyKey),
    tasks.map((t) => t.id),
    tasks.map((t) => t.idempotency!.requestHash),
    tasks.map((t) => t.idempotency!.expiresAt),
  ];
}

/** One INSERT of all `tasks` (task-row-insert.ts); returns id → seq. */
async function insertRows(db: Db, tasks: NewTask[]): Promise<Map<string, number>> {
  const rows = await insertTaskRows(db, tasks);
  return new Map(rows.map((r) => [r.id, r.seq]));
}
