/**
 * Storing acknowledged submissions: a batch is stored all or none, then its waiting tasks are
 * handed to their partition owners, a chunk at a time so one large batch does not hold back other
 * callers' requests (docs/TENANTS.md). The acknowledgement is built only after the store committed.
 */
import type { Clock } from '../domain/clock';
import type { SchedulerMetrics } from '../observability/metrics';
import type { Store } from '../storage/store';
import type { SchedulingGateway } from './ports';
import type { SubmissionGuard } from './submission-guard';
import { ackJson, lastIsoMemo, SubmitAck } from '../contract/task-json';
import { incGrouped } from '../observability/inc-grouped';
import { IdempotencyConflictError, OverloadedError, RateLimitedError } from '../domain/errors';
import { DueEntry, NewTask } from '../domain/task';
import type { InsertResult } from '../storage/store';
import { IdempotencyKeyConflict } from '../storage/idempotency-conflict';

/** What storing submissions needs: the store, the clock, metrics, the actors' port and the guard. */
export interface SubmitTasksDeps {
  store: Store;
  clock: Clock;
  metrics: SchedulerMetrics;
  /** New waiting tasks to their partition owners. */
  gateway: SchedulingGateway;
  /** Backpressure at submission (rate limits, waiting caps); none: everything is admitted. */
  guard?: SubmissionGuard;
}

/** Tasks of a batch built, or handed to their owners, between two turns of the event loop (~1 ms of work). */
export const BUILD_CHUNK = 100;

/**
 * Stores tasks (all or none) and hands the new ones to their partition owners. A low-priority task
 * the submission guard holds (overflow) is stored OVERFLOW and offered to no owner: the overflow
 * release lets it in later (services/overflow-release.ts). A task answered by
 * an earlier one with the same idempotency key and request gets that task's acknowledgement,
 * with its current status and `idempotent_replayed: true`. A task the store adopted under
 * another id (MongoDB: a dead call of the same request reserved it) is acknowledged, and offered
 * if it waits, as stored under that id.
 * Backpressure ({@link admitted}) does not refuse a repeat of an acknowledged request: a client whose
 * answer was lost learns its task even while new tasks are refused.
 * @param fieldPrefix the request path of item i (`tasks[3].`; `''` for a single submission)
 * @returns one acknowledgement per task, in order
 * @throws IdempotencyConflictError (409) when a key is held by a different request; what the
 *   submission guard throws (429, 503) before anything is stored
 */
export async function storeSubmissions(deps: SubmitTasksDeps, tasks: NewTask[], fieldPrefix: (i: number) => string): Promise<SubmitAck[]> {
  const admission = await admitted(deps, tasks);
  try {
    return await storeAdmitted(deps, tasks, admission.held, fieldPrefix);
  } finally {
    // Stored ones are counted by then (`guard.stored`); the reservation of all of them ends.
    admission.settle();
  }
}

/** {@link storeSubmissions} once the guard admitted `tasks` (`held`: per task, to be stored OVERFLOW). */
async function storeAdmitted(
  deps: SubmitTasksDeps,
  tasks: NewTask[],
  held: readonly boolean[],
  fieldPrefix: (i: number) => string,
): Promise<SubmitAck[]> {
  held.forEach((h, i) => {
    if (h) tasks[i].state = 'OVERFLOW';
  });
  let results: InsertResult[];
  try {
    results = await deps.store.insertTasks(tasks);
  } catch (err) {
    throw idempotencyConflict(err, tasks, fieldPrefix) ?? err;
  }
  const entries: DueEntry[] = [];
  const acks: SubmitAck[] = [];
  const isoOf = lastIsoMemo();
  /** The tasks stored by this request (not replays). */
  const submitted: NewTask[] = [];
  let counted = 0;
  /** Hands the chunk's waiting tasks to their owners, and counts the chunk's submissions with them. */
  const handOver = () => {
    deps.gateway.tasksStored(entries.splice(0));
    incGrouped(
      deps.metrics.submitted,
      submitted.slice(counted),
      (t) => t.taskType,
      (t) => ({ task_type: t.taskType }),
    );
    counted = submitted.length;
  };
  for (const [i, t] of tasks.entries()) {
    // A large batch hands the event loop back every BUILD_CHUNK tasks here too, and its owners
    // are told per chunk: other callers' requests are served in between (docs/TENANTS.md).
    if (i > 0 && i % BUILD_CHUNK === 0) {
      handOver();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const r = results[i];
    if (r.replayed || r.taskId !== t.id) {
      // A replay, or (MongoDB's crash window) a task adopted under the id a dead call of the same
      // request reserved: the stored task is the one to acknowledge, and to offer if it waits.
      const stored = await deps.store.getTask(r.taskId);
      acks.push({ ...ackJson(stored ?? t), task_id: r.taskId, ...(r.replayed ? { idempotent_replayed: true as const } : {}) });
      if (r.replayed) continue;
      submitted.push(t);
      if (stored && (stored.state === 'PENDING' || stored.state === 'SCHEDULED'))
        entries.push(dueEntryOf({ ...stored, state: stored.state }, stored.seq));
      continue;
    }
    submitted.push(t);
    if (t.state !== 'OVERFLOW') entries.push(dueEntryOf(t, r.seq));
    acks.push(ackJson(t, isoOf));
  }
  handOver();
  const overflowed = submitted.filter((t) => t.state === 'OVERFLOW').length;
  if (overflowed > 0) deps.metrics.overflowAccepted.inc(overflowed);
  deps.guard?.stored(submitted);
  return acks;
}

/**
 * The submission guard's admission of `tasks` (per task: true when it is to be held OVERFLOW).
 * When the guard refuses a batch with idempotency keys, the items whose key already stands for a
 * stored task of the same request are replays, not new tasks: they are taken out and the guard
 * asked again for the rest (none left: admitted, and insertTasks answers the replays). So a repeat
 * of an acknowledged submission gets its task (200, `idempotent_replayed`) while new tasks get
 * 429/503, as Stripe answers a saved idempotent request. Only a refusal pays the keys' read; a key
 * released between that read and the insert (the end of its window) lets that one task in.
 * @throws what the guard throws (429 `RATE_LIMITED`, 503 `OVERLOADED`) when something new is
 *   refused, or when the keys cannot be read (the store is away: the client retries later)
 */
async function admitted(deps: SubmitTasksDeps, tasks: NewTask[]): Promise<Admission> {
  const guard = deps.guard;
  if (!guard) return { held: [], settle: () => undefined };
  const now = deps.clock.now();
  try {
    const held = guard.admit(tasks, now);
    return { held, settle: () => guard.settle(tasks, held) };
  } catch (refusal) {
    if (!(refusal instanceof RateLimitedError || refusal instanceof OverloadedError)) throw refusal;
    const replays = await replaysOf(deps.store, tasks, now).catch(() => null);
    if (!replays?.some(Boolean)) throw refusal;
    const fresh = tasks.filter((_, i) => !replays[i]);
    const freshHeld = fresh.length > 0 ? guard.admit(fresh, now) : [];
    let j = 0;
    return {
      held: tasks.map((_, i) => (replays[i] ? false : freshHeld[j++])),
      settle: () => guard.settle(fresh, freshHeld),
    };
  }
}

/** The guard's answer for a submission: per task, whether it is held; `settle` ends its reservation. */
interface Admission {
  held: boolean[];
  settle(): void;
}

/** Per task: true when its idempotency key is held now by a stored task of the same request (a replay). */
async function replaysOf(store: Store, tasks: readonly NewTask[], now: number): Promise<boolean[]> {
  const keyed = tasks.flatMap((t, i) => (t.idempotencyKey !== null && t.idempotency ? [i] : []));
  const out = new Array<boolean>(tasks.length).fill(false);
  if (keyed.length === 0) return out;
  const held = await store.getIdempotencyKeys(
    keyed.map((i) => ({ tenantId: tasks[i].tenantId, key: tasks[i].idempotencyKey as string })),
    now,
  );
  /** Task index → the stored task its key stands for, where the request is the same. */
  const candidates = new Map<number, string>();
  keyed.forEach((i, n) => {
    const h = held[n];
    if (h && h.requestHash === tasks[i].idempotency?.requestHash) candidates.set(i, h.taskId);
  });
  if (candidates.size === 0) return out;
  // A key whose task was deleted since is no replay (insertTasks answers it 409 `task_deleted`).
  const existing = await store.getTaskStates([...candidates.values()]);
  for (const [i, taskId] of candidates) out[i] = existing.has(taskId);
  return out;
}

/** The catalog error for the store's {@link IdempotencyKeyConflict}; null for any other error. */
function idempotencyConflict(err: unknown, tasks: NewTask[], fieldPrefix: (i: number) => string): IdempotencyConflictError | null {
  if (!(err instanceof IdempotencyKeyConflict)) return null;
  const d = err.details;
  const same = (t: NewTask) => t.tenantId === d.tenantId && t.idempotencyKey === d.key;
  // The key may be held by an earlier item of this very batch (stored by nobody: all or none).
  const holder = tasks.findIndex((t) => same(t) && t.id === d.taskId);
  const i = Math.max(
    0,
    tasks.findIndex((t, j) => same(t) && j !== holder),
  );
  if (holder >= 0)
    return new IdempotencyConflictError(`${fieldPrefix(i)}idempotency_key`, d.key, null, fieldPrefix(holder).replace(/\.$/, ''));
  if (d.taskDeleted) return new IdempotencyConflictError(`${fieldPrefix(i)}idempotency_key`, d.key, d.taskId, undefined, true);
  return new IdempotencyConflictError(`${fieldPrefix(i)}idempotency_key`, d.key, d.taskId);
}

/** The partition owner's entry of a new waiting task (a submission, a workflow root), with the sequence the store gave it. */
export function dueEntryOf(
  t: Pick<NewTask, 'id' | 'partition' | 'dueAt' | 'priority' | 'tenantId' | 'taskType' | 'queue' | 'concurrencyKey'> & {
    state: DueEntry['state'];
  },
  seq: number,
): DueEntry {
  return {
    id: t.id,
    partition: t.partition,
    seq,
    dueAt: t.dueAt,
    priority: t.priority,
    tenantId: t.tenantId,
    taskType: t.taskType,
    state: t.state,
    queue: t.queue,
    ...(t.concurrencyKey ? { concurrencyKey: t.concurrencyKey } : {}),
  };
}

/**
 * `items.map(fn)`, handing the event loop back (setImmediate) every `chunk` items, so a
 * 1,000-task batch (~10 ms of building on this machine) does not hold back other callers'
 * requests — one tenant's batches would otherwise add their whole build time to another
 * tenant's single submissions (the fairness target of docs/DESIGN.md §5). Not a timer: no time passes on
 * any clock. The first error thrown by `fn` rejects.
 */
export async function mapYielding<T, R>(items: readonly T[], chunk: number, fn: (item: T, index: number) => R): Promise<R[]> {
  const out: R[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % chunk === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    out[i] = fn(items[i], i);
  }
  return out;
}
