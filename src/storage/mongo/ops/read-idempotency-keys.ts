/**
 * getIdempotencyKeys — inputs: (tenant, key) pairs, now (epoch ms). Output: per pair, in order,
 * the held key's task id and request hash, or null when the key is absent, released
 * (`expires_at <= now`) or still `pending` (its batch is being stored: insertTasks answers no
 * replay from it either, idempotency-keys.ts). Order of writes: none (a read). Crash window: none.
 * One `find` on the unique (tenant_id, key) index per 1,000 pairs.
 */
import type { HeldIdempotencyKey } from '../../store';
import type { MongoCollections } from '../collections';

/** Pairs per `find`. */
const CHUNK = 1000;

/** Map key of a tenant's idempotency key. */
const keyOf = (tenantId: string, key: string): string => JSON.stringify([tenantId, key]);

export async function getIdempotencyKeys(
  c: MongoCollections,
  keys: ReadonlyArray<{ tenantId: string; key: string }>,
  now: number,
): Promise<Array<HeldIdempotencyKey | null>> {
  const held = new Map<string, HeldIdempotencyKey>();
  for (let i = 0; i < keys.length; i += CHUNK) {
    const part = keys.slice(i, i + CHUNK);
    const docs = await c.idempotencyKeys
      .find(
        { $or: part.map((k) => ({ tenant_id: k.tenantId, key: k.key })), status: 'committed', expires_at: { $gt: now } },
        { projection: { _id: 0, tenant_id: 1, key: 1, task_id: 1, request_hash: 1 } },
      )
      .toArray();
    for (const d of docs) held.set(keyOf(d.tenant_id, d.key), { taskId: d.task_id, requestHash: d.request_hash });
  }
  return keys.map((k) => held.get(keyOf(k.tenantId, k.key)) ?? null);
}
