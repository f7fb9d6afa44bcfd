import { randomBytes } from 'node:crypto';
import { context, Context, ROOT_CONTEXT, Span, SpanKind, SpanStatusCode, trace, Tracer, TraceFlags, isSpanContextValid } from '@opentelemetry/api';
import { parseTraceparent } from '../../contract/traceparent';
import type { AttemptOutcome } from '../../domain/retry-policy';
import type { TraceContext } from '../../handlers/types';
import type { WorkItem } from './protocol';

/** The span of one attempt, the context a handler runs in, and what the handler is told. */
export interface AttemptTrace {
  /** The OpenTelemetry context with the attempt's span active (handlers run inside it). */
  otelContext: Context;
  /** `ctx.traceContext`: null for a task submitted without `traceparent` while no SDK records spans. */
  traceContext: TraceContext | null;
  /** Ends the span with the attempt's outcome. */
  end(outcome: AttemptOutcome): void;
}

/**
 * Starts the span of an attempt (kind CONSUMER, named `task <task_type>`), as a child of the
 * `traceparent` the task was submitted with (W3C Trace Context) or as a new trace without one.
 * With no OpenTelemetry SDK registered the API's span records nothing and has the parent's ids;
 * the attempt still gets a span id of its own in `traceContext`, so the `traceparent` a handler
 * passes on names this attempt as the parent.
 */
export function startAttemptTrace(tracer: Tracer, item: WorkItem): AttemptTrace {
  const parsed = item.traceparent ? parseTraceparent(item.traceparent) : null;
  const parent = parsed && !('invalid' in parsed) ? parsed : null;
  const parentContext = parent
    ? trace.setSpanContext(ROOT_CONTEXT, { traceId: parent.traceId, spanId: parent.parentId, traceFlags: parseInt(parent.flags, 16) & 0xff, isRemote: true })
    : ROOT_CONTEXT;
  const span: Span = tracer.startSpan(
    `task ${item.taskType}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: { 'scheduler.task_id': item.id, 'scheduler.task_type': item.taskType, 'scheduler.attempt': item.attempt },
    },
    parentContext,
  );
  const sc = span.spanContext();
  let traceContext: TraceContext | null = null;
  if (isSpanContextValid(sc) && sc.spanId !== parent?.parentId) {
    traceContext = contextOf(sc.traceId, sc.spanId, sc.traceFlags);
  } else if (parent) {
    traceContext = contextOf(parent.traceId, randomBytes(8).toString('hex'), parseInt(parent.flags, 16) & TraceFlags.SAMPLED);
  }
  return {
    otelContext: trace.setSpan(parentContext, span),
    traceContext,
    end(outcome) {
      span.setAttribute('scheduler.outcome', outcome.kind);
      if (outcome.kind === 'failed') {
        span.setAttribute('error.type', outcome.errorType);
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
      } else if (outcome.kind === 'succeeded') {
        span.setStatus({ code: SpanStatusCode.OK });
      }
      span.end();
    },
  };
}

/** Runs `fn` with the attempt's span as the active one (for the handler's own spans). */
export function withAttemptContext<T>(t: AttemptTrace, fn: () => T): T {
  return context.with(t.otelContext, fn);
}

function contextOf(traceId: string, spanId: string, flags: number): TraceContext {
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${(flags & 0xff).toString(16).padStart(2, '0')}` };
}
