import type { RateLimit } from '../domain/dispatch-limits';

/** A start limit: at most `rate_per_second` starts per second on average, `burst` at once. */
export interface RateLimitJson {
  rate_per_second: number;
  burst: number;
}

/** A tenant's dispatch settings (`PUT /api/v1/tenants/{id}`, `GET /api/v1/tenants`). */
export interface TenantView {
  tenant_id: string;
  /** Its weight in the round-robin (1 when none is set). */
  weight: number;
  /** Null: its starts are not limited. */
  rate_limit: RateLimitJson | null;
}

/** `DELETE /api/v1/tenants/{id}`: whether stored settings were removed, and the settings now in force. */
export interface TenantDeleteView extends TenantView {
  deleted: boolean;
}

/** A task type's start limit (`PUT /api/v1/rate-limits/{task_type}`, `GET /api/v1/rate-limits`). */
export interface TaskTypeLimitView extends RateLimitJson {
  task_type: string;
}

/**
 * A concurrency key's limit (`/api/v1/concurrency-limits`): `max_running` null for a key without a
 * limit (unlimited), `running` the attempts with that key the answering node runs now.
 */
export interface ConcurrencyLimitView {
  key: string;
  max_running: number | null;
  running: number;
}

/** The API's spelling of a start limit; none stays null. */
export function rateLimitJson(l: RateLimit): RateLimitJson;
export function rateLimitJson(l: RateLimit | null | undefined): RateLimitJson | null;
export function rateLimitJson(l: RateLimit | null | undefined): RateLimitJson | null {
  return l ? { rate_per_second: l.ratePerSecond, burst: l.burst } : null;
}
