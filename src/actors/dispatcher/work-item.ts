import type { ClaimedTask } from '../../domain/task';
import type { SchedulerMetrics } from '../../observability/metrics';
import type { WorkItem } from '../protocol';
import { incGrouped } from '../../observability/inc-grouped';

/**
 * The `run` message entry of a claimed attempt: what its worker needs, nothing more. The body
 * (payload, upstream results, last checkpoint) moves into the entry: `t` keeps only the attempt's
 * metadata, which the dispatcher holds for the attempt's whole run (its `RunningAttempt`), while
 * the body is needed once, to send. Without this the main process held every running attempt's
 * payload until its end: 2,000 sleeping tasks of 256 KiB kept about 500 MB there.
 * @param traced the task's queue while the service traces: tenant and queue then go along, as
 *   attributes of the attempt span (undefined: not sent)
 */
export function takeWorkItem(t: ClaimedTask, traced?: { queue: string | undefined }): WorkItem {
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
  t.payload = null;
  if (t.upstreamResults) {
    item.upstreamResults = t.upstreamResults;
    t.upstreamResults = undefined;
  }
  if (t.traceparent) item.traceparent = t.traceparent;
  if ('lastCheckpoint' in t) {
    item.lastCheckpoint = t.lastCheckpoint;
    t.lastCheckpoint = undefined;
  }
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
