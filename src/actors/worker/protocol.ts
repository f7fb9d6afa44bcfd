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
}

/** A finished attempt reported by a worker. */
export interface WorkResult {
  id: string;
  attempt: number;
  outcome: AttemptOutcome;
  /** Handler run time in milliseconds. */
  durationMs: number;
}

/** Messages a worker actor (forked process) accepts from the dispatcher. */
export type WorkerMessages = {
  /** Start these attempts; the dispatcher never sends more than the worker's free credits. */
  run: { req: { tasks: WorkItem[] }; res: void };
  /** Abort a running attempt (cancel): its signal fires with reason `cancelled`. */
  abort: { req: { taskId: string; attempt: number }; res: void };
};

/** Messages a worker sends to its parent, the dispatcher. */
export type WorkerToDispatcher = {
  /** The process is up (first start or respawn) and grants `credits` slots. */
  workerReady: { req: { workerId: string; pid: number; credits: number }; res: void };
  /** Finished attempts; each returns one credit. */
  completed: { req: { workerId: string; pid: number; results: WorkResult[] }; res: void };
};
