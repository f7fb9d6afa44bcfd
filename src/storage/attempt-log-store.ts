import type { AttemptLog, AttemptLogAppend } from '../domain/attempt-log';

/**
 * The attempt log part of the Store contract (store.ts; domain/attempt-log.ts for the lines and
 * their bounds): the `ctx.log` lines of each attempt, kept per (task, attempt). Advisory like
 * progress (a worker sends them at most once a second, so the last second's may be lost with its
 * process), and deleted with their task (retention, dead-letter delete).
 */
export interface AttemptLogStore {
  /**
   * Appends each item's lines to its attempt's log (a line number already stored is kept as it
   * is, so a repeated item changes nothing) and deletes that attempt's lines numbered below
   * `keepFrom` (the bounds). Items of one attempt are applied in input order.
   * @returns how many lines were added
   */
  appendAttemptLogs(logs: AttemptLogAppend[], now: number): Promise<number>;

  /** The kept lines of one attempt, oldest first (none: empty, `droppedLines` 0). */
  getAttemptLog(taskId: string, attempt: number): Promise<AttemptLog>;
}
