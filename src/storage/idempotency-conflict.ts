import { IDEMPOTENCY_CONFLICT } from './store';

/** What an idempotency conflict carries from a store to the service. */
export interface IdempotencyConflictDetails {
  /** The task the key stands for. */
  taskId: string;
  tenantId: string;
  key: string;
  /** The same request, whose task was deleted since (dead-letter delete, retention purge); absent when not. */
  taskDeleted?: boolean;
}

/**
 * The error `insertTasks` rejects with when an idempotency key (per tenant) is held by a different
 * request, or by the same request whose task was deleted since; nothing of the list was stored.
 * `name` is {@link IDEMPOTENCY_CONFLICT}; `details` says which key and which task holds it. Both
 * adapters throw it; the SQLite writer thread sends it back as plain data (`{name, message,
 * details}`, see sqlite/thread-errors.ts) and the calling side rebuilds this class, so callers
 * test `instanceof` wherever the store runs. The task service turns it into the catalog's
 * IdempotencyConflictError (409).
 */
export class IdempotencyKeyConflict extends Error {
  readonly details: IdempotencyConflictDetails;

  constructor(message: string, d: IdempotencyConflictDetails) {
    super(message);
    this.name = IDEMPOTENCY_CONFLICT;
    this.details = { taskId: d.taskId, tenantId: d.tenantId, key: d.key, ...(d.taskDeleted ? { taskDeleted: true } : {}) };
  }
}
