/**
 * `actor-task-scheduler/worker`: run the scheduler's tasks in the application's own process.
 *
 *   import { createWorker, PermanentError } from 'actor-task-scheduler/worker';
 *   const worker = createWorker({ url, queue: 'images', concurrency: 8, handlers: { resize: async (payload, ctx) => … } });
 *   await worker.start();
 *   process.on('SIGTERM', () => worker.close({ timeoutMs: 30_000 }));
 *
 * The queue is configured on the scheduler as an HTTP pull queue (`externalQueues`, `transport:
 * "http"`). docs/WORKERS.md describes the context, the graceful close and the delivery guarantee.
 */
import { Worker } from './worker';
import type { WorkerOptions } from './types';

/**
 * A pull worker for `options.queue`, not yet polling: call `start()`. @throws TypeError or
 * RangeError for options out of bounds (no URL, no queue, a handler that is not a function,
 * `concurrency` < 1, `pollWaitS` outside 0–30)
 */
export function createWorker(options: WorkerOptions): Worker {
  return new Worker(options);
}

export { Worker, DEFAULT_POLL_WAIT_S } from './worker';
export type { WorkerEventMap } from './worker';
export { PermanentError } from '../permanent-error';
export { TaskCancelledError, TaskTimeoutError, WorkerClosedError } from './abort-reasons';
export { ApiError, ConnectionError } from '../transport';
export type { TlsFiles } from '../transport';
export type { CompletionError } from './worker-api';
export type {
  AttemptLog,
  CloseOptions,
  JsonValue,
  LeasedTask,
  LogLevel,
  ProgressValue,
  WorkerClock,
  WorkerContext,
  WorkerHandler,
  WorkerLogger,
  WorkerOptions,
} from './types';
