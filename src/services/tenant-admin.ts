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

  /** The last reload asked for (settled once it has run). */
  private lastReload: Promise<void> = Promise.resolve();
  /** A reload asked for that has not started yet: later calls share it. */
  private queuedReload: Promise<void> | null = null;

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
   * changing only what differs: at start-up, in cluster mode when another member announces a
   * change and every `LIMITS_SYNC_MS`, and after each change of a tenant's settings here. The
   * concurrency limits likewise. Reloads run one at a time, and a call made while one runs gets
   * one that starts after it: a read made before a change never lands after a read made after it
   * (cluster members kept settings that differed from the store until the next periodic sync,
   * about a minute, when an announcement's reload answered late).
   * @throws the store's error (the settings in force stay as they were)
   */
  loadStored(): Promise<void> {
    if (this.queuedReload) return this.queuedReload;
    const next = this.lastReload
      .catch(() => undefined)
      .then(() => {
        this.queuedReload = null;
        return this.reload();
      });
    this.queuedReload = next;
    this.lastReload = next;
    return next;
  }

  private async reload(): Promise<void> {
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
    // A field left out keeps the stored value, merged by the store in the same write (two changes
    // of different fields at once, on one node or two, both hold); a tenant without a row stores
    // the value in force for it (docs/TENANTS.md): the default weight 1 too, so a weight added to
    // the config file later does not reach this tenant.
    const stored = await store.putTenantSettings({
      tenantId,
      ...(b.weight !== undefined ? { weight: b.weight } : {}),
      ...(b.rate_limit !== undefined ? { rateLimit: b.rate_limit && fromJson(b.rate_limit) } : {}),
      fallback: {
        weight: ownValue(current.weights, tenantId) ?? DEFAULT_TENANT_WEIGHT,
        rateLimit: ownValue(current.tenants, tenantId) ?? null,
      },
      updatedAt: now,
    });
    this.announce();
    const weight = stored.weight ?? ownValue(this.deps.config.tenants, tenantId)?.weight ?? DEFAULT_TENANT_WEIGHT;
    limits.setWeight(tenantId, weight);
    limits.setTenantLimit(tenantId, stored.rateLimit, now);
    await this.settle();
    return { tenant_id: tenantId, weight, rate_limit: rateLimitJson(stored.rateLimit) };
  }

  /**
   * After a change stored here: reloads what is in force from the store ({@link loadStored}), so a
   * reload that read the store before this change, answering late, cannot leave it undone. A store
   * fault here is not the change's: the change is stored and applied; the periodic sync retries.
   */
  private async settle(): Promise<void> {
    await this.loadStored().catch(() => undefined);
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
    await this.settle();
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
    await this.settle();
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
    await this.settle();
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
