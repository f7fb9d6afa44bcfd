import { Context, ROOT_CONTEXT, SpanContext, trace } from '@opentelemetry/api';
import { parseTraceparent } from '../contract/traceparent';

/**
 * The OpenTelemetry context whose (remote) parent span is the one a W3C `traceparent` names
 * (https://www.w3.org/TR/trace-context/#traceparent-header); `ROOT_CONTEXT` for none or a
 * malformed value, so a span started in it begins a new trace.
 */
export function parentContextOf(traceparent: string | null | undefined): Context {
  const parsed = traceparent ? parseTraceparent(traceparent) : null;
  if (!parsed || 'invalid' in parsed) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parsed.traceId,
    spanId: parsed.parentId,
    traceFlags: parseInt(parsed.flags, 16) & 0xff,
    isRemote: true,
  });
}

/** The version-00 `traceparent` naming a span: `00-<trace id>-<span id>-<flags, 2 hex digits>`. */
export function traceparentOf(sc: Pick<SpanContext, 'traceId' | 'spanId' | 'traceFlags'>): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** Attribute names of the scheduler's spans (OpenTelemetry attribute namespace `scheduler.`). */
export const SPAN_ATTRIBUTES = {
  taskId: 'scheduler.task_id',
  taskType: 'scheduler.task_type',
  attempt: 'scheduler.attempt',
  tenant: 'scheduler.tenant',
  queue: 'scheduler.queue',
  outcome: 'scheduler.outcome',
  taskCount: 'scheduler.task_count',
  workflowId: 'scheduler.workflow_id',
  cronId: 'scheduler.cron_id',
} as const;
