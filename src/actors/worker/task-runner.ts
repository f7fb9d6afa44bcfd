import { AttemptOutcome } from '../../domain/retry-policy';
import { Clock } from '../../domain/clock';
import { HandlerContext, isPermanent, TaskHandler } from '../../handlers/types';
import { WorkItem, WorkResult } from './protocol';

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

interface Attempt {
  item: WorkItem;
  controller: AbortController;
  timer: ReturnType<Clock['setTimeout']>;
  startedAt: number;
  done: boolean;
}

/**
 * Runs attempts inside a worker process: one AbortController per attempt (fired by cancel or by
 * `timeoutMs`), the outcome reported as soon as the handler settles or its signal aborts, and
 * results batched per event-loop turn into one report. Knows nothing of comedy.
 */
export class TaskRunner {
  private attempts = new Map<string, Attempt>();
  private outbox: WorkResult[] = [];
  private flushScheduled = false;

  /**
   * @param handlers task_type → handler
   * @param report receives batches of finished attempts
   * @param clock time source (the worker's real clock in production)
   */
  constructor(
    private readonly handlers: ReadonlyMap<string, TaskHandler>,
    private readonly report: (results: WorkResult[]) => void,
    private readonly clock: Clock,
  ) {}

  get running(): number {
    return this.attempts.size;
  }

  /** Starts each item. */
  run(items: WorkItem[]): void {
    for (const item of items) this.start(item);
  }

  /** Aborts a running attempt with reason {@link TaskCancelledError}. */
  abort(taskId: string, attempt: number): void {
    const a = this.attempts.get(taskId);
    if (a && a.item.attempt === attempt) a.controller.abort(new TaskCancelledError());
  }

  private start(item: WorkItem): void {
    const controller = new AbortController();
    const startedAt = this.clock.now();
    const attempt: Attempt = {
      item,
      controller,
      startedAt,
      done: false,
      timer: this.clock.setTimeout(() => controller.abort(new TaskTimeoutError(item.timeoutMs)), item.timeoutMs),
    };
    this.attempts.set(item.id, attempt);
    controller.signal.addEventListener('abort', () => this.finish(attempt, outcomeOfAbort(controller.signal.reason)), {
      once: true,
    });
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
    const ctx: HandlerContext = {
      taskId: item.id,
      attempt: item.attempt,
      idempotencyKey: item.idempotencyKey,
      signal: controller.signal,
      heartbeat: () => undefined,
      log: () => undefined,
      upstreamResults: {},
    };
    Promise.resolve()
      .then(() => handler(item.payload, ctx))
      .then(
        (result) => this.finish(attempt, succeeded(result)),
        (err: unknown) => this.finish(attempt, failed(err)),
      );
  }

  private finish(a: Attempt, outcome: AttemptOutcome): void {
    if (a.done) return;
    a.done = true;
    this.clock.clearTimeout(a.timer);
    if (this.attempts.get(a.item.id) === a) this.attempts.delete(a.item.id);
    this.outbox.push({ id: a.item.id, attempt: a.item.attempt, outcome, durationMs: this.clock.now() - a.startedAt });
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

/** A handler result must survive JSON (it crosses a process boundary and is stored). */
function succeeded(result: unknown): AttemptOutcome {
  try {
    const text = JSON.stringify(result);
    return { kind: 'succeeded', result: text === undefined ? null : (JSON.parse(text) as unknown) };
  } catch (err) {
    return {
      kind: 'failed',
      message: `handler result is not JSON-serialisable: ${(err as Error).message}`,
      errorType: 'result_not_serializable',
      permanent: true,
    };
  }
}

function failed(err: unknown): AttemptOutcome {
  const e = err instanceof Error ? err : new Error(String(err));
  return { kind: 'failed', message: e.message, errorType: e.name || 'Error', permanent: isPermanent(err) };
}

function outcomeOfAbort(reason: unknown): AttemptOutcome {
  if (reason instanceof TaskCancelledError) return { kind: 'cancelled' };
  const message = reason instanceof Error ? reason.message : 'aborted';
  return { kind: 'failed', message, errorType: 'timeout', permanent: false };
}
