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
  // Optional fields are set only when present (assignments, not spreads of temporary objects:
  // this runs once per attempt, 100,000 times at the instant of a herd).
  const item: WorkItem = {
    id: t.id,
    attempt: t.attempt,
    taskType: t.taskType,
    payload: t.payload,
    timeoutMs: t.timeoutSeconds * 1000,
    idempotencyKey: t.idempotencyKey,
  };
  if (t.upstreamResults) item.upstreamResults = t.upstreamResults;
  if (t.traceparent) item.traceparent = t.traceparent;
  if ('lastCheckpoint' in t) item.lastCheckpoint = t.lastCheckpoint;
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
