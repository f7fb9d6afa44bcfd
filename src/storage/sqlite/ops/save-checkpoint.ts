/**
 * saveCheckpoint — inputs: taskId, attempt, checkpoint JSON text (null clears it; the adapter
 * checked it against MAX_CHECKPOINT_BYTES before the write), now.
 * Sets checkpoint, checkpoint_attempt = attempt, checkpoint_at = now as a compare-and-set on
 * (id, attempts = attempt, state = RUNNING). Output: saved (with now and the text's size), or the
 * task's state and attempt when the compare-and-set failed (a stale attempt's checkpoint is
 * refused), or not_found.
 * Guarantee: inside the writer's one transaction; the caller is answered after the commit, so a
 * `saved` checkpoint survives a crash and the claim of the next attempt reads it.
 */
import type Database from 'better-sqlite3';
import type { TaskState } from '../../../domain/task';
import type { CheckpointSaveResult } from '../../checkpoint-store';
import { GUARDS } from '../../../domain/state-machine';
import { sqlStates } from '../../sql/state-sql';

export function prepareSaveCheckpoint(
  db: Database.Database,
): (taskId: string, attempt: number, text: string | null, now: number) => CheckpointSaveResult {
  const save = db.prepare(
    `UPDATE tasks SET checkpoint = ?, checkpoint_attempt = ?, checkpoint_at = ? WHERE id = ? AND attempts = ? AND ${sqlStates(GUARDS.attempt)}`,
  );
  const current = db.prepare(`SELECT state, attempts FROM tasks WHERE id = ?`);
  return (taskId, attempt, text, now) => {
    if (save.run(text, attempt, now, taskId, attempt).changes === 1) {
      return { kind: 'saved', savedAt: now, bytes: text === null ? 0 : Buffer.byteLength(text, 'utf8') };
    }
    const row = current.get(taskId) as { state: TaskState; attempts: number } | undefined;
    return row ? { kind: 'conflict', state: row.state, attempt: row.attempts } : { kind: 'not_found' };
  };
}
