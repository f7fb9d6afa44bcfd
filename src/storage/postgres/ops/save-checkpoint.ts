/**
 * saveCheckpoint — inputs: taskId, attempt, checkpoint JSON text (null clears it; the store
 * checked it against MAX_CHECKPOINT_BYTES before the write), now (epoch ms).
 * Sets checkpoint, checkpoint_attempt = attempt, checkpoint_at = now as a compare-and-set on
 * (id, attempts = attempt, state RUNNING: GUARDS.attempt). Output: saved (with now and the text's
 * size in UTF-8 bytes), or the task's state and attempt when the compare-and-set failed (a stale
 * attempt's checkpoint is refused), or not_found.
 * Guarantee: the compare-and-set is one UPDATE in the write queue's transaction (a concurrent
 * writer of the row is waited for and the condition re-checked on its version); the caller is
 * answered after the commit, so a `saved` checkpoint survives a crash and the claim of the next
 * attempt reads it. The state of a refusal is read after it, in the same transaction.
 */
import { atMs } from '../epoch-ms';
import type { Db } from '../db';
import type { TaskState } from '../../../domain/task';
import type { CheckpointSaveResult } from '../../checkpoint-store';
import { GUARDS } from '../../../domain/state-machine';
import { sqlStates } from '../../sql/state-sql';

export async function saveCheckpoint(
  db: Db,
  taskId: string,
  attempt: number,
  text: string | null,
  now: number,
): Promise<CheckpointSaveResult> {
  const at = atMs(now);
  const saved = await db.query(
    `UPDATE tasks SET checkpoint = $1, checkpoint_attempt = $2, checkpoint_at = $3
     WHERE id = $4 AND attempts = $2 AND ${sqlStates(GUARDS.attempt)}`,
    [text, attempt, at, taskId],
  );
  if (saved.rowCount === 1) return { kind: 'saved', savedAt: at, bytes: text === null ? 0 : Buffer.byteLength(text, 'utf8') };
  const { rows } = await db.query<{ state: TaskState; attempts: number }>(`SELECT state, attempts FROM tasks WHERE id = $1`, [taskId]);
  return rows.length === 1 ? { kind: 'conflict', state: rows[0].state, attempt: rows[0].attempts } : { kind: 'not_found' };
}
