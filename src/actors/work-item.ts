import type { ClaimedTask } from '../domain/task';
import type { SchedulerMetrics } from '../observability/metrics';
import type { WorkItem } from './worker/protocol';

/** The `run` message entry of a claimed attempt: what its worker needs, nothing more. */
export function workItemOf(t: ClaimedTask): WorkItem {
  return {
    id: t.id,
    attempt: t.attempt,
    taskType: t.taskType,
    payload: t.payload,
    timeoutMs: t.timeoutSeconds * 1000,
    idempotencyKey: t.idempotencyKey,
    ...(t.upstreamResults ? { upstreamResults: t.upstreamResults } : {}),
    ...(t.traceparent ? { traceparent: t.traceparent } : {}),
  };
}

/** Counts a started attempt: dispatch lag (start − due, seconds) overall and per tenant. */
export function observeStart(metrics: SchedulerMetrics, t: ClaimedTask): void {
  const lag = Math.max(0, t.startedAt - t.dueAt) / 1000;
  const tenant = metrics.tenantLabels.of(t.tenantId);
  metrics.dispatchLag.observe(lag);
  metrics.tenantDispatchLag.observe({ tenant }, lag);
  metrics.tenantDispatched.inc({ tenant });
}
