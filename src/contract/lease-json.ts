import type { ClaimedTask } from '../domain/task';
import { iso } from './task-json';

/**
 * One attempt handed to a pull worker (`POST /api/v1/queues/{queue}/lease`, docs/API.md "HTTP
 * pull workers"). `attempt` is the fencing token every report names; `lease_expires_at` (ISO-8601
 * UTC) is when the attempt runs again unless a heartbeat or completion came first.
 */
export interface LeasedTaskJson {
  task_id: string;
  task_type: string;
  queue: string;
  tenant_id: string;
  payload: unknown;
  attempt: number;
  lease_expires_at: string;
  /** The task's `timeout_seconds` in ms: how long the work should take (the lease, not this, is enforced). */
  timeout_ms: number;
  idempotency_key: string | null;
  /** The value of the last checkpoint an earlier attempt saved (resume from it), or null. */
  checkpoint: unknown;
  /** W3C trace context for the worker's spans, or null. */
  traceparent: string | null;
  /** Workflow tasks only: the results of their upstream tasks by workflow-local id. */
  upstream_results?: Record<string, unknown>;
}

/** The answer of a lease request: the attempts handed out (empty: none within `wait_s`, or the service is stopping). */
export interface LeaseResponseJson {
  tasks: LeasedTaskJson[];
}

/** A claimed attempt as a pull worker receives it. */
export function leasedTaskJson(a: {
  task: ClaimedTask;
  queue: string;
  leaseExpiresAt: number;
  traceparent: string | null;
}): LeasedTaskJson {
  const t = a.task;
  return {
    task_id: t.id,
    task_type: t.taskType,
    queue: a.queue,
    tenant_id: t.tenantId,
    payload: t.payload ?? null,
    attempt: t.attempt,
    lease_expires_at: iso(a.leaseExpiresAt),
    timeout_ms: Math.round(t.timeoutSeconds * 1000),
    idempotency_key: t.idempotencyKey,
    checkpoint: 'lastCheckpoint' in t ? (t.lastCheckpoint ?? null) : null,
    traceparent: a.traceparent,
    ...(t.upstreamResults ? { upstream_results: t.upstreamResults } : {}),
  };
}
