import { progressFraction, ProgressValue } from '../domain/progress';

/**
 * A task as `scheduler get` prints it for people: the API's fields, with `progress` as one line
 * (`60 % (6000 of 10000 · copying), attempt 1 at <time>`) and `checkpoint` as its attempt, size
 * and time followed by its value. `--json` prints the API's answer as it is.
 */
export function taskView(task: Record<string, unknown>): Record<string, unknown> {
  const { progress, progress_attempt, progress_at, checkpoint, ...rest } = task;
  const cp = checkpoint as { attempt: number; saved_at: string; size_bytes: number; value?: unknown } | null | undefined;
  return {
    ...rest,
    progress:
      progress === null || progress === undefined
        ? null
        : `${progressLine(progress as ProgressValue)}, attempt ${progress_attempt} at ${progress_at}`,
    checkpoint: cp ? `attempt ${cp.attempt}, ${cp.size_bytes} bytes, saved at ${cp.saved_at}: ${JSON.stringify(cp.value)}` : null,
  };
}

/** `60 % (6000 of 10000 · copying)` for a progress value. */
function progressLine(p: ProgressValue): string {
  const fraction = progressFraction(p);
  const percent = fraction === null ? null : `${Math.round(fraction * 1000) / 10} %`;
  if (typeof p === 'number') return percent as string;
  const parts = [
    typeof p.done === 'number' ? `${p.done}${typeof p.total === 'number' ? ` of ${p.total}` : ''}` : null,
    p.message ?? null,
  ].filter(Boolean);
  return [percent, parts.length ? `(${parts.join(' · ')})` : null].filter(Boolean).join(' ');
}
