/**
 * The ports of the services: how the application services reach the running actors. The actors'
 * side implements them (`actors/gateway.ts`); the services know only these interfaces, so they
 * run without actors in route tests (a no-op gateway) and never import an actor file.
 */
import type { AttemptOutcome } from '../domain/retry-policy';
import type { ClaimedTask, DueEntry, RetrySettings, TaskState } from '../domain/task';

/** How the service reaches the actors: new waiting tasks to their owners, aborts to workers. */
export interface SchedulingGateway {
  tasksStored(entries: DueEntry[]): void;
  abortRunning(taskId: string, attempt: number): void;
  /** These tasks reached a terminal state outside the dispatcher (a cancel before they ran). */
  tasksEnded(taskIds: string[]): void;
}

/** How cron edits reach the evaluator (so a new or changed definition fires without waiting). */
export interface CronGateway {
  cronChanged(cronId: string): void;
}

/** A consumer's report on an external attempt, as the service hands it to the dispatcher. */
export interface ExternalCompletion {
  taskId: string;
  attempt: number;
  outcome: AttemptOutcome;
  /** The task's retry settings (decide RETRYING/DEAD as for a worker's report). */
  retry: RetrySettings;
  /** When the attempt started (epoch ms), for its duration; null when unknown. */
  startedAt: number | null;
}

/** What an {@link ExternalCompletion} did: `applied` false when the compare-and-set failed. */
export interface ExternalCompletionResult {
  applied: boolean;
  state: TaskState | null;
}

/** A pull worker's lease request, as the service hands it to the dispatcher. */
export interface LeaseRequest {
  /** Names this request (to drop it when its client goes away: {@link ExternalGateway.leaveLease}). */
  waiterId: string;
  /** A pull queue (`externalQueues` with `transport: "http"`). */
  queue: string;
  /** The worker's own id (its attempts carry `worker_id` `http:<workerId>`). */
  workerId: string;
  /** Most attempts to hand out (1–100). */
  max: number;
  /** How long to wait for one (ms; 0: answer at once). */
  waitMs: number;
}

/** An attempt claimed for a lease request. */
export interface LeasedAttempt {
  task: ClaimedTask;
  queue: string;
  /** Its lease expiry (epoch ms): without a heartbeat or completion by then, it runs again. */
  leaseExpiresAt: number;
  /** The trace context the worker's spans join (the hand-off span's while tracing, else the stored one), or null. */
  traceparent: string | null;
}

/** How the service reaches the dispatcher, which owns the external queues' attempts. */
export interface ExternalGateway {
  complete(c: ExternalCompletion): Promise<ExternalCompletionResult>;
  /** Resolves with the attempts claimed for the request, or `[]` at its wait's end or at shutdown. */
  lease(req: LeaseRequest): Promise<LeasedAttempt[]>;
  /** The client of a lease request went away: it is dropped (what a claim in flight got is retried free). */
  leaveLease(waiterId: string): void;
  /**
   * The answer with these leased attempts never reached its client (the connection closed before it
   * was written out): they are retried at once, free (`lease_undelivered`), unless already ended.
   */
  leaseUndelivered(attempts: Array<{ taskId: string; attempt: number }>): void;
}

/**
 * Tasks (and workflows) this node saw reach a terminal state: `taskIds` SUCCEEDED, FAILED, DEAD or
 * CANCELLED; `workflowIds` whose status may have become terminal (a workflow cancel).
 */
export interface TaskEnds {
  taskIds: string[];
  workflowIds?: string[];
  /** Announced by another node (cluster mode, through Redis): delivered here, not sent on again. */
  fromPeer?: boolean;
}

/**
 * Where this node announces ends as it records them: the dispatcher's completions (workers,
 * external consumers, lost leases), cancels of waiting tasks, workflow cancels. A signal, not the
 * truth: a listener re-reads the store. Must not throw nor block the caller.
 */
export interface TaskEndPublisher {
  publish(ends: TaskEnds): void;
}

/** Where the `?wait=` waiters listen for {@link TaskEnds}. @returns a function that unsubscribes */
export interface TaskEndSubscriber {
  subscribe(listener: (ends: TaskEnds) => void): () => void;
}
