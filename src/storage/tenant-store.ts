/**
 * The tenant part of the {@link Store} contract (docs/TENANTS.md): stored dispatch settings, and the
 * counts backpressure needs. The conformance suite (test/storage/conformance/tenants.ts) checks it.
 */
import type { RateLimit } from '../domain/dispatch-limits';

/**
 * A tenant's stored settings: a null `weight` keeps the config's; a null `rateLimit` is no start
 * limit, over the config's (services/limits-in-force.ts).
 */
export interface TenantSettings {
  tenantId: string;
  weight: number | null;
  rateLimit: RateLimit | null;
  updatedAt: number;
}

export interface TenantStore {
  /** Creates or replaces a tenant's settings. */
  putTenantSettings(settings: TenantSettings): Promise<void>;
  /**
   * Removes a tenant's stored settings (weight and start limit), if any; its tasks are not
   * touched. @returns true when settings were stored (and are now gone), false when there were none
   */
  deleteTenantSettings(tenantId: string): Promise<boolean>;
  /** Every tenant with stored settings, by id. */
  listTenantSettings(): Promise<TenantSettings[]>;
  /** Sets (or with null removes) the stored start limit of a task type. */
  putTaskTypeLimit(taskType: string, limit: RateLimit | null, now: number): Promise<void>;
  /** Every stored task-type limit, by task type. */
  listTaskTypeLimits(): Promise<Array<{ taskType: string; limit: RateLimit }>>;
  /** Tasks not yet finished and not running (SCHEDULED, PENDING, RETRYING, BLOCKED) per tenant. */
  countWaitingByTenant(): Promise<Record<string, number>>;
}
