import type { ApiClient } from '../transport';
import type { LivenessView, ReadinessView } from './types';

/** The media types of Prometheus' text formats (prometheus.io/docs/instrumenting/exposition_formats). */
const PROMETHEUS_MEDIA_TYPES = ['text/plain', 'application/openmetrics-text'] as const;

/** `client.health`: the probes and the metrics (docs/OPERATIONS.md). */
export class HealthApi {
  constructor(private readonly http: ApiClient) {}

  /** `GET /healthz`: the process is up. */
  async live(): Promise<LivenessView> {
    return this.http.get<LivenessView>('/healthz');
  }

  /**
   * `GET /readyz`: the readiness view, whether the service answers 200 (ready, degraded) or 503
   * (not ready); not retried, but with several URLs a member that cannot be reached passes the
   * question to the next at once (each at most once).
   */
  async ready(): Promise<ReadinessView> {
    return (await this.http.request<ReadinessView>('GET', '/readyz', { okStatuses: [503], noRetry: true, eachMemberOnce: true })).body;
  }

  /**
   * `GET /metrics` (admin key): Prometheus text.
   * @throws SchedulerApiError `NOT_METRICS` when a 2xx answer is not `text/plain` or
   *   `application/openmetrics-text` (another server's page)
   */
  async metrics(): Promise<string> {
    const text = { headers: { accept: 'text/plain' }, text: PROMETHEUS_MEDIA_TYPES };
    return (await this.http.request<string>('GET', '/metrics', text)).body;
  }
}
