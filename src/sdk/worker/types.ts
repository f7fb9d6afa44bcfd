/**
 * The shapes of `createWorker` (`actor-task-scheduler/worker`): its options, the context a handler
 * receives, the tasks the lease endpoint hands out, and the clock and logger it can be given.
 * Nothing here loads the scheduler: an application imports only `src/sdk/`.
 */
import type { TlsFiles } from '../transport';

/** A JSON value as the API carries it. */
export type JsonValue = unknown;

/**
 * One task as `POST /api/v1/queues/{queue}/lease` hands it out (docs/API.md): an attempt of it,
 * leased to this worker until `lease_expires_at`.
 */
export interface LeasedTask {
  task_id: string;
  task_type: string;
  queue: string;
  tenant_id: string;
  payload: JsonValue;
  /** 1-based attempt number: the fencing token every report names. */
  attempt: number;
  /** ISO-8601 UTC instant the lease runs out (without a heartbeat or a completion). */
  lease_expires_at: string;
  /** The attempt's time limit in ms, counted from when the worker received it. */
  timeout_ms: number;
  idempotency_key: string | null;
  /** The last checkpoint an earlier attempt saved, or null. */
  checkpoint: JsonValue | null;
  /** The W3C `traceparent` the task was submitted with, or null. */
  traceparent: string | null;
  /** Workflow tasks only: the results of their direct upstream tasks by workflow-local id. */
  upstream_results?: Record<string, JsonValue>;
}

/** Time source of a worker: wall-clock milliseconds and one-shot timers (the scheduler's `Clock` fits). */
export interface WorkerClock {
  now(): number;
  setTimeout(fn: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** A local logger in the style of `console`: `(message, fields?)`. Pino: wrap as `(m, f) => pino.info(f ?? {}, m)`. */
export interface WorkerLogger {
  debug?(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** The levels of `ctx.log` lines. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * `ctx.log`: callable as `ctx.log(message, fields?)` (an info line, as for the scheduler's own
 * handlers) and by level. Each line goes to the worker's local logger and is kept with the attempt
 * (sent in batches to `POST /api/v1/tasks/{id}/logs`; read with GET /api/v1/tasks/{id}/attempts/{n}/logs).
 */
export interface AttemptLog {
  (message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A progress report: a fraction from 0 to 1, or `{done?, total?, message?}`. */
export type ProgressValue = number | { done?: number; total?: number; message?: string };

/** What a handler receives besides its payload: the same names as the scheduler's own handlers' context. */
export interface WorkerContext {
  taskId: string;
  taskType: string;
  queue: string;
  tenantId: string;
  /** 1-based number of this attempt. */
  attempt: number;
  idempotencyKey: string | null;
  /** The `traceparent` the task was submitted with (null without one): pass it on to continue the trace. */
  traceparent: string | null;
  /**
   * Aborted when the attempt must stop; `signal.reason` says why: `TaskCancelledError` (a report was
   * refused with 409: the task was cancelled, or the attempt's lease ran out and it runs again
   * elsewhere), `TaskTimeoutError` (the task's `timeout_ms`), `WorkerClosedError` (`close()`'s
   * `timeoutMs` passed).
   */
  signal: AbortSignal;
  /** Extends the attempt's lease now (the worker also does so every third of the lease while the handler runs). */
  heartbeat(): Promise<void>;
  log: AttemptLog;
  /** Results of the task's direct upstream workflow tasks, by their workflow-local ids; empty outside workflows. */
  upstreamResults: Record<string, JsonValue>;
  /** The value the last checkpoint of an earlier attempt saved, or null: where this attempt resumes. */
  lastCheckpoint: JsonValue | null;
  /**
   * Saves a small JSON value (at most 64 KiB as JSON text; null clears it) for the next attempt.
   * Resolves once stored; rejects with the API's error (`ApiError`, `code` `ATTEMPT_CONFLICT`,
   * `CHECKPOINT_TOO_LARGE`, `VALIDATION_FAILED`) or a `ConnectionError`.
   */
  checkpoint(value: JsonValue): Promise<void>;
  /**
   * Reports progress (shown by GET /api/v1/tasks/{id}). Not durable: the latest value of the attempt
   * is sent at most once a second. @throws TypeError for a value that is neither a number in [0, 1] nor an object
   */
  progress(value: ProgressValue): void;
}

/**
 * A handler: `async (payload, ctx) => result`; the result must be JSON-serialisable. A handler may
 * annotate its payload's type (`async (payload: { url: string }, ctx) => …`): it is checked like a
 * method's parameter (bivariantly), as a shape the handler expects of the JSON it is given, so
 * nothing checks it at run time; validate what you cannot trust.
 */
export type WorkerHandler = {
  // The method form makes the payload parameter bivariant, so a handler may declare a narrower payload type.
  handle(payload: JsonValue, ctx: WorkerContext): Promise<unknown> | unknown;
}['handle'];

/**
 * Options of {@link createWorker}. Durations in ms unless the name says `S` (seconds). An option
 * given as `undefined` is the same as one left out.
 */
export interface WorkerOptions {
  /**
   * Base URL of the scheduler, e.g. `http://127.0.0.1:8080`; or several, the members of a cluster:
   * the worker talks to one at a time and turns to the next after a connection error or a 503
   * (any member serves a worker the tasks of every partition: docs/CLUSTER.md "Pull queues").
   */
  url: string | readonly string[];
  /** Bearer key when the API has keys: an admin key (leasing takes every tenant's tasks of the queue; a tenant key is refused, 403). */
  apiKey?: string | undefined;
  /** PEM files for an https URL. */
  tls?: TlsFiles | undefined;
  /** The queue to pull from: configured on the scheduler as an `externalQueues` entry with `transport: "http"`. */
  queue: string;
  /** Most attempts running at once in this worker (default 1). */
  concurrency?: number | undefined;
  /** task_type → handler. A task of any other type fails permanently (`unknown_task_type`). */
  handlers: Record<string, WorkerHandler>;
  /** Sent with every lease (default `<host>-<pid>-<random>`): shown as the tasks' `worker_id`. */
  workerId?: string | undefined;
  /** Seconds a lease request waits for due tasks before answering empty (0–30, default 20). */
  pollWaitS?: number | undefined;
  /** Local log of the worker and of `ctx.log` lines (default: warnings and errors to `console`). */
  logger?: WorkerLogger;
  /** Time source (default the system clock); tests pass a manual clock. */
  clock?: WorkerClock;
  /** Interval of automatic heartbeats (default a third of the lease the scheduler granted). */
  heartbeatIntervalMs?: number | undefined;
}

/** Options of `close()`. */
export interface CloseOptions {
  /**
   * How long to wait for running handlers (default: as long as they take). When it passes their
   * signals abort (`WorkerClosedError`) and their attempts are reported failed (retried).
   */
  timeoutMs?: number;
}
