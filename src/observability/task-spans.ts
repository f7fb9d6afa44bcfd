import { Attributes, Span, SpanKind, SpanStatusCode, Tracer } from '@opentelemetry/api';
import type { Clock } from '../domain/clock';
import type { ClaimedTask, DueEntry } from '../domain/task';
import { parentContextOf, SPAN_ATTRIBUTES as A, traceparentOf } from './trace-context';

/** What a submission span says about the tasks it stored. */
export interface SubmittedTask {
  id: string;
  taskType: string;
  tenantId: string;
  queue: string;
}

/** The span of one submission request (kind SERVER), open until the store answered. */
export interface SubmissionSpan {
  /**
   * This span as a W3C `traceparent`: stored with the submitted tasks, so their queue-wait and
   * attempt spans (every retry's too) are its children, in its trace.
   */
  readonly traceparent: string;
  /** One task: its id, type, tenant and queue, and the span is renamed `submit <task_type>`; several (a batch, a workflow): their count. */
  describe(tasks: readonly SubmittedTask[], workflowId?: string): void;
  /** Ends the span at `now` (epoch ms): outcome `accepted`, or status error with the error's code. */
  end(now: number, err?: unknown): void;
}

/** The span of an attempt's hand-off to an external queue's Redis stream (kind PRODUCER). */
export interface HandOffSpan {
  /** This span as a W3C `traceparent`: the stream entry's `traceparent`, so a consumer's spans join the task's trace. */
  readonly traceparent: string;
  /** Ends the span at `now` (epoch ms): outcome `appended`, or status error when the XADD failed. */
  end(now: number, failed?: string): void;
}

/**
 * The spans the service process makes for a task's trace (OpenTelemetry; the attempt spans are
 * the worker processes', see actors/worker/attempt-trace.ts). Times are the injected clock's
 * epoch ms, the clock of the task's due and claim times. Exists only while tracing is
 * configured (`tracesExporter` not `none`): callers hold null otherwise and pay nothing per task.
 *
 * - `submit <task_type>` / `submit batch` / `submit workflow` (SERVER): a submission request; a
 *   child of the caller's `traceparent` when one was sent, else the root of a new trace.
 * - `wait <task_type>` (INTERNAL): one per attempt, from its due time (`scheduled_at` or
 *   `created_at`, whichever is later; a retry's retry time) to its claim.
 * - `publish <queue>` (PRODUCER): an attempt appended to an external queue's stream.
 * - `fire <task_type>` (INTERNAL): a cron firing that created an instance (the root of its trace).
 *
 * Attribute names: {@link SPAN_ATTRIBUTES}.
 */
export class TaskSpans {
  constructor(private readonly tracer: Tracer) {}

  /**
   * Starts the span of a submission at `now` (epoch ms).
   * @param name `submit task` (renamed `submit <task_type>` by `describe`), `submit batch` or `submit workflow`
   * @param callerTraceparent the request's `traceparent` header, or null (a malformed one, which
   *   the submission refuses, is ignored here: the span then starts a trace)
   */
  submission(name: string, callerTraceparent: string | null, now: number): SubmissionSpan {
    return this.open(name, SpanKind.SERVER, callerTraceparent, now, {});
  }

  /**
   * Starts the span of a cron firing that creates instance `task` (kind INTERNAL, named
   * `fire <task_type>`, the root of the instance's trace: its context is what the instance keeps).
   */
  cronFire(cronId: string, task: SubmittedTask, now: number): SubmissionSpan {
    return this.open(`fire ${task.taskType}`, SpanKind.INTERNAL, null, now, { ...taskAttributes(task), [A.cronId]: cronId });
  }

  private open(name: string, kind: SpanKind, parent: string | null, now: number, attributes: Attributes): SubmissionSpan {
    const span = this.tracer.startSpan(name, { kind, startTime: now, attributes }, parentContextOf(parent));
    return {
      traceparent: traceparentOf(span.spanContext()),
      describe(tasks, workflowId) {
        if (tasks.length === 1 && workflowId === undefined) {
          span.updateName(`submit ${tasks[0].taskType}`);
          span.setAttributes(taskAttributes(tasks[0]));
        } else span.setAttribute(A.taskCount, tasks.length);
        if (workflowId !== undefined) span.setAttribute(A.workflowId, workflowId);
      },
      end(at, err) {
        if (err === undefined) span.setAttribute(A.outcome, 'accepted');
        else failSpan(span, errorCode(err), (err as Error)?.message ?? String(err));
        span.end(at);
      },
    };
  }

  /**
   * Records the queue wait of each claimed attempt that has a stored trace context: a span from
   * its due time to its claim (`startedAt`), a child of the stored `traceparent`. A task stored
   * without one (submitted while tracing was off) gets none.
   * @param queues task id → queue, from the claim's due entries ({@link queuesOf})
   */
  queueWaits(claimed: readonly ClaimedTask[], queues: ReadonlyMap<string, string | undefined>): void {
    for (const t of claimed) {
      if (!t.traceparent) continue;
      const span = this.tracer.startSpan(
        `wait ${t.taskType}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: Math.min(t.dueAt, t.startedAt),
          attributes: { ...attemptAttributes(t, queues.get(t.id)), [A.outcome]: 'claimed' },
        },
        parentContextOf(t.traceparent),
      );
      span.end(t.startedAt);
    }
  }

  /**
   * Starts the hand-off span of a claimed attempt to external queue `queue` at its claim, or
   * returns null for a task without a stored trace context.
   */
  handOff(t: ClaimedTask, queue: string): HandOffSpan | null {
    if (!t.traceparent) return null;
    const span = this.tracer.startSpan(
      `publish ${queue}`,
      { kind: SpanKind.PRODUCER, startTime: t.startedAt, attributes: attemptAttributes(t, queue) },
      parentContextOf(t.traceparent),
    );
    return {
      traceparent: traceparentOf(span.spanContext()),
      end(now, failed) {
        if (failed === undefined) span.setAttribute(A.outcome, 'appended');
        else failSpan(span, 'dispatch_failed', failed);
        span.end(now);
      },
    };
  }
}

/** Task id → queue of a claim's due entries (a queue is absent where the entry's producer did not know it). */
export function queuesOf(entries: readonly DueEntry[]): Map<string, string | undefined> {
  return new Map(entries.map((e) => [e.id, e.queue]));
}

function taskAttributes(t: SubmittedTask): Attributes {
  return { [A.taskId]: t.id, [A.taskType]: t.taskType, [A.tenant]: t.tenantId, [A.queue]: t.queue };
}

function attemptAttributes(t: ClaimedTask, queue: string | undefined): Attributes {
  return {
    [A.taskId]: t.id,
    [A.taskType]: t.taskType,
    [A.attempt]: t.attempt,
    [A.tenant]: t.tenantId,
    ...(queue !== undefined ? { [A.queue]: queue } : {}),
  };
}

function failSpan(span: Span, type: string, message: string): void {
  span.setAttribute(A.outcome, 'error');
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** A typed error's stable code (domain/errors.ts), else the error's name. */
function errorCode(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown } | null;
  if (e && typeof e.code === 'string') return e.code;
  return e && typeof e.name === 'string' ? e.name : 'Error';
}

/**
 * Runs a submission inside its span when tracing is configured (`spans` not null): the span
 * starts before validation and ends when `run` settles, with status error and the error's code
 * when it throws (the error is rethrown). Without `spans`, `run(null)` and nothing else.
 * @param run stores the tasks; it sets each task's `traceparent` to `span.traceparent` and calls `span.describe`
 */
export function inSubmissionSpan<T>(
  spans: TaskSpans | null | undefined,
  clock: Clock,
  name: string,
  callerTraceparent: unknown,
  run: (span: SubmissionSpan | null) => Promise<T>,
): Promise<T> {
  // Not tracing: the submission's own promise, nothing wrapped around it.
  if (!spans) return run(null);
  return runInSpan(
    spans.submission(name, typeof callerTraceparent === 'string' ? callerTraceparent.trim() : null, clock.now()),
    clock,
    run,
  );
}

async function runInSpan<T>(span: SubmissionSpan, clock: Clock, run: (span: SubmissionSpan) => Promise<T>): Promise<T> {
  try {
    const result = await run(span);
    span.end(clock.now());
    return result;
  } catch (err) {
    span.end(clock.now(), err);
    throw err;
  }
}
