import type { ApiClient } from '../transport';
import { apiPath } from './paths';
import type {
  AuditView,
  ConcurrencyLimitDeleteView,
  ConcurrencyLimitPutBody,
  ConcurrencyLimitView,
  RateLimitDeleteView,
  RateLimitPutBody,
  TaskTypeLimitView,
  TenantDeleteView,
  TenantPutBody,
  TenantView,
} from './types';

/** Setting a value twice is setting it once: a PUT or DELETE of a setting may be repeated after a lost connection. */
const setting = { idempotent: true } as const;

/** `client.tenants`: tenant weights and start rate limits (admin key; docs/TENANTS.md). */
export class TenantsApi {
  constructor(private readonly http: ApiClient) {}

  /** `PUT /api/v1/tenants/{id}`: `{weight?, rate_limit?}` (null removes the limit). */
  async put(id: string, settings: TenantPutBody): Promise<TenantView> {
    return (await this.http.request<TenantView>('PUT', apiPath('tenants', id), { body: settings, ...setting })).body;
  }

  /** `DELETE /api/v1/tenants/{id}`: the config's settings apply again (its tasks are not touched). */
  async delete(id: string): Promise<TenantDeleteView> {
    return (await this.http.request<TenantDeleteView>('DELETE', apiPath('tenants', id), setting)).body;
  }

  /** `GET /api/v1/tenants`. */
  async list(): Promise<TenantView[]> {
    return (await this.http.get<{ tenants: TenantView[] }>(apiPath('tenants'))).tenants;
  }
}

/** `client.rateLimits`: start limits per task type (admin key). */
export class RateLimitsApi {
  constructor(private readonly http: ApiClient) {}

  /** `PUT /api/v1/rate-limits/{task_type}`: `{rate_per_second, burst?}`. */
  async put(taskType: string, limit: RateLimitPutBody): Promise<TaskTypeLimitView> {
    return (await this.http.request<TaskTypeLimitView>('PUT', apiPath('rate-limits', taskType), { body: limit, ...setting })).body;
  }

  /** `DELETE /api/v1/rate-limits/{task_type}`. */
  async delete(taskType: string): Promise<RateLimitDeleteView> {
    return (await this.http.request<RateLimitDeleteView>('DELETE', apiPath('rate-limits', taskType), setting)).body;
  }

  /** `GET /api/v1/rate-limits`. */
  async list(): Promise<TaskTypeLimitView[]> {
    return (await this.http.get<{ rate_limits: TaskTypeLimitView[] }>(apiPath('rate-limits'))).rate_limits;
  }
}

/** `client.concurrencyLimits`: caps on the running attempts per concurrency key (admin key). */
export class ConcurrencyLimitsApi {
  constructor(private readonly http: ApiClient) {}

  /** `PUT /api/v1/concurrency-limits/{key}`: `{max_running}`. */
  async put(key: string, limit: ConcurrencyLimitPutBody): Promise<ConcurrencyLimitView> {
    return (await this.http.request<ConcurrencyLimitView>('PUT', apiPath('concurrency-limits', key), { body: limit, ...setting })).body;
  }

  /** `GET /api/v1/concurrency-limits/{key}` (`max_running` null: unlimited). */
  async get(key: string): Promise<ConcurrencyLimitView> {
    return this.http.get<ConcurrencyLimitView>(apiPath('concurrency-limits', key));
  }

  /** `DELETE /api/v1/concurrency-limits/{key}` (the key becomes unlimited). */
  async delete(key: string): Promise<ConcurrencyLimitDeleteView> {
    return (await this.http.request<ConcurrencyLimitDeleteView>('DELETE', apiPath('concurrency-limits', key), setting)).body;
  }

  /** `GET /api/v1/concurrency-limits`. */
  async list(): Promise<ConcurrencyLimitView[]> {
    return (await this.http.get<{ concurrency_limits: ConcurrencyLimitView[] }>(apiPath('concurrency-limits'))).concurrency_limits;
  }
}

/** `GET /api/v1/audit` (admin key): runs an audit pass now and answers what it found. */
export function audit(http: ApiClient): Promise<AuditView> {
  return http.get<AuditView>(apiPath('audit'));
}
