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

/**
 * A change of a tenant's settings (`PUT /api/v1/tenants/{id}`): a field given (`weight`,
 * `rateLimit`, null included) replaces the stored one; a field left undefined keeps the stored
 * value, or on a tenant without a row takes `fallback`'s (the value in force). A full
 * {@link TenantSettings} replaces the row.
 */
export interface TenantSettingsChange {
  tenantId: string;
  weight?: number | null;
  rateLimit?: RateLimit | null;
  /** What a new row takes for the fields not given (absent: null). */
  fallback?: { weight: number | null; rateLimit: RateLimit | null };
  updatedAt: number;
}

/** The values a change writes into a new row: each field given, else its fallback (else null). */
export function insertedValues(c: TenantSettingsChange): { weight: number | null; rateLimit: RateLimit | null } {
  return {
    weight: c.weight !== undefined ? c.weight : (c.fallback?.weight ?? null),
    rateLimit: c.rateLimit !== undefined ? c.rateLimit : (c.fallback?.rateLimit ?? null),
  };
}

export interface TenantStore {
  /**
   * Creates or changes a tenant's settings in one atomic write (the merge of fields not given is
   * done by the store, so two changes of different fields, on two nodes at once, both hold).
   * @returns the row as stored
   */
  putTenantSettings(change: TenantSettingsChange): Promise<TenantSettings>;
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
