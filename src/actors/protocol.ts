/**
 * The message protocol of every actor: each actor's public API as a message map (Akka: "messages
 * are the public API"), the topic naming its request and response types. The forked workers, the
 * dispatcher, the partition owners, the cron actor and the supervisor; actors and their callers
 * import these types from here, never from each other's implementation files.
 */
import type { ErrorBody } from '../contract/error-catalog';
import { AttemptOutcome } from '../domain/retry-policy';
import type { DueEntry } from '../domain/task';
import type { AttemptLogAppend } from '../domain/attempt-log';
import type { ExternalCompletion, ExternalCompletionResult, LeasedAttempt, LeaseRequest } from '../services/ports';
import type { PullGrant } from '../cluster/messages';

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
  /**
   * Reported at its abort (cancel or timeout) while the handler still runs: the worker tells
   * `settled` once it stops; the dispatcher kills the process if it has not after `timeoutGraceMs`.
   */
  handlerRunning?: true;
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
  /**
   * Start these attempts; the dispatcher never sends more than the worker's free credits. `pid` is
   * the process the dispatcher meant (from its last `hello`): a process with another pid (comedy
   * respawned the worker in between) starts none of them, since the dispatcher counts them lost
   * once it sees the new pid and runs them again.
   */
  run: { req: { tasks: WorkItem[]; pid: number }; res: void };
  /** Abort a running attempt (cancel): its signal fires with reason `cancelled`. */
  abort: { req: { taskId: string; attempt: number }; res: void };
};

/**
 * Messages a worker sends to its parent, the dispatcher. A worker never messages its parent while
 * comedy is still creating it (that would be taken as comedy's own handshake reply), so it only
 * reports work it was given.
 */
export type WorkerToDispatcher = {
  /** The worker's running attempts are alive (soon after `ctx.heartbeat()`; the process's liveness beats come from its liveness thread). */
  heartbeat: { req: { workerId: string; pid: number; attempts: Array<{ id: string; attempt: number }> }; res: void };
  /** Finished attempts; each returns one credit. */
  completed: { req: { workerId: string; pid: number; results: WorkResult[] }; res: void };
  /** Handlers of attempts reported `handlerRunning` have stopped after all (settled after their abort). */
  settled: { req: { workerId: string; pid: number; attempts: Array<{ id: string; attempt: number }> }; res: void };
  /**
   * `ctx.checkpoint(value)` of a running attempt (asked, not told: the handler's promise resolves
   * with the answer, once the checkpoint is committed).
   */
  checkpoint: { req: { workerId: string; pid: number; taskId: string; attempt: number; value: unknown }; res: CheckpointReply };
  /** The latest `ctx.progress(value)` of running attempts, at most one message per `progressIntervalMs`. */
  progress: { req: { workerId: string; pid: number; reports: ProgressItem[] }; res: void };
  /** New `ctx.log` lines of running attempts (bounded per attempt), at most one message per `progressIntervalMs`. */
  logs: { req: { workerId: string; pid: number; logs: AttemptLogAppend[] }; res: void };
  /** A promise rejection nothing handled in the worker process (logged there; counted by the dispatcher). */
  unhandledRejection: { req: { workerId: string; pid: number }; res: void };
};

/** Messages the dispatcher accepts (besides the worker messages in {@link WorkerToDispatcher}). */
export type DispatcherMessages = WorkerToDispatcher & {
  /** Forks the worker processes and waits until each has said hello. */
  startWorkers: { req: null; res: void };
  /** Due tasks handed over by a partition owner (PENDING, or due SCHEDULED/RETRYING: claimed directly, or marked PENDING if still held after `dueMarkDelayMs`). */
  enqueue: { req: DueEntry[]; res: void };
  /** Abort a running attempt (cancel of a RUNNING task). */
  abort: { req: { taskId: string; attempt: number }; res: void };
  /** Stop dispatching; resolve when nothing runs or after `graceMs`. */
  drain: { req: { graceMs: number }; res: { stillRunning: number; unwritten: number } };
  stats: {
    req: null;
    res: {
      ready: number;
      running: number;
      /** Per worker process; `unanswered`: its last ping went unanswered (its loop held), it takes no new attempt. */
      workers: Array<{ id: string; pid: number; credits: number; pool: string; unanswered: boolean }>;
      /** Per external queue: ready tasks, attempts out, and (pull queues) lease requests waiting, other cluster members' demands served here included. */
      external: Array<{ queue: string; ready: number; inFlight: number; waiting: number }>;
    };
  };
  /** A consumer's report on an attempt of an external queue (REST `POST /api/v1/tasks/{id}/complete`). */
  completeExternal: { req: ExternalCompletion; res: ExternalCompletionResult };
  /** A pull worker's lease request (REST `POST /api/v1/queues/{queue}/lease`): answered with what was claimed for it, or `[]`. */
  lease: { req: LeaseRequest; res: LeasedAttempt[] };
  /** The client of a lease request went away (by its `waiterId`). */
  leaveLease: { req: string; res: void };
  /** Attempts whose lease answer never reached its client (its connection closed first): retried free. */
  leaseUndelivered: { req: Array<{ taskId: string; attempt: number }>; res: void };
  /** Another node's pull traffic: a lease request's demand to serve, its withdrawal, or tasks granted to a lease request here. */
  remotePull: { req: RemotePull; res: void };
};

/** A lease request's demand as other nodes see it (`pull` message), or as this node serves another's. */
export interface RemotePullDemand {
  waiterId: string;
  queue: string;
  /** Most tasks it takes. */
  max: number;
  /** How long it waits (ms). */
  waitMs: number;
}

/** What reaches the dispatcher of other nodes' pull traffic: a demand to serve, a demand dropped, tasks granted here. */
export type RemotePull =
  | { kind: 'demand'; from: string; demand: RemotePullDemand }
  | { kind: 'withdraw'; from: string; waiterId: string }
  | { kind: 'granted'; from: string; waiterId: string; queue: string; grants: PullGrant[] };

/** Messages a partition owner accepts. */
export type PartitionOwnerMessages = {
  /** Reads the first window from the store and starts the timer. */
  start: { req: null; res: void };
  /** New (or retried) waiting tasks of this partition; those due inside the window join it. */
  offer: { req: DueEntry[]; res: void };
  /** The dispatcher is done with these ids (claimed or dropped). */
  released: { req: string[]; res: void };
  /** Stops handing out tasks and cancels the timer. */
  stop: { req: null; res: void };
  /** Window size and outstanding count (tests, diagnostics). */
  stats: { req: null; res: { partition: number; windowSize: number; outstanding: number; windowEnd: number } };
};

/** Messages the cron actor accepts. */
export type CronActorMessages = {
  /** Loads the due definitions and starts firing. */
  start: { req: null; res: void };
  /** A definition was created, edited or deleted (by its id). */
  changed: { req: string; res: void };
  /** These tasks reached a terminal state (cron instances among them may release queued ones). */
  instancesEnded: { req: string[]; res: void };
  /** Stops firing. */
  stop: { req: null; res: void };
  /** Definitions in the evaluator's window (diagnostics). */
  stats: { req: null; res: { windowSize: number } };
};

/** Messages the supervisor accepts. */
export type SupervisorMessages = {
  /** Starts the dispatcher, its worker processes, and one owner per partition. */
  start: { req: null; res: void };
  /** Stops owners from handing out tasks and waits (≤ graceMs) for running attempts. */
  drain: { req: { graceMs: number }; res: { stillRunning: number; unwritten: number } };
};
