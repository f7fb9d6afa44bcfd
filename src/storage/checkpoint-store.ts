import type { ProgressReport } from '../domain/progress';
import type { TaskState } from '../domain/task';

/** Result of {@link CheckpointStore.saveCheckpoint}. */
export type CheckpointSaveResult =
  /** Stored (committed): `bytes` of JSON text, or 0 when the value was null (checkpoint cleared). */
  | { kind: 'saved'; savedAt: number; bytes: number }
  /** The attempt is not the task's current RUNNING attempt: nothing changed. What the task is now. */
  | { kind: 'conflict'; state: TaskState; attempt: number }
  | { kind: 'not_found' };

/**
 * The checkpoint and progress part of the Store contract (store.ts; domain/checkpoint.ts and
 * domain/progress.ts for the values). A task's checkpoint and progress live with the task and
 * are deleted with it (retention, dead-letter delete); a dead-letter replay keeps them, so the
 * replayed task resumes from its last checkpoint.
 */
export interface CheckpointStore {
  /**
   * Saves `value` as the task's checkpoint, replacing the previous one; null clears it. Fenced by
   * attempt: a compare-and-set on (id, attempt, RUNNING), so an attempt that is no longer current
   * (its worker was lost and the task retried, it timed out, it was cancelled) cannot overwrite
   * what a newer attempt saved. The claim of the task's next attempt returns the value
   * (`ClaimedTask.lastCheckpoint`). Resolves only once the write is durable.
   * @throws ValidationError (value not JSON) or CheckpointTooLargeError (over
   *   `MAX_CHECKPOINT_BYTES`) before anything is written
   */
  saveCheckpoint(taskId: string, attempt: number, value: unknown, now: number): Promise<CheckpointSaveResult>;

  /**
   * Records progress reports, each a compare-and-set on (id, attempt, RUNNING): a report of an
   * attempt that is no longer running changes nothing. Later items of the same task win.
   * @returns how many reports were written
   * @throws ValidationError (`progress`) when a value is not a progress value; nothing is written
   */
  reportProgress(reports: ProgressReport[], now: number): Promise<number>;
}
