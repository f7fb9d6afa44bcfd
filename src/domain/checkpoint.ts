/**
 * Checkpoints of long tasks: the specification's third defence against a worker that dies in the
 * middle of an attempt ("save progress every N records; on retry, resume from the last
 * checkpoint"). A handler saves a small JSON value with `ctx.checkpoint(value)`; it is stored with
 * the task, fenced by attempt (only the task's current RUNNING attempt may save), and the next
 * attempt reads the last one saved as `ctx.lastCheckpoint`. Pure rules here; the stores apply them.
 */
import { CheckpointTooLargeError, ValidationError } from './errors';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from './json-depth';

/**
 * Largest checkpoint, as UTF-8 JSON text: 64 KiB. A checkpoint is a position to resume from (an
 * offset, a cursor, a few counters), written with the task row on every save, so it is kept small;
 * the task's data belongs in its payload or in the handler's own storage.
 */
export const MAX_CHECKPOINT_BYTES = 65_536;

/** The last checkpoint a task has, as a store reads it back. */
export interface CheckpointRecord {
  /** The saved JSON value. */
  value: unknown;
  /** The attempt that saved it. */
  attempt: number;
  /** When it was saved (epoch ms, the store's `now`). */
  savedAt: number;
  /** Its size as UTF-8 JSON text. */
  bytes: number;
}

/**
 * The JSON text a checkpoint is stored as, checked against {@link MAX_CHECKPOINT_BYTES}. `null`
 * clears the task's checkpoint (the next attempt starts from the beginning): the answer is then null.
 * @throws ValidationError (`field` checkpoint) for a value JSON cannot represent (undefined, a
 *   function, a bigint, a cycle) or nested deeper than {@link MAX_JSON_DEPTH} levels (as a
 *   payload); CheckpointTooLargeError over the cap
 */
export function checkpointText(value: unknown): string | null {
  if (value === null) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new ValidationError('checkpoint', `is not JSON-serialisable: ${(err as Error).message}`);
  }
  if (text === undefined) throw new ValidationError('checkpoint', 'is not a JSON value (undefined or a function); use null to clear it');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CHECKPOINT_BYTES) throw new CheckpointTooLargeError(MAX_CHECKPOINT_BYTES, bytes);
  // Walked on the parsed copy (a tree no larger than the text): the next attempt's run message carries it.
  if (exceedsJsonDepth(JSON.parse(text))) throw new ValidationError('checkpoint', `nests deeper than ${MAX_JSON_DEPTH} levels`);
  return text;
}
