import { randomBytes } from 'node:crypto';
import {
  context,
  Context,
  ProxyTracer,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  trace,
  Tracer,
  TraceFlags,
  isSpanContextValid,
} from '@opentelemetry/api';
import { parentContextOf, SPAN_ATTRIBUTES as A, traceparentOf } from '../../observability/trace-context';
import type { AttemptOutcome } from '../../domain/retry-policy';
import type { TraceContext } from '../../handlers/types';
import type { WorkItem } from '../protocol';

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
 * task's stored `traceparent` (W3C Trace Context: the submission span when the service traces,
 * else the submitter's own) or as a new trace without one. Attributes: task id, task type,
 * attempt, and tenant and queue when the dispatcher sent them (it does while it traces).
 * With no OpenTelemetry SDK registered the API's span records nothing and has the parent's ids;
 * the attempt still gets a span id of its own in `traceContext`, so the `traceparent` a handler
 * passes on names this attempt as the parent.
 */
export function startAttemptTrace(tracer: Tracer, item: WorkItem): AttemptTrace {
  if (!item.traceparent && recordsNothing(tracer)) return UNTRACED;
  const parentContext = parentContextOf(item.traceparent);
  const parent = trace.getSpanContext(parentContext);
  const span: Span = tracer.startSpan(
    `task ${item.taskType}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        [A.taskId]: item.id,
        [A.taskType]: item.taskType,
        [A.attempt]: item.attempt,
        ...(item.tenant !== undefined ? { [A.tenant]: item.tenant } : {}),
        ...(item.queue !== undefined ? { [A.queue]: item.queue } : {}),
      },
    },
    parentContext,
  );
  const sc = span.spanContext();
  let traceContext: TraceContext | null = null;
  if (isSpanContextValid(sc) && sc.spanId !== parent?.spanId) {
    traceContext = contextOf(sc.traceId, sc.spanId, sc.traceFlags);
  } else if (parent) {
    traceContext = contextOf(parent.traceId, randomBytes(8).toString('hex'), parent.traceFlags & TraceFlags.SAMPLED);
  }
  return {
    otelContext: trace.setSpan(parentContext, span),
    traceContext,
    end(outcome) {
      span.setAttribute(A.outcome, outcome.kind);
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

/** Runs `fn` with the attempt's span as the active one (for the handler's own spans); an untraced attempt's runs as it is. */
export function withAttemptContext<T>(t: AttemptTrace, fn: () => T): T {
  return t === UNTRACED ? fn() : context.with(t.otelContext, fn);
}

/**
 * The trace of an attempt of a task submitted without `traceparent` while no OpenTelemetry SDK is
 * registered: no span, `traceContext` null. What {@link startAttemptTrace} made for it before, a
 * non-recording span with no ids in a new context, showed nothing either, and took about 3 µs of
 * the worker per attempt (with the context's GC; a microbenchmark of 100,000 no-op attempts).
 */
const UNTRACED: AttemptTrace = Object.freeze({ otelContext: ROOT_CONTEXT, traceContext: null, end: () => undefined });

/**
 * Whether spans of `tracer` record nothing: it is the API's proxy for the global provider and no
 * SDK has registered a provider behind it (`ProxyTracerProvider.getDelegateTracer` answers
 * undefined until `trace.setGlobalTracerProvider`). Checked per attempt, so a provider registered
 * later (by `registerTracing` or a handler module) is used from then on.
 */
function recordsNothing(tracer: Tracer): boolean {
  if (!(tracer instanceof ProxyTracer)) return false;
  const provider = trace.getTracerProvider();
  return provider instanceof ProxyTracerProvider && provider.getDelegateTracer(tracer.name, tracer.version, tracer.options) === undefined;
}

function contextOf(traceId: string, spanId: string, traceFlags: number): TraceContext {
  return { traceId, spanId, traceparent: traceparentOf({ traceId, spanId, traceFlags }) };
}
