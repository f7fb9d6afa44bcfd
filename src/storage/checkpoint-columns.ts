/**
 * The stored form of a task's checkpoint and progress, the same in both adapters (SQLite columns,
 * MongoDB document fields): `checkpoint` (JSON text), `checkpoint_attempt`, `checkpoint_at`,
 * `progress` (JSON text), `progress_attempt`, `progress_at`. Absent or null: none.
 */
import type { CheckpointRecord } from '../domain/checkpoint';
import type { ProgressRecord, ProgressValue } from '../domain/progress';

/** The checkpoint and progress fields of a stored task. */
export interface CheckpointColumns {
  checkpoint?: string | null;
  checkpoint_attempt?: number | null;
  checkpoint_at?: number | null;
  progress?: string | null;
  progress_attempt?: number | null;
  progress_at?: number | null;
}

/** `{checkpoint}` for a task record when the task has one, else `{}` (the record leaves it out). */
export function checkpointOf(r: CheckpointColumns): { checkpoint?: CheckpointRecord } {
  if (r.checkpoint === null || r.checkpoint === undefined) return {};
  return {
    checkpoint: {
      value: JSON.parse(r.checkpoint) as unknown,
      attempt: r.checkpoint_attempt ?? 0,
      savedAt: r.checkpoint_at ?? 0,
      bytes: Buffer.byteLength(r.checkpoint, 'utf8'),
    },
  };
}

/** `{progress}` for a task record when an attempt reported some, else `{}`. */
export function progressOf(r: CheckpointColumns): { progress?: ProgressRecord } {
  if (r.progress === null || r.progress === undefined) return {};
  return { progress: { value: JSON.parse(r.progress) as ProgressValue, attempt: r.progress_attempt ?? 0, reportedAt: r.progress_at ?? 0 } };
}
