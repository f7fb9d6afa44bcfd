/**
 * Progress reports of running attempts (`ctx.progress(value)`, `POST /api/v1/tasks/{id}/progress`),
 * shown by GET /api/v1/tasks/{id}, the dashboard and the CLI. A progress value is either
 * - a fraction: a number from 0 to 1, or
 * - an object `{done?, total?, message?}`: `done` and `total` non-negative finite numbers
 *   (`done <= total` when both are given), `message` a string of at most
 *   {@link MAX_PROGRESS_MESSAGE} characters; at least one of them, nothing else.
 * Progress is advisory: unlike a checkpoint it is never read back by the task, and a report may
 * be lost (see the worker's throttle), so it is not the place for state to resume from.
 */
import { ValidationError } from './errors';

/** Longest `message` of a progress report, in characters. */
export const MAX_PROGRESS_MESSAGE = 200;

/** A validated progress value. */
export type ProgressValue = number | { done?: number; total?: number; message?: string };

/** The last progress a task has, as a store reads it back. */
export interface ProgressRecord {
  value: ProgressValue;
  /** The attempt that reported it. */
  attempt: number;
  /** When it was written (epoch ms, the store's `now`). */
  reportedAt: number;
}

/** One progress report of a running attempt, as the stores take it. */
export interface ProgressReport {
  taskId: string;
  attempt: number;
  value: ProgressValue;
}

const KEYS = new Set(['done', 'total', 'message']);

/** Why `value` is not a progress value, or null when it is one. */
export function progressProblem(value: unknown): string | null {
  if (typeof value === 'number')
    return Number.isFinite(value) && value >= 0 && value <= 1 ? null : 'a number must be a fraction from 0 to 1';
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return 'must be a number from 0 to 1 or an object {done?, total?, message?}';
  }
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 0) return 'needs at least one of done, total, message';
  const extra = keys.find((k) => !KEYS.has(k));
  if (extra !== undefined) return `unknown field "${extra.slice(0, 50)}" (allowed: done, total, message)`;
  for (const k of ['done', 'total'] as const) {
    if (k in o && (typeof o[k] !== 'number' || !Number.isFinite(o[k]) || (o[k] as number) < 0)) return `${k} must be a non-negative number`;
  }
  if (typeof o.done === 'number' && typeof o.total === 'number' && o.done > o.total) return 'done must not exceed total';
  if ('message' in o && (typeof o.message !== 'string' || o.message.length > MAX_PROGRESS_MESSAGE)) {
    return `message must be a string of at most ${MAX_PROGRESS_MESSAGE} characters`;
  }
  return null;
}

/**
 * `value` checked as a progress value.
 * @param field the name in the error (`progress`)
 * @throws ValidationError naming `field` when it is not one
 */
export function assertProgress(value: unknown, field = 'progress'): ProgressValue {
  const problem = progressProblem(value);
  if (problem !== null) throw new ValidationError(field, problem);
  return value as ProgressValue;
}

/** The fraction done a progress value shows (0..1), or null when it does not say (no total). */
export function progressFraction(value: ProgressValue): number | null {
  if (typeof value === 'number') return value;
  if (typeof value.done === 'number' && typeof value.total === 'number') return value.total === 0 ? 1 : value.done / value.total;
  return null;
}

/**
 * The reports as the stores write them: each value checked and as JSON text.
 * @throws ValidationError (`progress`) at the first value that is not a progress value
 */
export function progressRows(reports: readonly ProgressReport[]): Array<{ taskId: string; attempt: number; text: string }> {
  return reports.map((r) => ({ taskId: r.taskId, attempt: r.attempt, text: JSON.stringify(assertProgress(r.value)) }));
}
