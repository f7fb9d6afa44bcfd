/**
 * One leased attempt in a pull worker: runs its handler with `ctx`, keeps its lease alive with
 * heartbeats, enforces its `timeout_ms`, and reports its end once (`complete`). A report the
 * scheduler refuses as stale (409/404) ends it without a report: the task was cancelled, or its
 * lease ran out and it runs again elsewhere (at-least-once: the attempt number fences the late one).
 */
import { ApiError } from '../transport';
import { TaskCancelledError, TaskTimeoutError, WorkerClosedError } from './abort-reasons';
import { attemptLog } from './attempt-log';
import { AttemptLogBuffer, ProgressSender } from './attempt-reports';
import { failed, failure, Outcome, succeeded } from './outcome';
import { backoffMs, heartbeatIntervalMs, pause } from './timing';
import type { LeasedTask, WorkerClock, WorkerContext, WorkerHandler, WorkerLogger } from './types';
import { isStale, isTransient, WorkerApi } from './worker-api';

/** What a running attempt needs from its worker. */
export interface AttemptHost {
  api: WorkerApi;
  clock: WorkerClock;
  logger: WorkerLogger;
  /** Fixed interval of automatic heartbeats (default a third of the lease left). */
  heartbeatIntervalMs?: number;
}

/** How an attempt ended: reported (the scheduler recorded `outcome`), or not (why). */
export type AttemptEnd =
  { reported: true; outcome: Outcome } | { reported: false; reason: 'stale' | 'unreported'; outcome: Outcome | null; error?: unknown };

/** How long past the lease's expiry a completion is still retried (ms): clocks of worker and scheduler differ a little. */
const REPORT_GRACE_MS = 5_000;

/** A leased attempt from its start to its report. */
export class RunningAttempt {
  /** Resolves once the attempt's end is reported, refused or given up on; never rejects. */
  readonly ended: Promise<AttemptEnd>;
  private resolveEnded!: (end: AttemptEnd) => void;
  private readonly controller = new AbortController();
  private readonly logs: AttemptLogBuffer;
  private readonly progress: ProgressSender;
  private finished = false;
  private timeoutTimer: unknown = null;
  private heartbeatTimer: unknown = null;
  private leaseExpiresAt: string;

  /** @param handler null: no handler for the task's type (it fails permanently) */
  constructor(
    readonly task: LeasedTask,
    private readonly handler: WorkerHandler | null,
    private readonly host: AttemptHost,
  ) {
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    this.leaseExpiresAt = task.lease_expires_at;
    const { api } = host;
    this.logs = new AttemptLogBuffer(
      (lines) =>
        api
          .logs(task.task_id, task.attempt, lines)
          .catch((err) => host.logger.debug?.(`could not send log lines: ${(err as Error)?.message ?? String(err)}`, this.ids())),
      host.clock,
    );
    this.progress = new ProgressSender(
      (value) =>
        api.progress(task.task_id, task.attempt, value).catch((err) => {
          if (!this.refused('progress', err)) host.logger.debug?.(`could not send progress: ${(err as Error)?.message ?? err}`, this.ids());
        }),
      host.clock,
    );
  }

  /** Starts the handler and the attempt's timers. */
  start(): void {
    const { task, host } = this;
    if (!this.handler) {
      this.finish(failure(`no handler for task_type "${task.task_type}" in this worker`, 'unknown_task_type', true));
      return;
    }
    if (Number.isFinite(task.timeout_ms) && task.timeout_ms > 0) {
      this.timeoutTimer = host.clock.setTimeout(() => {
        const reason = new TaskTimeoutError(task.timeout_ms);
        this.finish(failure(reason.message, 'timeout', false), reason);
      }, task.timeout_ms);
    }
    this.scheduleHeartbeat();
    const handler = this.handler;
    const ctx = this.context();
    Promise.resolve()
      .then(() => handler(task.payload, ctx))
      .then(
        (result) => this.settled(() => succeeded(result)),
        (err: unknown) => this.settled(() => failed(err)),
      );
  }

  /** Ends the attempt now (close timed out): its signal aborts and it is reported failed, retryable. */
  abort(reason: WorkerClosedError): void {
    this.finish(failure(reason.message, reason.name, false), reason);
  }

  private context(): WorkerContext {
    const { task, host } = this;
    const ids = { task_id: task.task_id, attempt: task.attempt };
    return {
      taskId: task.task_id,
      taskType: task.task_type,
      queue: task.queue,
      tenantId: task.tenant_id,
      attempt: task.attempt,
      idempotencyKey: task.idempotency_key ?? null,
      traceparent: task.traceparent ?? null,
      signal: this.controller.signal,
      heartbeat: () => this.heartbeat(),
      log: attemptLog(ids, this.logs, host.logger, host.clock),
      upstreamResults: task.upstream_results ?? {},
      lastCheckpoint: task.checkpoint ?? null,
      checkpoint: async (value) => {
        try {
          await host.api.checkpoint(task.task_id, task.attempt, value);
        } catch (err) {
          this.refused('checkpoint', err);
          throw err;
        }
      },
      progress: (value) => this.progress.report(value),
    };
  }

  private settled(outcome: () => Outcome): void {
    if (this.finished) {
      this.host.logger.debug?.('handler settled after its attempt ended', { task_id: this.task.task_id, attempt: this.task.attempt });
      return;
    }
    let ended: Outcome;
    try {
      ended = outcome();
    } catch {
      // A thrown value whose reads throw (a Proxy): still a failure, never an unhandled rejection.
      ended = failure('the handler threw a value that could not be read', 'Error', false);
    }
    this.finish(ended);
  }

  /** Extends the lease; a refusal ends the attempt (its signal aborts). Never rejects. */
  private heartbeat(): Promise<void> {
    if (this.finished) return Promise.resolve();
    const { task, host } = this;
    return host.api.heartbeat(task.task_id, task.attempt).then(
      (expires) => {
        if (typeof expires === 'string') this.leaseExpiresAt = expires;
      },
      (err) => {
        if (!this.refused('heartbeat', err)) this.reportFailed('a heartbeat', err);
      },
    );
  }

  /** Beats at a fixed rate: the interval given, or a third of the lease granted at the start (each beat extends it by as much). */
  private scheduleHeartbeat(
    every = this.host.heartbeatIntervalMs ?? heartbeatIntervalMs(this.leaseExpiresAt, this.host.clock.now()),
  ): void {
    this.heartbeatTimer = this.host.clock.setTimeout(() => {
      this.scheduleHeartbeat(every);
      void this.heartbeat();
    }, every);
  }

  /**
   * When `err` says the attempt is stale, ends it without a report (its signal aborts with
   * TaskCancelledError). @returns whether it was stale
   */
  private refused(what: string, err: unknown): boolean {
    if (!isStale(err)) return false;
    if (this.finished) return true;
    this.stop();
    const code = err instanceof ApiError ? err.code : 'stale';
    this.host.logger.warn(`${what} refused (${code}): the attempt is no longer current; its handler is told to stop`, this.ids());
    this.abortSignal(new TaskCancelledError(`the scheduler refused this attempt's ${what} (${code})`));
    this.resolveEnded({ reported: false, reason: 'stale', outcome: null });
    return true;
  }

  /** Ends the attempt with `outcome` (once): stops its timers, aborts its signal with `reason`, sends its last log lines and its last progress, then reports. */
  private finish(outcome: Outcome, reason?: Error): void {
    if (this.finished) return;
    const progress = this.progress.flush();
    this.stop();
    if (reason) this.abortSignal(reason);
    void Promise.all([this.logs.end(), progress])
      .then(() => this.report(outcome))
      .then((end) => this.resolveEnded(end));
  }

  private stop(): void {
    this.finished = true;
    const { clock } = this.host;
    if (this.timeoutTimer !== null) clock.clearTimeout(this.timeoutTimer);
    if (this.heartbeatTimer !== null) clock.clearTimeout(this.heartbeatTimer);
    this.timeoutTimer = this.heartbeatTimer = null;
    this.progress.end();
  }

  private abortSignal(reason: Error): void {
    try {
      this.controller.abort(reason);
    } catch (err) {
      this.host.logger.warn('a listener of the handler signal threw', { ...this.ids(), error: String(err) });
    }
  }

  /**
   * `complete` with retries while the failure is transient and the lease may still hold. A result
   * the scheduler refuses (400/413: too deep, too large for a request) is reported as a permanent failure instead.
   */
  private async report(outcome: Outcome): Promise<AttemptEnd> {
    const { task, host } = this;
    const leaseEnd = Date.parse(this.leaseExpiresAt);
    const giveUpAt = (Number.isFinite(leaseEnd) ? leaseEnd : host.clock.now() + 30_000) + REPORT_GRACE_MS;
    let current = outcome;
    for (let failures = 0; ;) {
      try {
        await host.api.complete(
          task.task_id,
          task.attempt,
          current.kind === 'succeeded' ? { result: current.result } : { error: current.error },
        );
        return { reported: true, outcome: current };
      } catch (err) {
        if (isStale(err)) {
          // Our own earlier send, recorded without our hearing so: its answer was lost (the
          // connection broke), or it was answered 503 during a store fault and kept, to be written
          // once the store was back (docs/API.md, "HTTP pull workers"), perhaps on a try the
          // transport made by itself. Only this attempt's report can end the task SUCCEEDED by this
          // attempt's number (a new lease is a new attempt number).
          if (current.kind === 'succeeded' && recordedSuccess(err, task.attempt)) return { reported: true, outcome: current };
          const code = err instanceof ApiError ? err.code : 'stale';
          host.logger.warn(`completion refused (${code}): the attempt is no longer current (re-run or cancelled); dropped`, this.ids());
          return { reported: false, reason: 'stale', outcome: current };
        }
        if (current.kind === 'succeeded' && err instanceof ApiError && (err.status === 400 || err.status === 413)) {
          // Larger than the completion's body limit: the scheduler's own rule for a result over
          // `maxResultBytes` (the limit above it) is `result_too_large`, so the type does not depend on how much larger.
          current = failure(
            `the scheduler refused the result: ${err.message}`,
            err.status === 413 ? 'result_too_large' : 'result_rejected',
            true,
          );
          continue;
        }
        if (!isTransient(err) || host.clock.now() >= giveUpAt) {
          this.reportFailed('the completion', err);
          return { reported: false, reason: 'unreported', outcome: current, error: err };
        }
        await pause(host.clock, backoffMs(++failures));
      }
    }
  }

  private reportFailed(what: string, err: unknown): void {
    this.host.logger.warn(`could not send ${what}: ${(err as Error)?.message ?? String(err)}`, this.ids());
  }

  private ids(): { task_id: string; attempt: number } {
    return { task_id: this.task.task_id, attempt: this.task.attempt };
  }
}

/**
 * A 409 `ATTEMPT_CONFLICT` saying the task SUCCEEDED by attempt `attempt` itself
 * (`details.state`, `details.current_attempt`): the success this attempt reported was recorded.
 */
function recordedSuccess(err: unknown, attempt: number): boolean {
  if (!(err instanceof ApiError) || err.code !== 'ATTEMPT_CONFLICT') return false;
  return err.details.state === 'SUCCEEDED' && err.details.current_attempt === attempt;
}
