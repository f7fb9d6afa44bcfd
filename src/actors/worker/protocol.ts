import type { ErrorBody } from '../../domain/errors';
import { AttemptOutcome } from '../../domain/retry-policy';

/** One attempt sent to a worker process. */
export interface WorkItem {
  id: string;
  attempt: number;
  taskType: string;
  payload: unknown;
  /** Handler time limit in milliseconds. */
  timeoutMs: number;
  idempotencyKey: string | null;
  /** Results of its upstream workflow tasks by workflow-local id (workflow tasks only). */
  upstreamResults?: Record<string, unknown>;
  /** W3C `traceparent` the task was submitted with (absent or null: none). */
  traceparent?: string | null;
  /** The task's tenant and queue: sent only while the service traces (attributes of the attempt span). */
  tenant?: string;
  queue?: string;
  /** The value of the task's last checkpoint, saved by an earlier attempt (absent: none). */
  lastCheckpoint?: unknown;
}

/** The dispatcher's answer to a `checkpoint` request: stored (committed), or the error to reject with. */
export type CheckpointReply = { ok: true; savedAt: number; bytes: number } | { ok: false; error: ErrorBody };

/** One progress report of a running attempt (a value checked by `assertProgress`). */
export interface ProgressItem {
  id: string;
  attempt: number;
  value: unknown;
}

/** A finished attempt reported by a worker. */
export interface WorkResult {
  id: string;
  attempt: number;
  outcome: AttemptOutcome;
  /** Handler run time in milliseconds. */
  durationMs: number;
}

/** What a worker process says about itself. */
export interface WorkerHello {
  workerId: string;
  /** Process id: a new pid means comedy respawned the process and its attempts are lost. */
  pid: number;
  /** Slots this process has (its concurrency). */
  credits: number;
}

/** Messages a worker actor (forked process) accepts from the dispatcher. */
export type WorkerMessages = {
  /** Who are you? Asked after creation and then periodically (supervision ping). */
  hello: { req: null; res: WorkerHello };
  /** Start these attempts; the dispatcher never sends more than the worker's free credits. */
  run: { req: { tasks: WorkItem[] }; res: void };
  /** Abort a running attempt (cancel): its signal fires with reason `cancelled`. */
  abort: { req: { taskId: string; attempt: number }; res: void };
};

/**
 * Messages a worker sends to its parent, the dispatcher. A worker never messages its parent while
 * comedy is still creating it (that would be taken as comedy's own handshake reply), so it only
 * reports work it was given.
 */
export type WorkerToDispatcher = {
  /** The worker's running attempts are alive (every `leaseMs / 3`, and soon after `ctx.heartbeat()`). */
  heartbeat: { req: { workerId: string; pid: number; attempts: Array<{ id: string; attempt: number }> }; res: void };
  /** Finished attempts; each returns one credit. */
  completed: { req: { workerId: string; pid: number; results: WorkResult[] }; res: void };
  /**
   * `ctx.checkpoint(value)` of a running attempt (asked, not told: the handler's promise resolves
   * with the answer, once the checkpoint is committed).
   */
  checkpoint: { req: { workerId: string; pid: number; taskId: string; attempt: number; value: unknown }; res: CheckpointReply };
  /** The latest `ctx.progress(value)` of running attempts, at most one message per `progressIntervalMs`. */
  progress: { req: { workerId: string; pid: number; reports: ProgressItem[] }; res: void };
  /** A promise rejection nothing handled in the worker process (logged there; counted by the dispatcher). */
  unhandledRejection: { req: { workerId: string; pid: number }; res: void };
};
