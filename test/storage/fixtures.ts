/**
 * Builders shared by the storage tests. Times are fixed epoch numbers (never the clock).
 */
import { partitionOf } from '../../src/domain/partition';
import { NewTask, TaskError } from '../../src/domain/task';
import { AttemptCompletion, InsertResult, Store } from '../../src/storage/store';

/** Partition count every conformance store is opened with. */
export const PARTITIONS = 8;

/** 2023-11-14T22:13:20Z: the suite's fixed "now". */
export const T0 = 1_700_000_000_000;

/**
 * A NewTask with every field filled. `partition` follows `partitionOf(id, PARTITIONS)`; `state`
 * is SCHEDULED when `scheduledAt` lies after `createdAt`, else PENDING; `dueAt` is `scheduledAt`
 * or `createdAt`. Any of these can be overridden.
 */
export function newTask(id: string, overrides: Partial<Omit<NewTask, 'id'>> = {}): NewTask {
  const createdAt = overrides.createdAt ?? T0;
  const scheduledAt = overrides.scheduledAt !== undefined ? overrides.scheduledAt : null;
  const dueAt = overrides.dueAt ?? scheduledAt ?? createdAt;
  const state = overrides.state ?? (scheduledAt !== null && scheduledAt > createdAt ? 'SCHEDULED' : 'PENDING');
  return {
    id,
    partition: partitionOf(id, PARTITIONS),
    taskType: 'echo',
    payload: { n: 1 },
    priority: 'medium',
    queue: 'default',
    tenantId: 'tenant-a',
    correlationId: null,
    idempotencyKey: null,
    metadata: {},
    retry: { maxRetries: 3, backoff: 'exponential', delaySeconds: 1 },
    timeoutSeconds: 30,
    ...overrides,
    scheduledAt,
    dueAt,
    state,
    createdAt,
  };
}

/** `n` distinct ids (`<prefix>-<i>`) whose partition is `partition`. */
export function idsInPartition(partition: number, n: number, prefix = 'task'): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) {
    const id = `${prefix}-${i}`;
    if (partitionOf(id, PARTITIONS) === partition) out.push(id);
    if (i > 100_000) throw new Error('idsInPartition: no ids found');
  }
  return out;
}

/** An id (`<prefix>-<i>`) whose partition is NOT `partition`. */
export function idOutsidePartition(partition: number, prefix = 'other'): string {
  for (let i = 0; ; i++) {
    const id = `${prefix}-${i}`;
    if (partitionOf(id, PARTITIONS) !== partition) return id;
  }
}

export function taskError(message: string, type = 'Error', retryable = true): TaskError {
  return { message, type, retryable };
}

/** A completion with neutral defaults. */
export function completion(
  taskId: string,
  attempt: number,
  state: AttemptCompletion['state'],
  extra: Partial<AttemptCompletion> = {},
): AttemptCompletion {
  return { taskId, attempt, state, retryAt: null, result: null, error: null, durationMs: 5, ...extra };
}

/** Drives a stored PENDING/SCHEDULED task to RUNNING through the contract (markPending + claim). */
export async function startTask(store: Store, id: string, now: number, workerId = 'worker-1'): Promise<number> {
  await store.markPending([id], now);
  const claimed = await store.claimTasks([id], workerId, now, 60_000);
  if (claimed.length !== 1) throw new Error(`startTask: could not claim ${id}`);
  return claimed[0].attempt;
}

/** Inserts a task and drives it to a terminal state (SUCCEEDED, FAILED or DEAD) at `now`. */
export async function finishedTask(store: Store, id: string, state: 'SUCCEEDED' | 'FAILED' | 'DEAD', now: number): Promise<void> {
  await store.insertTasks([newTask(id)]);
  const attempt = await startTask(store, id, now);
  const err = state === 'SUCCEEDED' ? null : taskError(`${state} ${id}`, 'Error', state === 'DEAD');
  const [r] = await store.completeAttempts(
    [completion(id, attempt, state, { result: state === 'SUCCEEDED' ? { ok: true } : null, error: err })],
    now + 10,
  );
  if (!r.applied) throw new Error(`finishedTask: completion of ${id} not applied`);
}

/** The ids and replay flags of insertTasks results, without their store-specific `seq`. */
export function acks(results: InsertResult[]): Array<{ taskId: string; replayed: boolean }> {
  return results.map(({ taskId, replayed }) => ({ taskId, replayed }));
}

/** Resolves to the error a promise rejects with (or a function throws); fails if it fulfils. */
export async function rejectionOf(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection, but the operation succeeded');
}
