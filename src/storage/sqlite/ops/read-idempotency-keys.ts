/**
 * getIdempotencyKeys — inputs: (tenant, key) pairs, now (epoch ms). Output: per pair, in order,
 * the held key's task id and request hash, or null when the key is absent or released
 * (`expires_at <= now`). Guarantee: reads committed rows on the caller's connection, one primary
 * key lookup per pair; no write.
 */
import type Database from 'better-sqlite3';
import type { HeldIdempotencyKey } from '../../store';

export function prepareGetIdempotencyKeys(
  db: Database.Database,
): (keys: ReadonlyArray<{ tenantId: string; key: string }>, now: number) => Array<HeldIdempotencyKey | null> {
  const stmt = db.prepare(`SELECT task_id, request_hash FROM idempotency_keys WHERE tenant_id = ? AND key = ? AND expires_at > ?`);
  return (keys, now) =>
    keys.map((k) => {
      const row = stmt.get(k.tenantId, k.key, now) as { task_id: string; request_hash: string } | undefined;
      return row ? { taskId: row.task_id, requestHash: row.request_hash } : null;
    });
}
