/**
 * deleteTenantSettings — input: a tenant id. One `deleteOne` on `tenant_settings` (its weight and
 * start limit set at run time): a single-document write, atomic on its own. Output: whether the
 * document existed. The tenant's tasks, cron definitions and workflows are not touched.
 */
import type { Collection } from 'mongodb';
import type { TenantSettingsDoc } from './tenant-settings';

export async function deleteTenantSettings(coll: Collection<TenantSettingsDoc>, tenantId: string): Promise<boolean> {
  return (await coll.deleteOne({ _id: tenantId })).deletedCount === 1;
}
