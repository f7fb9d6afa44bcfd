import type { ClaimedTask } from '../../domain/task';
import type { SchedulerMetrics } from '../../observability/metrics';
import type { WorkItem } from '../protocol';
import { incGrouped } from '../../observability/inc-grouped';

/**
 * The `run` message entry of a claimed attempt: what its worker needs, nothing more.
 * @param traced the task's queue while the service traces: tenant and queue then go along, as
 *   attributes of the attempt span (undefined: not sent)
 */
export function workItemOf(t: ClaimedTask, traced?: { queue: string | undefined }): WorkItem {
  const item: WorkItem = {
    id: t.id,
    attempt: t.attempt,
    taskType: t.taskType,
    payload: t.payload,
    timeoutMs: t.timeoutSeconds * 1000,
    idempotencyKey: t.idempotencyKey,
    ...(t.upstreamResults ? { upstreamResults: t.upstreamResults } : {}),
    ...(t.traceparent ? { traceparent: t.traceparent } : {}),
    ...('lastCheckpoint' in t ? { lastCheckpoint: t.lastCheckpoint } : {}),
  };
  if (traced) {
    item.tenant = t.tenantId;
    if (traced.queue !== undefined) item.queue = traced.queue;
  }
  return item;
}

/**
 * Counts started attempts: dispatch lag (start − due, seconds) overall and per tenant, and the
 * attempts dispatched per tenant (one counter increment per tenant of the batch).
 */
export function observeStarts(metrics: SchedulerMetrics, tasks: readonly ClaimedTask[]): void {
  for (const t of tasks) {
    const lag = Math.max(0, t.startedAt - t.dueAt) / 1000;
    metrics.dispatchLag.observe(lag);
    metrics.tenantDispatchLag.observe({ tenant: metrics.tenantLabels.of(t.tenantId) }, lag);
  }
  incGrouped(
    metrics.tenantDispatched,
    tasks,
    (t) => t.tenantId,
    (t) => ({ tenant: metrics.tenantLabels.of(t.tenantId) }),
  );
}
