/**
 * saveCheckpoint — inputs: taskId, attempt, checkpoint JSON text (null clears it; the adapter
 * checked it against MAX_CHECKPOINT_BYTES before the write), now.
 * One `updateOne` whose filter `{_id, attempts: attempt, state: 'RUNNING'}` is the compare-and-set,
 * setting checkpoint, checkpoint_attempt and checkpoint_at. Output: saved, or (the filter matched
 * nothing) the task's state and attempt as a read finds them next (a stale attempt's checkpoint is
 * refused), or not_found.
 * Guarantee: a single-document update acknowledged with {w: majority, j: true}: a `saved`
 * checkpoint is durable, and the claim of the next attempt (a findOneAndUpdate returning the whole
 * document) reads it. An attempt's own checkpoint write cannot race its claim: the attempt number
 * it names exists only once that claim is applied.
 */
import type { TaskState } from '../../../domain/task';
import type { CheckpointSaveResult } from '../../checkpoint-store';
import type { MongoCollections } from '../collections';
import { GUARDS } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export async function saveCheckpoint(
  c: MongoCollections,
  taskId: string,
  attempt: number,
  text: string | null,
  now: number,
): Promise<CheckpointSaveResult> {
  const res = await c.tasks.updateOne(
    { _id: taskId, attempts: attempt, state: inStates(GUARDS.attempt) },
    { $set: { checkpoint: text, checkpoint_attempt: attempt, checkpoint_at: now } },
  );
  if (res.matchedCount === 1) return { kind: 'saved', savedAt: now, bytes: text === null ? 0 : Buffer.byteLength(text, 'utf8') };
  const doc = await c.tasks.findOne({ _id: taskId }, { projection: { state: 1, attempts: 1 } });
  return doc ? { kind: 'conflict', state: doc.state as TaskState, attempt: doc.attempts } : { kind: 'not_found' };
}
