import type { ApiClient } from '../transport';
import { apiPath } from './paths';
import type {
  CheckpointSavedView,
  CompletionView,
  ExternalCheckpointBody,
  ExternalCompletionBody,
  ExternalHeartbeatBody,
  ExternalProgressBody,
  HeartbeatView,
  LeaseRequest,
  LeaseView,
  ProgressSavedView,
} from './types';

/**
 * `client.reports`: what a worker outside the service reports about an attempt it runs (external
 * queues, HTTP workers): completion, heartbeat, checkpoint, progress. Each names its `attempt`; a
 * report of a stale attempt is refused with ConflictError (`ATTEMPT_CONFLICT`).
 */
export class ReportsApi {
  constructor(private readonly http: ApiClient) {}

  /** `POST /api/v1/tasks/{id}/complete`: `{attempt, result?}` or `{attempt, error: {message, permanent?, type?}}`. */
  async complete(id: string, body: ExternalCompletionBody): Promise<CompletionView> {
    return this.post<CompletionView>(id, 'complete', body);
  }

  /** `POST /api/v1/tasks/{id}/heartbeat`: extends the attempt's lease. */
  async heartbeat(id: string, body: ExternalHeartbeatBody): Promise<HeartbeatView> {
    return this.post<HeartbeatView>(id, 'heartbeat', body);
  }

  /** `POST /api/v1/tasks/{id}/checkpoint`: `{attempt, value}` (≤ 64 KiB of JSON; null clears it). */
  async checkpoint(id: string, body: ExternalCheckpointBody): Promise<CheckpointSavedView> {
    return this.post<CheckpointSavedView>(id, 'checkpoint', body);
  }

  /** `POST /api/v1/tasks/{id}/progress`: `{attempt, progress}` (a fraction 0..1 or `{done?, total?, message?}`). */
  async progress(id: string, body: ExternalProgressBody): Promise<ProgressSavedView> {
    return this.post<ProgressSavedView>(id, 'progress', body);
  }

  private async post<T>(id: string, report: string, body: unknown): Promise<T> {
    return (await this.http.request<T>('POST', apiPath('tasks', id, report), { body })).body;
  }
}

/** `client.queues`: pulling work over HTTP. */
export class QueuesApi {
  constructor(private readonly http: ApiClient) {}

  /**
   * `POST /api/v1/queues/{queue}/lease`: up to `max` due tasks of the queue, each with its attempt
   * number and lease, waiting up to `wait_s` seconds for one (an empty `tasks` at the timeout).
   */
  async lease(queue: string, request: LeaseRequest): Promise<LeaseView> {
    const timeoutMs = request.wait_s === undefined ? undefined : request.wait_s * 1000 + this.http.fetchTimeoutMs;
    return (await this.http.request<LeaseView>('POST', apiPath('queues', queue, 'lease'), { body: request, timeoutMs })).body;
  }
}
