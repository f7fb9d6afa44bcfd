/**
 * deleteTenantSettings — input: a tenant id. Deletes the tenant's row of `tenant_settings` (its
 * weight and start limit set at run time). Output: whether a row was deleted. One statement inside
 * a group-commit savepoint; the tenant's tasks, cron definitions and workflows are not touched.
 */
import type Database from 'better-sqlite3';

export function prepareDeleteTenantSettings(db: Database.Database): (tenantId: string) => boolean {
  const stmt = db.prepare(`DELETE FROM tenant_settings WHERE tenant_id = ?`);
  return (tenantId) => stmt.run(tenantId).changes === 1;
}
