import type { Config } from '../config';
import { rateLimitJson, TaskTypeLimitView, TenantDeleteView, TenantView } from '../contract/admin-json';
import { rateLimitPutSchema, tenantPutSchema } from '../contract/tenant-schemas';
import type { RateLimitDeleteView } from '../contract/answer-json';
import type { RateLimitPutBody, TenantPutBody } from '../contract/types';
import { SchemaValidator } from '../contract/validation';
import { Clock } from '../domain/clock';
import { DEFAULT_TENANT_WEIGHT, DispatchLimits, RateLimit } from '../domain/dispatch-limits';
import { ownValue } from '../domain/own-value';
import { ForbiddenError, UnknownTaskTypeError, ValidationError } from '../domain/errors';
import { isTenantId, TENANT_ID_RULE } from '../domain/tenant-id';
import { limitableTaskTypes } from '../handlers/registry';
import { Store } from '../storage/store';
import { Caller, OPEN_CALLER } from '../tenancy/caller';
import { ConcurrencyAdmin } from './concurrency-admin';
import { applyLimits, limitsInForce } from './limits-in-force';

export interface TenantAdminDeps {
  store: Store;
  clock: Clock;
  config: Config;
  limits: DispatchLimits;
}

const fromJson = (l: RateLimitPutBody): RateLimit => ({ ratePerSecond: l.rate_per_second, burst: l.burst ?? 1 });

/**
 * Admin operations on dispatch settings (docs/TENANTS.md): tenant weights, tenant start limits and
 * task-type start limits. Changes are stored first, then applied to the running
 * {@link DispatchLimits} (the dispatcher and partition owners read it on every decision), so they
 * take effect at once and survive a restart. Config files give the values a tenant or task type
 * has without a stored row. Every operation needs an admin caller.
 */
export class TenantAdmin {
  private readonly validator = new SchemaValidator();
  /** The concurrency limits per key (`/api/v1/concurrency-limits`). */
  readonly concurrency: ConcurrencyAdmin;

  private readonly changeListeners: Array<() => void> = [];

  constructor(private readonly deps: TenantAdminDeps) {
    this.concurrency = new ConcurrencyAdmin({
      store: deps.store,
      clock: deps.clock,
      concurrency: deps.limits.concurrency,
      changed: () => this.announce(),
    });
  }

  /** Calls `fn` after each change this node stored (a cluster member tells the others: bootstrap.ts). */
  onStoredChange(fn: () => void): void {
    this.changeListeners.push(fn);
  }

  private announce(): void {
    for (const fn of this.changeListeners) fn();
  }

  /**
   * Makes the settings in force the config's with the stored ones over them (`limitsInForce`),
   * changing only what differs: at start-up, and in cluster mode when another member announces a
   * change and every `LIMITS_SYNC_MS`. The concurrency limits likewise.
   */
  async loadStored(): Promise<void> {
    const { store, limits, clock, config } = this.deps;
    const [tenants, taskTypes] = [await store.listTenantSettings(), await store.listTaskTypeLimits()];
    applyLimits(limits, limitsInForce(config, tenants, taskTypes), clock.now());
    await this.concurrency.loadStored();
  }

  /**
   * Sets a tenant's `weight` and/or `rate_limit` (`{rate_per_second, burst}`, or null for none).
   * `body` is validated against its schema here (REST and actor messages hand it over unchecked).
   * @throws ForbiddenError (403) for a tenant's key; ValidationError (400)
   */
  async putTenant(tenantId: string, body: TenantPutBody, caller: Caller = OPEN_CALLER): Promise<TenantView> {
    this.assertAdmin(caller, 'PUT /api/v1/tenants/{id}');
    assertTenantIdParam(tenantId);
    this.validator.assert(tenantPutSchema, body);
    const b = body;
    const { store, limits, clock } = this.deps;
    const now = clock.now();
    const current = limits.snapshot();
    // A field left out keeps the value in force, stored (docs/TENANTS.md): the default weight 1 too,
    // so a weight added to the config file later does not reach this tenant.
    const weight = b.weight ?? ownValue(current.weights, tenantId) ?? DEFAULT_TENANT_WEIGHT;
    const rateLimit = b.rate_limit === undefined ? (ownValue(current.tenants, tenantId) ?? null) : b.rate_limit && fromJson(b.rate_limit);
    await store.putTenantSettings({ tenantId, weight, rateLimit, updatedAt: now });
    this.announce();
    limits.setWeight(tenantId, weight);
    limits.setTenantLimit(tenantId, rateLimit, now);
    return { tenant_id: tenantId, weight, rate_limit: rateLimitJson(rateLimit) };
  }

  /**
   * Deletes a tenant's settings stored by `PUT /api/v1/tenants/{id}` (weight, start limit): the
   * tenant competes again with the config file's `tenants.<id>` values, or the defaults (weight 1,
   * no limit). A tenant is named by its tasks, not registered, so nothing else is deleted: its
   * tasks, cron definitions and workflows keep running, and new tasks for it are accepted (cancel
   * them to stop them; docs/TENANTS.md). Deleting a tenant without stored settings also answers.
   * @returns `deleted`: whether stored settings were removed; `weight` and `rate_limit`: now in force
   * @throws ForbiddenError (403) for a tenant's key; ValidationError (400, `id`) for an id outside the tenant id syntax
   */
  async deleteTenant(tenantId: string, caller: Caller = OPEN_CALLER): Promise<TenantDeleteView> {
    this.assertAdmin(caller, 'DELETE /api/v1/tenants/{id}');
    assertTenantIdParam(tenantId);
    const { store, limits, clock, config } = this.deps;
    const deleted = await store.deleteTenantSettings(tenantId);
    this.announce();
    const configured = ownValue(config.tenants, tenantId);
    if (configured?.weight !== undefined) limits.setWeight(tenantId, configured.weight);
    else limits.removeWeight(tenantId);
    limits.setTenantLimit(tenantId, configured?.rateLimit ?? null, clock.now());
    return { tenant_id: tenantId, deleted, weight: configured?.weight ?? 1, rate_limit: rateLimitJson(configured?.rateLimit) };
  }

  /** Every tenant with a weight or limit (config or stored), with its waiting-task count. */
  async listTenants(caller: Caller = OPEN_CALLER): Promise<{ tenants: TenantView[] }> {
    this.assertAdmin(caller, 'GET /api/v1/tenants');
    const snap = this.deps.limits.snapshot();
    const ids = [...new Set([...Object.keys(snap.weights), ...Object.keys(snap.tenants)])].sort();
    return {
      tenants: ids.map((id) => ({
        tenant_id: id,
        weight: ownValue(snap.weights, id) ?? 1,
        rate_limit: rateLimitJson(ownValue(snap.tenants, id)),
      })),
    };
  }

  /** Sets the start limit of a registered task type. @throws ForbiddenError; ValidationError; UnknownTaskTypeError */
  async putRateLimit(taskType: string, body: RateLimitPutBody, caller: Caller = OPEN_CALLER): Promise<TaskTypeLimitView> {
    this.assertAdmin(caller, 'PUT /api/v1/rate-limits/{task_type}');
    this.assertKnownType(taskType);
    this.validator.assert(rateLimitPutSchema, body);
    const limit = fromJson(body);
    const now = this.deps.clock.now();
    await this.deps.store.putTaskTypeLimit(taskType, limit, now);
    this.announce();
    this.deps.limits.setTypeLimit(taskType, limit, now);
    return { task_type: taskType, ...rateLimitJson(limit) };
  }

  /**
   * Removes the stored limit of a task type: the config file's `rateLimits.<type>` applies again,
   * or none (as `limitsInForce` reads it at a restart). Removing one that is not set also answers
   * (idempotent). @returns `rate_limit`: the limit now in force @throws ForbiddenError
   */
  async deleteRateLimit(taskType: string, caller: Caller = OPEN_CALLER): Promise<RateLimitDeleteView> {
    this.assertAdmin(caller, 'DELETE /api/v1/rate-limits/{task_type}');
    const now = this.deps.clock.now();
    await this.deps.store.putTaskTypeLimit(taskType, null, now);
    this.announce();
    const configured = ownValue(this.deps.config.rateLimits, taskType) ?? null;
    this.deps.limits.setTypeLimit(taskType, configured, now);
    return { task_type: taskType, deleted: true, rate_limit: rateLimitJson(configured) };
  }

  /** Every task-type limit in force. @throws ForbiddenError */
  async listRateLimits(caller: Caller = OPEN_CALLER): Promise<{ rate_limits: TaskTypeLimitView[] }> {
    this.assertAdmin(caller, 'GET /api/v1/rate-limits');
    const snap = this.deps.limits.snapshot();
    return { rate_limits: Object.entries(snap.taskTypes).map(([t, l]) => ({ task_type: t, ...rateLimitJson(l) })) };
  }

  /** A limit only on a type that may have one (`limitableTaskTypes`): refused like a task of another type. */
  private assertKnownType(taskType: string): void {
    const types = limitableTaskTypes(this.deps.config);
    if (types && !types.includes(taskType)) throw new UnknownTaskTypeError('task_type', taskType, types);
  }

  private assertAdmin(caller: Caller, operation: string): void {
    if (!caller.admin) throw new ForbiddenError(operation);
  }
}

/** A tenant id in a URL path (`/api/v1/tenants/{id}`). @throws ValidationError (`id`) outside the tenant id syntax */
function assertTenantIdParam(tenantId: string): void {
  if (!isTenantId(tenantId)) throw new ValidationError('id', `a tenant id ${TENANT_ID_RULE}`);
}
