/**
 * A pull worker in the application's own process: it leases due tasks of one queue over HTTP (long
 * poll), runs them with the application's handlers, at most `concurrency` at a time, and reports
 * each (docs/WORKERS.md). The scheduler needs no Redis for it and works with its embedded store.
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { BadRequestError, ForbiddenError, NotFoundError, SchedulerApiError, UnauthorizedError } from '../errors';
import { ApiClient, baseUrlsOf } from '../transport';
import { WorkerClosedError } from './abort-reasons';
import { AttemptEnd, AttemptHost, RunningAttempt } from './attempt';
import { backoffMs, MAX_BACKOFF_MS, pause, systemClock } from './timing';
import type { CloseOptions, LeasedTask, WorkerClock, WorkerHandler, WorkerLogger, WorkerOptions } from './types';
import { CompletionError, MAX_LEASE_BATCH, MAX_POLL_WAIT_S, WorkerApi } from './worker-api';

/** Default seconds a lease request waits for a due task. */
export const DEFAULT_POLL_WAIT_S = 20;

/** After an empty lease answer quicker than this (ms; `pollWaitS` 0, or a server that does not wait), the next waits out the rest. */
export const MIN_EMPTY_POLL_MS = 1000;

/**
 * How long a busy worker (fewer than a quarter of its slots free) waits for more slots to free
 * before it asks for tasks (ms), so that one lease request serves several of them.
 */
export const GATHER_SLOTS_MS = 5;

/** The events of a {@link Worker}: a task's attempt recorded as succeeded or failed, and failures of the worker itself. */
export interface WorkerEventMap {
  /** The scheduler recorded the attempt's result. */
  completed: [task: LeasedTask, result: unknown];
  /** The scheduler recorded the attempt's failure (retried unless `error.permanent`). */
  failed: [task: LeasedTask, error: CompletionError];
  /** A lease request failed (the worker backs off and tries again), or an attempt's end could not be reported. */
  error: [err: unknown];
}

/** The default local logger: warnings and errors to the console, nothing else. */
const consoleWarnings: WorkerLogger = Object.freeze({
  info: () => undefined,
  warn: (message: string, fields?: Record<string, unknown>) => console.warn(message, fields ?? ''),
  error: (message: string, fields?: Record<string, unknown>) => console.error(message, fields ?? ''),
});

/**
 * Made by {@link createWorker}: `start()` begins polling, `close()` stops gracefully. Emits
 * `completed`, `failed` and `error` ({@link WorkerEventMap}); without an `error` listener errors are
 * only logged (they never throw).
 */
export class Worker extends EventEmitter<WorkerEventMap> {
  /** Sent with every lease; the tasks' `worker_id`. */
  readonly workerId: string;
  readonly queue: string;
  readonly concurrency: number;
  private readonly api: WorkerApi;
  private readonly clock: WorkerClock;
  private readonly logger: WorkerLogger;
  private readonly handlers: Record<string, WorkerHandler>;
  private readonly pollWaitS: number;
  private readonly hasApiKey: boolean;
  private readonly host: AttemptHost;
  private readonly inFlight = new Set<RunningAttempt>();
  private readonly stopPolling = new AbortController();
  private polling: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  private slotFreed: (() => void) | null = null;

  /** @throws TypeError / RangeError for options out of their bounds ({@link WorkerOptions}) */
  constructor(options: WorkerOptions) {
    super();
    checkOptions(options);
    this.queue = options.queue;
    this.concurrency = options.concurrency ?? 1;
    this.pollWaitS = options.pollWaitS ?? DEFAULT_POLL_WAIT_S;
    this.hasApiKey = options.apiKey !== undefined && options.apiKey !== '';
    this.workerId = options.workerId ?? `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.handlers = { ...options.handlers };
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? consoleWarnings;
    this.api = new WorkerApi(new ApiClient({ url: options.url, apiKey: options.apiKey, tls: options.tls }), this.queue, this.workerId);
    this.host = { api: this.api, clock: this.clock, logger: this.logger, heartbeatIntervalMs: options.heartbeatIntervalMs };
  }

  /** Attempts running now (leased, not yet reported). */
  get running(): number {
    return this.inFlight.size;
  }

  /**
   * Begins polling the queue (resolves at once; polling goes on until {@link close}). Calling it
   * again while running does nothing. @throws Error after close()
   */
  async start(): Promise<void> {
    if (this.closing) throw new Error('this worker was closed; create a new one');
    this.polling ??= this.poll();
  }

  /**
   * Stops gracefully: no new leases (a pending long poll is abandoned), waits for the running
   * handlers and their reports, then resolves. After `timeoutMs` the handlers still running have
   * their signals aborted (`WorkerClosedError`) and are reported failed, to be retried. Repeated
   * calls share one close.
   */
  close(options: CloseOptions = {}): Promise<void> {
    this.closing ??= this.shutdown(options.timeoutMs);
    return this.closing;
  }

  private async shutdown(timeoutMs: number | undefined): Promise<void> {
    this.stopPolling.abort();
    this.slotFreed?.();
    await this.polling;
    const attempts = [...this.inFlight];
    if (attempts.length === 0) return;
    const timer =
      timeoutMs === undefined
        ? null
        : this.clock.setTimeout(() => {
            const reason = new WorkerClosedError(timeoutMs);
            for (const a of this.inFlight) a.abort(reason);
          }, timeoutMs);
    await Promise.all(attempts.map((a) => a.ended));
    if (timer !== null) this.clock.clearTimeout(timer);
  }

  /** Leases while not closing: as many tasks as slots are free, waiting for a slot when none is. */
  private async poll(): Promise<void> {
    const { signal } = this.stopPolling;
    let failures = 0;
    let gathered = false;
    while (!signal.aborted) {
      const free = this.concurrency - this.inFlight.size;
      if (free <= 0) {
        await this.nextFreeSlot();
        gathered = false;
        continue;
      }
      if (!gathered && free < Math.ceil(this.concurrency / 4)) {
        // A busy worker asks for several tasks at once: the slots freeing within a few ms share one request.
        gathered = true;
        await pause(this.clock, GATHER_SLOTS_MS, signal);
        continue;
      }
      gathered = false;
      const askedAt = this.clock.now();
      let tasks: LeasedTask[];
      try {
        tasks = await this.api.lease(Math.min(free, MAX_LEASE_BATCH), this.pollWaitS, signal);
        failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        ++failures;
        const refusal = configurationRefusal(err, this.hasApiKey);
        // A refusal only a change of key or configuration ends: tried again at the longest pause, as an error.
        // A 429 or 503 that says when to come back (`Retry-After`, capped at the longest pause) is heard.
        const asked = err instanceof SchedulerApiError ? err.retryAfterMs : undefined;
        const backoff = refusal ? backoffMs(Number.MAX_SAFE_INTEGER) : backoffMs(failures);
        const delay = asked === undefined || refusal ? backoff : Math.min(Math.max(asked, backoff), MAX_BACKOFF_MS);
        const line = `lease request failed (${failures} in a row); next try in ${delay} ms: ${(err as Error)?.message ?? err}`;
        if (refusal) this.logger.error(`${line} (${refusal})`, { queue: this.queue });
        else this.logger.warn(line, { queue: this.queue });
        this.emitSafely('error', err);
        await pause(this.clock, delay, signal);
        continue;
      }
      for (const task of tasks) this.run(task);
      const took = this.clock.now() - askedAt;
      if (tasks.length === 0 && took < MIN_EMPTY_POLL_MS) await pause(this.clock, MIN_EMPTY_POLL_MS - took, signal);
    }
  }

  private nextFreeSlot(): Promise<void> {
    return new Promise<void>((resolve) => (this.slotFreed = resolve)).then(() => {
      this.slotFreed = null;
    });
  }

  private run(task: LeasedTask): void {
    const handler = Object.hasOwn(this.handlers, task.task_type) ? this.handlers[task.task_type] : null;
    const attempt = new RunningAttempt(task, handler, this.host);
    this.inFlight.add(attempt);
    void attempt.ended.then((end) => {
      this.inFlight.delete(attempt);
      this.slotFreed?.();
      this.announce(task, end);
    });
    attempt.start();
  }

  private announce(task: LeasedTask, end: AttemptEnd): void {
    if (end.reported) {
      if (end.outcome.kind === 'succeeded') this.emitSafely('completed', task, end.outcome.result);
      else this.emitSafely('failed', task, end.outcome.error);
    } else if (end.reason === 'unreported') {
      this.emitSafely('error', end.error);
    }
  }

  /** Emits without letting a listener's throw (or a missing `error` listener) break the worker. */
  private emitSafely<K extends keyof WorkerEventMap>(event: K, ...args: WorkerEventMap[K]): void {
    if (event === 'error' && this.listenerCount('error') === 0) return;
    try {
      (this.emit as (e: K, ...a: WorkerEventMap[K]) => boolean)(event, ...args);
    } catch (err) {
      this.logger.error(`a '${event}' listener threw: ${(err as Error)?.message ?? err}`);
    }
  }
}

/**
 * What to change when a lease is refused for a reason that retrying cannot end (400: a queue name or
 * worker id the scheduler refuses; 401, 403, a 404 for a queue that is not a pull queue); null for a
 * failure that may pass (503, a lost connection).
 */
function configurationRefusal(err: unknown, hasApiKey: boolean): string | null {
  if (err instanceof BadRequestError) return "the scheduler refuses this worker's lease request: check `queue` and `workerId`";
  if (err instanceof UnauthorizedError)
    return hasApiKey ? 'the scheduler does not know this apiKey' : 'the scheduler needs an admin apiKey';
  if (err instanceof ForbiddenError) return 'use an admin key as apiKey';
  if (err instanceof NotFoundError) return 'the scheduler has no pull queue of this name: check `queue` and its externalQueues entry';
  return null;
}

function checkOptions(o: WorkerOptions): void {
  if (!o || typeof o !== 'object') throw new TypeError('createWorker needs an options object');
  baseUrlsOf(o.url);
  if (typeof o.queue !== 'string' || o.queue.length === 0) throw new TypeError('queue must be a non-empty string');
  if (!o.handlers || typeof o.handlers !== 'object') throw new TypeError('handlers must be an object of task_type → async function');
  for (const [type, fn] of Object.entries(o.handlers))
    if (typeof fn !== 'function') throw new TypeError(`handlers["${type}"] must be a function`);
  // Every leased task would fail for good as `unknown_task_type` (an import that came out empty).
  if (Object.keys(o.handlers).length === 0) throw new TypeError('handlers must name at least one task_type');
  if (o.logger !== undefined) {
    const logger = o.logger as unknown as Record<string, unknown> | null;
    if (!logger || typeof logger !== 'object') throw new TypeError('logger must be an object with info, warn and error functions');
    for (const level of ['info', 'warn', 'error'])
      if (typeof logger[level] !== 'function')
        throw new TypeError(`logger.${level} must be a function (logger: {debug?, info, warn, error})`);
    if (logger.debug !== undefined && typeof logger.debug !== 'function') throw new TypeError('logger.debug must be a function when given');
  }
  const c = o.concurrency ?? 1;
  if (!Number.isInteger(c) || c < 1) throw new RangeError('concurrency must be an integer of at least 1');
  const w = o.pollWaitS ?? DEFAULT_POLL_WAIT_S;
  if (!Number.isInteger(w) || w < 0 || w > MAX_POLL_WAIT_S)
    throw new RangeError(`pollWaitS must be an integer from 0 to ${MAX_POLL_WAIT_S}`);
  if (o.heartbeatIntervalMs !== undefined && !(o.heartbeatIntervalMs > 0)) throw new RangeError('heartbeatIntervalMs must be positive');
}
