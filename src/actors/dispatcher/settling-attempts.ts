import type { AttemptOutcome } from '../../domain/retry-policy';
import type { WorkResult } from '../protocol';
import type { FinishedAttempt, RunningAttempt } from './attempt-watchdog';

/** Key of an attempt: `id#attempt`. */
const keyOf = (id: string, attempt: number) => `${id}#${attempt}`;

/**
 * Outcomes of aborted attempts whose handlers still run: a worker's report marked
 * `handlerRunning` (a timeout or a cancel fired the handler's signal and the handler has not
 * returned yet). Such an attempt stays in the dispatcher's running map, keeping its worker slot,
 * its concurrency-key slot and its lease (the worker's liveness beats extend it), until the worker
 * says `settled` or its process is gone (killed by the AttemptWatchdog `timeoutGraceMs` after the
 * abort, crashed, or killed at the end of a stop's grace): only then is the reported outcome
 * recorded. So nothing that follows the attempt (its retry, the next instance of a
 * `cancel_running` cron, a task waiting on the same concurrency key) starts while its handler is
 * still at work; the wait is bounded by `timeoutGraceMs`. Temporal's activity cancellation type
 * `WAIT_CANCELLATION_COMPLETED` likewise waits for the activity to acknowledge the cancel.
 */
export class SettlingAttempts {
  private readonly held = new Map<string, FinishedAttempt>();

  /** Attempts held now. */
  get size(): number {
    return this.held.size;
  }

  /**
   * Splits a worker's report: the results marked `handlerRunning` for an attempt that `running`
   * holds on that worker are held here; every other result is returned, to be recorded now (a
   * report about an attempt not running here is the recorder's to refuse as stale).
   */
  hold(running: ReadonlyMap<string, RunningAttempt>, workerId: string, results: readonly WorkResult[]): WorkResult[] {
    let now: WorkResult[] | null = null;
    for (let i = 0; i < results.length; i++) {
      const r = results[i];
      const run = r.handlerRunning ? running.get(r.id) : undefined;
      if (run && run.task.attempt === r.attempt && run.workerId === workerId) {
        now ??= results.slice(0, i);
        this.held.set(keyOf(r.id, r.attempt), { id: r.id, attempt: r.attempt, outcome: r.outcome, durationMs: r.durationMs });
      } else now?.push(r);
    }
    return now ?? (results as WorkResult[]);
  }

  /** The held results of these attempts, whose handlers settled (they are held no more). */
  take(attempts: ReadonlyArray<{ id: string; attempt: number }>): FinishedAttempt[] {
    const out: FinishedAttempt[] = [];
    for (const a of attempts) {
      const key = keyOf(a.id, a.attempt);
      const r = this.held.get(key);
      if (r === undefined) continue;
      this.held.delete(key);
      out.push(r);
    }
    return out;
  }

  /** The outcome reported for a held attempt (which its end then records, whatever ended it), or undefined. */
  outcomeOf(id: string, attempt: number): AttemptOutcome | undefined {
    return this.held.get(keyOf(id, attempt))?.outcome;
  }

  /** These attempts are being recorded (by any path): none of them is held any more. */
  forget(results: ReadonlyArray<{ id: string; attempt: number }>): void {
    if (this.held.size === 0) return;
    for (const r of results) this.held.delete(keyOf(r.id, r.attempt));
  }
}
