/**
 * Tenant settings and task-type limits:
 * - putTenantSettings — input: TenantSettingsChange; output: the row as stored. Upsert of the
 *   tenant's row (`INSERT … ON CONFLICT DO UPDATE … RETURNING`), one statement inside the caller's
 *   transaction: the fields given replace the stored ones and the others are kept (the merge is
 *   the statement's, under the row's lock), so two nodes changing different fields both hold; a
 *   new row takes the fallback for the fields not given.
 * - putTaskTypeLimit — inputs: task type, limit or null, now. Upsert, or delete for null; one
 *   statement inside the caller's transaction.
 * - listTenantSettings, listTaskTypeLimits — reads on the pool, one statement each (a consistent
 *   snapshot), by tenant id / task type in byte order (as SQLite's).
 * - countWaitingByTenant — read: tenant → tasks SCHEDULED, PENDING, RETRYING or BLOCKED (the
 *   backpressure caps' counts, DEPTH_STATES; tenants with none are absent). One statement.
 */
import type { Db } from '../db';
import type { RateLimit } from '../../../domain/dispatch-limits';
import { insertedValues, TenantSettings, TenantSettingsChange } from '../../tenant-store';
import { DEPTH_STATES } from '../../../domain/state-machine';
import { sqlIndexedStates } from '../indexed-states';

interface SettingsRow {
  tenant_id: string;
  weight: number | null;
  rate_per_second: number | null;
  burst: number | null;
  updated_at: number;
}

/** Stores one tenant's settings: the fields `c` gives, the stored (or fallback) others. @returns the row as stored */
export async function putTenantSettings(db: Db, c: TenantSettingsChange): Promise<TenantSettings> {
  const { weight, rateLimit } = insertedValues(c);
  const { rows } = await db.query<SettingsRow>(
    `INSERT INTO tenant_settings AS t (tenant_id, weight, rate_per_second, burst, updated_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant_id) DO UPDATE SET
       weight = CASE WHEN $6::boolean THEN excluded.weight ELSE t.weight END,
       rate_per_second = CASE WHEN $7::boolean THEN excluded.rate_per_second ELSE t.rate_per_second END,
       burst = CASE WHEN $7::boolean THEN excluded.burst ELSE t.burst END,
       updated_at = excluded.updated_at
     RETURNING tenant_id, weight, rate_per_second, burst, updated_at`,
    [
      c.tenantId,
      weight,
      rateLimit?.ratePerSecond ?? null,
      rateLimit?.burst ?? null,
      c.updatedAt,
      c.weight !== undefined,
      c.rateLimit !== undefined,
    ],
  );
  return settingsOf(rows[0]);
}

/** A stored row as the contract's shape. */
function settingsOf(r: SettingsRow): TenantSettings {
  return {
    tenantId: r.tenant_id,
    weight: r.weight,
    rateLimit: r.rate_per_second === null || r.burst === null ? null : { ratePerSecond: r.rate_per_second, burst: r.burst },
    updatedAt: Number(r.updated_at),
  };
}

/** Every tenant's settings, by tenant id. */
export async function listTenantSettings(db: Db): Promise<TenantSettings[]> {
  const { rows } = await db.query<SettingsRow>(
    `SELECT tenant_id, weight, rate_per_second, burst, updated_at FROM tenant_settings ORDER BY tenant_id COLLATE "C"`,
  );
  return rows.map(settingsOf);
}

/** Sets the start-rate limit of `taskType`, or removes it (null). */
export async function putTaskTypeLimit(db: Db, taskType: string, limit: RateLimit | null, now: number): Promise<void> {
  if (limit === null) {
    await db.query(`DELETE FROM task_type_limits WHERE task_type = $1`, [taskType]);
    return;
  }
  await db.query(
    `INSERT INTO task_type_limits (task_type, rate_per_second, burst, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (task_type) DO UPDATE SET rate_per_second = excluded.rate_per_second, burst = excluded.burst,
       updated_at = excluded.updated_at`,
    [taskType, limit.ratePerSecond, limit.burst, now],
  );
}

/** Every task-type limit, by task type. */
export async function listTaskTypeLimits(db: Db): Promise<Array<{ taskType: string; limit: RateLimit }>> {
  const { rows } = await db.query<{ task_type: string; rate_per_second: number; burst: number }>(
    `SELECT task_type, rate_per_second, burst FROM task_type_limits ORDER BY task_type COLLATE "C"`,
  );
  return rows.map((r) => ({ taskType: r.task_type, limit: { ratePerSecond: r.rate_per_second, burst: r.burst } }));
}

/** Tenant → waiting tasks (DEPTH_STATES); tenants with none are absent. */
export async function countWaitingByTenant(db: Db): Promise<Record<string, number>> {
  const { rows } = await db.query<{ tenant_id: string; n: number }>(
    `SELECT tenant_id, COUNT(*) AS n FROM tasks WHERE ${sqlIndexedStates(DEPTH_STATES)} GROUP BY tenant_id`,
  );
  return Object.fromEntries(rows.map((r) => [r.tenant_id, r.n]));
}
