import { IDEMPOTENCY_CONFLICT } from './store';

/** What an idempotency conflict carries from a store to the service. */
export interface IdempotencyConflictDetails {
  /** The task the key stands for. */
  taskId: string;
  tenantId: string;
  key: string;
  /** The same request, whose task was deleted since (dead-letter delete, retention purge). */
  taskDeleted?: boolean;
}

/**
 * The error `insertTasks` rejects with when a key is held (see {@link IDEMPOTENCY_CONFLICT}): the
 * details go as JSON in `code`, plain data that survives the writer thread's structured clone.
 */
export function idempotencyConflictError(message: string, d: IdempotencyConflictDetails): Error {
  const details = { taskId: d.taskId, tenantId: d.tenantId, key: d.key, ...(d.taskDeleted ? { taskDeleted: true } : {}) };
  return Object.assign(new Error(message), { name: IDEMPOTENCY_CONFLICT, code: JSON.stringify(details) });
}
