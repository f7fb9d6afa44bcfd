/**
 * Tenant settings — writes: putTenantSettings (upsert of one row: the fields given replace the
 * stored ones, the others are kept, or on a new row take the fallback; returns the row as stored),
 * putTaskTypeLimit (upsert, or
 * delete for null); reads on the reading connection: listTenantSettings, listTaskTypeLimits (the
 * waiting counts of the backpressure caps are in aggregates.ts). Each write is one statement inside
 * a group-commit savepoint; each read one statement (a consistent snapshot).
 */
import type Database from 'better-sqlite3';
import { RateLimit } from '../../../domain/dispatch-limits';
import { insertedValues, TenantSettings, TenantSettingsChange } from '../../tenant-store';

interface SettingsRow {
  tenant_id: string;
  weight: number | null;
  rate_per_second: number | null;
  burst: number | null;
  updated_at: number;
}

/** A stored row as the contract's shape. */
function settingsOf(r: SettingsRow): TenantSettings {
  return {
    tenantId: r.tenant_id,
    weight: r.weight,
    rateLimit: r.rate_per_second === null || r.burst === null ? null : { ratePerSecond: r.rate_per_second, burst: r.burst },
    updatedAt: r.updated_at,
  };
}

export function prepareTenantWrites(db: Database.Database) {
  // Unqualified columns in DO UPDATE are the stored row's (https://sqlite.org/lang_upsert.html).
  const upsert = db.prepare(`
    INSERT INTO tenant_settings (tenant_id, weight, rate_per_second, burst, updated_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id) DO UPDATE SET
      weight = CASE WHEN ? THEN excluded.weight ELSE weight END,
      rate_per_second = CASE WHEN ? THEN excluded.rate_per_second ELSE rate_per_second END,
      burst = CASE WHEN ? THEN excluded.burst ELSE burst END,
      updated_at = excluded.updated_at
    RETURNING tenant_id, weight, rate_per_second, burst, updated_at`);
  const putLimit = db.prepare(`
    INSERT INTO task_type_limits (task_type, rate_per_second, burst, updated_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (task_type) DO UPDATE SET rate_per_second = excluded.rate_per_second, burst = excluded.burst,
      updated_at = excluded.updated_at`);
  const dropLimit = db.prepare(`DELETE FROM task_type_limits WHERE task_type = ?`);
  return {
    putTenantSettings(c: TenantSettingsChange): TenantSettings {
      const { weight, rateLimit } = insertedValues(c);
      const w = c.weight !== undefined ? 1 : 0;
      const r = c.rateLimit !== undefined ? 1 : 0;
      const row = upsert.get(
        c.tenantId,
        weight,
        rateLimit?.ratePerSecond ?? null,
        rateLimit?.burst ?? null,
        c.updatedAt,
        w,
        r,
        r,
      ) as SettingsRow;
      return settingsOf(row);
    },
    putTaskTypeLimit(taskType: string, limit: RateLimit | null, now: number): void {
      if (limit === null) dropLimit.run(taskType);
      else putLimit.run(taskType, limit.ratePerSecond, limit.burst, now);
    },
  };
}

export function prepareTenantReads(db: Database.Database) {
  const settings = db.prepare(`SELECT * FROM tenant_settings ORDER BY tenant_id`);
  const limits = db.prepare(`SELECT task_type, rate_per_second, burst FROM task_type_limits ORDER BY task_type`);
  return {
    listTenantSettings(): TenantSettings[] {
      return (settings.all() as SettingsRow[]).map(settingsOf);
    },
    listTaskTypeLimits(): Array<{ taskType: string; limit: RateLimit }> {
      return (limits.all() as Array<{ task_type: string; rate_per_second: number; burst: number }>).map((r) => ({
        taskType: r.task_type,
        limit: { ratePerSecond: r.rate_per_second, burst: r.burst },
      }));
    },
  };
}
