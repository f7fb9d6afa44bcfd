import { attemptCompletion } from '../../domain/attempt-completion';
import { retryNotBefore } from '../../domain/lost-attempt';
import type { PartitionFences } from '../../cluster/partition-fences';
import type { AttemptCompletion } from '../../storage/store';
import type { FinishedAttempt, RunningAttempt } from './attempt-watchdog';

/** The attempts a dispatcher runs on its worker processes, by task id. */
export type RunningMap = Map<string, RunningAttempt>;

/**
 * The running attempt `attempt` of `taskId`, when this dispatcher runs it (on `workerId`, when
 * given); `undefined` for a report about anything else: an earlier attempt, another worker's.
 */
export function runningAttempt(
  running: ReadonlyMap<string, RunningAttempt>,
  taskId: string,
  attempt: number,
  workerId?: string,
): RunningAttempt | undefined {
  const run = running.get(taskId);
  if (run === undefined || run.task.attempt !== attempt || (workerId !== undefined && run.workerId !== workerId)) return undefined;
  return run;
}

/**
 * Ids of `items` that must not start any more at `now` (epoch ms): their attempt lease (taken at
 * the attempt's `startedAt`, `leaseMs` long) has ended, or (cluster mode, `fences` given) this
 * member lost their partition (a hand-over is no loss: `PartitionFences.mayStart`). Items this
 * dispatcher does not run are not named.
 */
export function lateAttempts(
  running: ReadonlyMap<string, RunningAttempt>,
  items: ReadonlyArray<{ id: string; attempt: number }>,
  now: number,
  leaseMs: number,
  fences: PartitionFences | undefined,
): Set<string> {
  const late = new Set<string>();
  for (const i of items) {
    const run = runningAttempt(running, i.id, i.attempt);
    if (run === undefined) continue;
    if (now >= run.task.startedAt + leaseMs || (fences && !fences.mayStart(run.task.partition))) late.add(i.id);
  }
  return late;
}

/** What {@link takeFinished} calls back for each attempt it takes or refuses. */
export interface FinishedHooks {
  /** The attempt held a slot of its concurrency key: free it. */
  releaseKey(run: RunningAttempt, now: number): void;
  /** A report for an attempt not running here (late, duplicated, another worker's): counted. */
  stale(): void;
  /** The duration of a finished attempt, in ms. */
  observe(durationMs: number): void;
}

/**
 * Takes finished attempts out of `running` and turns each into the completion to store, the
 * retry policy deciding its next state (`attemptCompletion`, at `now`, epoch ms). A result for an
 * attempt not running here (on `fromWorker`, when given) is refused and only counted: a late or
 * duplicated report, e.g. attempt 1's after attempt 2 started.
 */
export function takeFinished(
  running: RunningMap,
  results: readonly FinishedAttempt[],
  now: number,
  hooks: FinishedHooks,
  fromWorker?: string,
): AttemptCompletion[] {
  const completions: AttemptCompletion[] = [];
  for (const r of results) {
    const run = runningAttempt(running, r.id, r.attempt, fromWorker);
    if (run === undefined) {
      hooks.stale();
      continue;
    }
    running.delete(r.id);
    if (run.concurrencyKey !== undefined) hooks.releaseKey(run, now);
    const c = attemptCompletion(r.id, r.attempt, r.outcome, run.task.retry, now, Math.round(r.durationMs));
    if (run.task.seq !== undefined) c.seq = run.task.seq; // the row's lookup hint, from its claim
    if (run.task.workflowId !== undefined) c.workflowId = run.task.workflowId; // fixed at creation, from its claim
    if (run.claimedAhead) c.startedAt = run.task.startedAt; // the row has no start: it is the instant it was sent
    if (r.retryNotBefore !== undefined) retryNotBefore(c, r.retryNotBefore);
    completions.push(c);
    hooks.observe(r.durationMs);
  }
  return completions;
}
