import { IdempotencyKeyConflict, type IdempotencyConflictDetails } from '../idempotency-conflict';
import { IDEMPOTENCY_CONFLICT } from '../store';

/**
 * An error as a store thread sends it back: plain data, so it survives the structured clone of
 * `postMessage` (which keeps neither an error's class nor its own fields). `code` is SQLite's
 * (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_…`) when it has one; `details` the typed storage error's.
 */
export interface ThreadError {
  name: string;
  message: string;
  code?: string;
  details?: IdempotencyConflictDetails;
}

/** `err` as a {@link ThreadError}, on the thread's side (anything thrown, not only an Error). */
export function threadErrorOf(err: unknown): ThreadError {
  const e = (err ?? {}) as Partial<Error> & { code?: unknown };
  const wire: ThreadError = { name: String(e.name ?? 'Error'), message: String(e.message ?? err) };
  if (typeof e.code === 'string') wire.code = e.code;
  if (err instanceof IdempotencyKeyConflict) wire.details = err.details;
  return wire;
}

/**
 * The error a {@link ThreadError} stands for, on the calling side: an {@link IdempotencyKeyConflict}
 * for one (same message and details), otherwise an Error with the thread's `name`, `message` and `code`.
 */
export function errorOfThread(wire: ThreadError | undefined): Error {
  if (wire?.name === IDEMPOTENCY_CONFLICT && wire.details) return new IdempotencyKeyConflict(wire.message, wire.details);
  return Object.assign(new Error(wire?.message), { name: wire?.name, code: wire?.code });
}
