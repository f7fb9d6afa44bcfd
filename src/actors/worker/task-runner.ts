import { AttemptOutcome } from '../../domain/retry-policy';
import { describeError, errorDetail } from '../../domain/attempt-error';
import { Clock } from '../../domain/clock';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../../domain/json-depth';
import { jsonBytesAtLeast } from '../../domain/json-size';
import { isPermanent, TaskHandler } from '../../handlers/types';
import { AttemptContext, AttemptContextHost, AttemptState } from './attempt-context';
import { ProgressItem, WorkItem, WorkResult } from '../protocol';
import { CheckpointSender, DEFAULT_PROGRESS_INTERVAL_MS, LogShipper, ProgressThrottle, sendCheckpoint } from './attempt-reports';
import type { AttemptLogAppend } from '../../domain/attempt-log';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { AttemptTrace, startAttemptTrace, withAttemptContext } from './attempt-trace';
import { attemptTracer } from '../../observability/tracing';

/**
 * `JSON`'s functions as the worker process started: a handler that replaces `JSON.stringify` (or
 * `parse`) in its process changes them for itself, not for the worker's own reading of every later
 * result in that process (before, each ended a permanent `result_not_serializable`).
 */
const { stringify: jsonStringify, parse: jsonParse } = JSON;

/** Abort reasons a handler's signal can carry. */
export class TaskTimeoutError extends Error {
  constructor(ms: number) {
    super(`timed out after ${ms} ms`);
    this.name = 'TaskTimeoutError';
  }
}

export class TaskCancelledError extends Error {
  constructor() {
    super('cancelled');
    this.name = 'TaskCancelledError';
  }
}

/** Default cap on a handler result (1 MiB of JSON), the `maxResultBytes` default. */
export const DEFAULT_MAX_RESULT_BYTES = 1_048_576;

/**
 * One running attempt in its runner. Its signal's controller is made when the handler first reads
 * `ctx.signal` (most handlers never do: in a CPU profile of the workers draining no-op tasks,
 * making the signal took about a tenth of their time), and its child logger on first use (most
 * attempts of a busy worker log nothing).
 */
class Attempt implements AttemptState {
  controller: AbortController | null = null;
  /** Why the attempt was aborted, kept for a signal made after the abort. */
  abortReason: Error | null = null;
  timer: ReturnType<Clock['setTimeout']> | null = null;
  done = false;
  private childLog: Logger | null | undefined;

  constructor(
    readonly item: WorkItem,
    /** {@link Clock.monotonic} at its start: its `duration_ms` is not moved by a step of the wall clock. */
    readonly startedAt: number,
    readonly trace: AttemptTrace,
    private readonly parentLog: Logger | null,
  ) {}

  /** The attempt's signal, made on first use: already aborted (with its reason) if the attempt was. */
  signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** A child of the worker's log with task_id, attempt, task_type and the trace's ids (null without a worker log). */
  log(): Logger | null {
    if (this.childLog !== undefined) return this.childLog;
    const { item } = this;
    const tc = this.trace.traceContext;
    const bindings: Record<string, unknown> = { task_id: item.id, attempt: item.attempt, task_type: item.taskType };
    if (tc) {
      bindings.trace_id = tc.traceId;
      bindings.span_id = tc.spanId;
    }
    return (this.childLog = this.parentLog?.child(bindings) ?? null);
  }
}

/** Optional parts of a {@link TaskRunner}. */
export interface TaskRunnerOptions {
  /** Largest result kept, as UTF-8 JSON text (`maxResultBytes`; default 1 MiB). */
  maxResultBytes?: number;
  /** Tracer of attempt spans (default: the OpenTelemetry API's global one, a no-op without an SDK). */
  tracer?: Tracer;
  /** Worker log: each attempt logs through a child with task_id, attempt and trace_id/span_id. */
  log?: Logger;
  /** Stores `ctx.checkpoint(value)` (the worker asks the dispatcher); without it a checkpoint rejects. */
  checkpoint?: CheckpointSender;
  /** Receives batches of `ctx.progress(value)` reports (the worker tells the dispatcher); without it they are dropped. */
  progress?: (reports: ProgressItem[]) => void;
  /** At most one progress batch per this many ms (default 1000); also the interval of log batches. */
  progressIntervalMs?: number;
  /**
   * Receives batches of `ctx.log` lines, kept per attempt (bounded, domain/attempt-log.ts); without
   * it the lines only go to the worker's log.
   */
  logs?: (logs: AttemptLogAppend[]) => void;
  /**
   * Told when handlers of aborted attempts stop after all: their outcomes went out at the abort
   * marked `handlerRunning` (the dispatcher kills the process if they never stop).
   */
  settled?: (attempts: Array<{ id: string; attempt: number }>) => void;
}

/**
 * Runs attempts inside a worker process: one AbortController per attempt, made when its handler
 * first reads `ctx.signal` (fired by cancel or by `timeoutMs`), the outcome reported as soon as
 * the handler settles or its signal aborts, and results batched per event-loop turn into one
 * report. Knows nothing of comedy.
 */
export class TaskRunner {
  private attempts = new Map<string, Attempt>();
  private outbox: WorkResult[] = [];
  private flushScheduled = false;
  private beat: ((attempts: Array<{ id: string; attempt: number }>) => void) | null = null;
  private beatScheduled = false;

  /**
   * @param handlers task_type → handler
   * @param report receives batches of finished attempts
   * @param clock time source (the worker's real clock in production)
   * @param o result cap, tracing, log and the side channels to the dispatcher (all optional)
   */
  constructor(
    private readonly handlers: ReadonlyMap<string, TaskHandler>,
    private readonly report: (results: WorkResult[]) => void,
    private readonly clock: Clock,
    o: TaskRunnerOptions = {},
  ) {
    this.maxResultBytes = o.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
    this.tracer = o.tracer ?? attemptTracer();
    this.log = o.log ?? null;
    this.sendCheckpoint = o.checkpoint ?? null;
    this.progress = new ProgressThrottle(clock, o.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS, o.progress ?? (() => undefined));
    this.logs = o.logs ? new LogShipper(clock, o.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS, o.logs) : null;
    this.settled = o.settled ?? null;
  }

  private readonly settled: TaskRunnerOptions['settled'] | null;

  private readonly maxResultBytes: number;
  private readonly tracer: Tracer;
  private readonly log: Logger | null;
  private readonly sendCheckpoint: CheckpointSender | null;
  private readonly progress: ProgressThrottle;
  private readonly logs: LogShipper | null;

  get running(): number {
    return this.attempts.size;
  }

  /** Starts each item. */
  run(items: WorkItem[]): void {
    for (const item of items) this.start(item);
  }

  /**
   * Sends the ids of the running attempts to `send` every `intervalMs`, and soon after a handler
   * calls `ctx.heartbeat()`: the dispatcher extends their leases. Nothing is sent while idle.
   * (A worker process with a liveness thread uses {@link heartbeatsOnRequest} instead.)
   */
  startHeartbeats(intervalMs: number, send: (attempts: Array<{ id: string; attempt: number }>) => void): void {
    this.beat = send;
    const tick = () => {
      this.sendBeat();
      this.clock.setTimeout(tick, intervalMs);
    };
    this.clock.setTimeout(tick, intervalMs);
  }

  /** Sends the ids of the running attempts to `send` soon after a handler calls `ctx.heartbeat()` (no periodic beat). */
  heartbeatsOnRequest(send: (attempts: Array<{ id: string; attempt: number }>) => void): void {
    this.beat = send;
  }

  private requestHeartbeat(): void {
    if (!this.beat || this.beatScheduled) return;
    this.beatScheduled = true;
    this.clock.setTimeout(() => {
      this.beatScheduled = false;
      this.sendBeat();
    }, 0);
  }

  private sendBeat(): void {
    if (this.beat && this.attempts.size > 0) {
      this.beat([...this.attempts.values()].map((a) => ({ id: a.item.id, attempt: a.item.attempt })));
    }
  }

  /** Aborts a running attempt with reason {@link TaskCancelledError}. */
  abort(taskId: string, attempt: number): void {
    const a = this.attempts.get(taskId);
    if (a && a.item.attempt === attempt) this.abortAttempt(a, new TaskCancelledError());
  }

  /**
   * Reports the attempt's outcome for `reason` at once (the handler may never settle), then fires
   * its signal. Only the runner aborts its controllers, so no listener on the signal is needed.
   * The outcome is recorded first, so a handler that broke its signal (a replaced `dispatchEvent`
   * that throws) cannot leave the attempt running, its lease renewed for ever.
   */
  private abortAttempt(a: Attempt, reason: Error): void {
    if (a.done) return;
    a.abortReason = reason;
    this.finish(a, outcomeOfAbort(reason), true);
    try {
      a.controller?.abort(reason);
    } catch (err) {
      a.log()?.warn({ err }, 'aborting the handler signal threw; the attempt is already reported');
    }
  }

  private start(item: WorkItem): void {
    const trace = startAttemptTrace(this.tracer, item);
    const attempt = new Attempt(item, this.clock.monotonic(), trace, this.log);
    if (this.log?.isLevelEnabled('debug')) attempt.log()?.debug('attempt started');
    attempt.timer = this.clock.setTimeout(() => this.abortAttempt(attempt, new TaskTimeoutError(item.timeoutMs)), item.timeoutMs);
    this.attempts.set(item.id, attempt);
    const handler = this.handlers.get(item.taskType);
    if (!handler) {
      this.finish(attempt, {
        kind: 'failed',
        message: `no handler for task_type "${item.taskType}" in this worker`,
        errorType: 'unknown_task_type',
        permanent: true,
      });
      return;
    }
    const ctx = new AttemptContext(attempt, trace.traceContext, this.contextHost);
    Promise.resolve()
      // Aborted (cancelled) before its handler was called: not called at all.
      .then(() => (attempt.done ? undefined : withAttemptContext(trace, () => handler(item.payload, ctx))))
      .then(
        (result) => (attempt.done ? this.stopped(attempt) : this.finish(attempt, succeeded(result, this.maxResultBytes))),
        (err: unknown) => (attempt.done ? this.stopped(attempt) : this.finish(attempt, failed(err))),
      );
  }

  /** What the attempts' contexts call in this runner (one object, not closures per attempt). */
  private readonly contextHost: AttemptContextHost = {
    heartbeat: () => this.requestHeartbeat(),
    keepLog: (item, message, fields) => this.logs?.log(item.id, item.attempt, message, fields),
    checkpoint: (item, value) => sendCheckpoint(this.sendCheckpoint, item.id, item.attempt, value),
    progress: (item, value) => this.progress.report(item.id, item.attempt, value),
  };

  /**
   * The handler of an attempt already reported (aborted) settled: its process need not be killed.
   * A report still in the outbox loses its `handlerRunning` mark; a sent one is followed by `settled`.
   */
  private stopped(a: Attempt): void {
    if (!a.abortReason) return;
    const queued = this.outbox.find((r) => r.id === a.item.id && r.attempt === a.item.attempt);
    if (queued) delete queued.handlerRunning;
    else this.settled?.([{ id: a.item.id, attempt: a.item.attempt }]);
  }

  /** @param handlerRunning reported at the abort, before the handler settled */
  private finish(a: Attempt, outcome: AttemptOutcome, handlerRunning = false): void {
    if (a.done) return;
    a.done = true;
    if (a.timer) this.clock.clearTimeout(a.timer);
    if (this.attempts.get(a.item.id) === a) this.attempts.delete(a.item.id);
    this.progress.ended(a.item.id, a.item.attempt);
    this.logs?.ended(a.item.id, a.item.attempt);
    const durationMs = Math.max(0, this.clock.monotonic() - a.startedAt);
    a.trace.end(outcome);
    if (outcome.kind === 'failed')
      a.log()?.warn(
        { outcome: 'failed', error_type: outcome.errorType, err_message: outcome.message, duration_ms: durationMs },
        'attempt failed',
      );
    else if (this.log?.isLevelEnabled('debug')) a.log()?.debug({ outcome: outcome.kind, duration_ms: durationMs }, 'attempt finished');
    const result: WorkResult = { id: a.item.id, attempt: a.item.attempt, outcome, durationMs };
    if (handlerRunning) result.handlerRunning = true;
    this.outbox.push(result);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        const batch = this.outbox;
        this.outbox = [];
        this.report(batch);
      });
    }
  }
}

/**
 * A handler result must survive JSON (it crosses a process boundary and is stored), fit in
 * `maxBytes` as UTF-8 JSON text and nest at most {@link MAX_JSON_DEPTH} levels, as a payload
 * must: a larger one ends the attempt as a permanent `result_too_large`, a deeper one as a
 * permanent `result_too_deep` (a result thousands of levels deep overflowed the stack where it
 * was handed to the store's thread, and where it went to its dependents as their upstream result).
 * A result sure to be too large is refused before it is serialised (domain/json-size.ts).
 */
function succeeded(result: unknown, maxBytes: number): AttemptOutcome {
  // Some results would take minutes and the worker's heap to stringify before being refused for
  // their size (a 100 MB typed array, an object graph sharing its levels): a bounded walk finds them first.
  const least = jsonBytesAtLeast(result, maxBytes);
  if (least > maxBytes) {
    return {
      kind: 'failed',
      message: `handler result is at least ${least} bytes of JSON, more than the ${maxBytes} bytes allowed (maxResultBytes)`,
      errorType: 'result_too_large',
      permanent: true,
    };
  }
  try {
    const text = jsonStringify(result);
    const bytes = text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
    if (bytes > maxBytes) {
      return {
        kind: 'failed',
        message: `handler result is ${bytes} bytes of JSON, more than the ${maxBytes} bytes allowed (maxResultBytes)`,
        errorType: 'result_too_large',
        permanent: true,
      };
    }
    const value = text === undefined ? null : (jsonParse(text) as unknown);
    // Walked on the parsed copy: a tree no larger than `text`, whatever the handler's object shared.
    if (exceedsJsonDepth(value)) {
      return {
        kind: 'failed',
        message: `handler result nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays (the bound of payloads too)`,
        errorType: 'result_too_deep',
        permanent: true,
      };
    }
    return { kind: 'succeeded', result: value };
  } catch (err) {
    return {
      kind: 'failed',
      message: `handler result is not JSON-serialisable: ${(err as Error).message}`,
      errorType: 'result_not_serializable',
      permanent: true,
    };
  }
}

/**
 * A handler's throw: its message and type, and its code, causes and bounded stack (domain/attempt-error.ts).
 * Never throws: a throw here would leave the attempt unreported until its timeout, and its worker
 * process killed with every attempt beside it.
 */
function failed(err: unknown): AttemptOutcome {
  try {
    const described = describeError(err);
    const detail = errorDetail(described);
    return {
      kind: 'failed',
      message: described.message,
      errorType: described.type,
      permanent: isPermanent(err),
      ...(Object.keys(detail).length > 0 ? { detail } : {}),
    };
  } catch {
    return { kind: 'failed', message: 'the thrown value could not be described', errorType: 'Error', permanent: false };
  }
}

function outcomeOfAbort(reason: unknown): AttemptOutcome {
  if (reason instanceof TaskCancelledError) return { kind: 'cancelled' };
  const message = reason instanceof Error ? reason.message : 'aborted';
  return { kind: 'failed', message, errorType: 'timeout', permanent: false };
}
