import type { ConcurrencyLimitView } from '../contract/admin-json';
import { concurrencyLimitPutSchema } from '../contract/tenant-schemas';
import type { ConcurrencyLimitPutBody } from '../contract/types';
import { SchemaValidator } from '../contract/validation';
import { Clock } from '../domain/clock';
import { CONCURRENCY_KEY_PATTERN, ConcurrencyLimits } from '../domain/concurrency-limits';
import { ForbiddenError, ValidationError } from '../domain/errors';
import { Store } from '../storage/store';
import { Caller, OPEN_CALLER } from '../tenancy/caller';

export interface ConcurrencyAdminDeps {
  store: Store;
  clock: Clock;
  /** The limits in force (shared with the dispatcher). */
  concurrency: ConcurrencyLimits;
  /** Told after each change stored here (a cluster member tells the others). */
  changed?: () => void;
}

const KEY = new RegExp(CONCURRENCY_KEY_PATTERN);

/**
 * Admin operations on concurrency limits (`/api/v1/concurrency-limits/{key}`): like the rate
 * limits, a change is stored first, then applied to the running {@link ConcurrencyLimits}, so it
 * takes effect at once and survives a restart. Every operation needs an admin caller. The JSON
 * view of a limit is `{key, max_running, running}`: `max_running` null for a key without a limit
 * (unlimited), `running` the attempts with that key this node runs now.
 */
export class ConcurrencyAdmin {
  private readonly validator = new SchemaValidator();

  constructor(private readonly deps: ConcurrencyAdminDeps) {}

  /**
   * Makes the limits in force those stored (only what differs is applied): at start-up, and in
   * cluster mode when another member announces a change and every `LIMITS_SYNC_MS`.
   */
  async loadStored(): Promise<void> {
    const { store, concurrency } = this.deps;
    const stored = new Map((await store.listConcurrencyLimits()).map((l) => [l.key, l.maxRunning]));
    for (const { key } of concurrency.snapshot()) if (!stored.has(key)) concurrency.set(key, null);
    for (const [key, maxRunning] of stored) if (concurrency.maxRunningOf(key) !== maxRunning) concurrency.set(key, maxRunning);
  }

  /**
   * Sets the limit of `key` from `{max_running}` (an integer 1..100,000). `body` is validated
   * against its schema here (REST and actor messages hand it over unchecked).
   * @throws ForbiddenError (403) for a tenant's key; ValidationError (400) naming `key` or `max_running`
   */
  async put(key: string, body: ConcurrencyLimitPutBody, caller: Caller = OPEN_CALLER): Promise<ConcurrencyLimitView> {
    this.assertAdmin(caller, 'PUT /api/v1/concurrency-limits/{key}');
    this.assertKey(key);
    this.validator.assert(concurrencyLimitPutSchema, body);
    const maxRunning = body.max_running;
    await this.deps.store.putConcurrencyLimit(key, maxRunning, this.deps.clock.now());
    this.deps.changed?.();
    this.deps.concurrency.set(key, maxRunning);
    return this.view(key);
  }

  /** The limit of `key` (null: unlimited) and its running count here. @throws ForbiddenError; ValidationError */
  async get(key: string, caller: Caller = OPEN_CALLER): Promise<ConcurrencyLimitView> {
    this.assertAdmin(caller, 'GET /api/v1/concurrency-limits/{key}');
    this.assertKey(key);
    return this.view(key);
  }

  /** Removes the limit of `key` (it becomes unlimited); idempotent. @throws ForbiddenError; ValidationError */
  async delete(key: string, caller: Caller = OPEN_CALLER): Promise<{ key: string; deleted: true }> {
    this.assertAdmin(caller, 'DELETE /api/v1/concurrency-limits/{key}');
    this.assertKey(key);
    await this.deps.store.putConcurrencyLimit(key, null, this.deps.clock.now());
    this.deps.changed?.();
    this.deps.concurrency.set(key, null);
    return { key, deleted: true };
  }

  /** Every limit in force, by key. @throws ForbiddenError */
  async list(caller: Caller = OPEN_CALLER): Promise<{ concurrency_limits: ConcurrencyLimitView[] }> {
    this.assertAdmin(caller, 'GET /api/v1/concurrency-limits');
    return {
      concurrency_limits: this.deps.concurrency.snapshot().map((l) => ({ key: l.key, max_running: l.maxRunning, running: l.running })),
    };
  }

  private view(key: string): ConcurrencyLimitView {
    const c = this.deps.concurrency;
    return { key, max_running: c.maxRunningOf(key), running: c.runningOf(key) };
  }

  private assertKey(key: string): void {
    if (!KEY.test(key)) throw new ValidationError('key', 'a concurrency key has 1 to 200 of the characters A-Z a-z 0-9 _ . : @ -');
  }

  private assertAdmin(caller: Caller, operation: string): void {
    if (!caller.admin) throw new ForbiddenError(operation);
  }
}
