/**
 * getIdempotencyKeys — inputs: (tenant, key) pairs, now (epoch ms). Output: per pair, in order,
 * the held key's task id and request hash, or null when the key is absent or released
 * (`expires_at <= now`). Guarantee: one statement on the pool (the pairs travel as two text[]
 * parameters, looked up through the primary key), committed data only; no write.
 */
import type { Db } from '../db';
import type { HeldIdempotencyKey } from '../../store';
import { keyOf } from './insert-tasks';

export async function getIdempotencyKeys(
  db: Db,
  keys: ReadonlyArray<{ tenantId: string; key: string }>,
  now: number,
): Promise<Array<HeldIdempotencyKey | null>> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ tenant_id: string; key: string; task_id: string; request_hash: string }>(
    `SELECT k.tenant_id, k.key, k.task_id, k.request_hash
     FROM idempotency_keys k JOIN unnest($1::text[], $2::text[]) AS w(tenant_id, key) ON k.tenant_id = w.tenant_id AND k.key = w.key
     WHERE k.expires_at > $3`,
    [keys.map((k) => k.tenantId), keys.map((k) => k.key), now],
  );
  const held = new Map(rows.map((r) => [keyOf(r.tenant_id, r.key), { taskId: r.task_id, requestHash: r.request_hash }]));
  return keys.map((k) => held.get(keyOf(k.tenantId, k.key)) ?? null);
}
