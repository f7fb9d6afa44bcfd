/**
 * deleteTenantSettings — input: a tenant id. Deletes the tenant's row of `tenant_settings` (its
 * weight and start limit set at run time). Output: whether a row was deleted. One statement inside
 * the caller's transaction; the tenant's tasks, cron definitions and workflows are not touched.
 */
import type { Db } from '../db';

/** Deletes the settings of `tenantId`. @returns whether there were any */
export async function deleteTenantSettings(db: Db, tenantId: string): Promise<boolean> {
  const { rowCount } = await db.query(`DELETE FROM tenant_settings WHERE tenant_id = $1`, [tenantId]);
  return rowCount === 1;
}
