import type { ApiClient } from '../transport';
import type { LivenessView, ReadinessView } from './types';

/** `client.health`: the probes and the metrics (docs/OPERATIONS.md). */
export class HealthApi {
  constructor(private readonly http: ApiClient) {}

  /** `GET /healthz`: the process is up. */
  live(): Promise<LivenessView> {
    return this.http.get<LivenessView>('/healthz');
  }

  /** `GET /readyz`: the readiness view, whether the service answers 200 (ready, degraded) or 503 (not ready); not retried. */
  async ready(): Promise<ReadinessView> {
    return (await this.http.request<ReadinessView>('GET', '/readyz', { okStatuses: [503], noRetry: true })).body;
  }

  /** `GET /metrics` (admin key): Prometheus text. */
  async metrics(): Promise<string> {
    return (await this.http.request<string>('GET', '/metrics', { headers: { accept: 'text/plain' }, text: true })).body;
  }
}
