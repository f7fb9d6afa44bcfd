import path from 'node:path';
import pino from 'pino';
import { SchedulerDeps } from '../../src/actors/deps';
import { ActorRouter } from '../../src/actors/router';
import { PartitionFences } from '../../src/cluster/partition-fences';
import { loadConfig } from '../../src/config';
import { ManualClock } from '../../src/domain/clock';
import { DispatchLimits } from '../../src/domain/dispatch-limits';
import { DueEntry, NewTask } from '../../src/domain/task';
import { SchedulerMetrics } from '../../src/observability/metrics';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { Store } from '../../src/storage/store';

/**
 * The resources an actor (or a part of one) gets, for tests that drive it directly: the project's
 * config with `overrides`, a silent logger, fresh limits and metrics; cluster mode when `fences` is given.
 */
export function actorDeps(o: {
  store: Store;
  clock: ManualClock;
  router: ActorRouter;
  overrides?: Record<string, unknown>;
  fences?: PartitionFences;
}): SchedulerDeps {
  const config = loadConfig({ configDir: path.resolve(__dirname, '..', '..', '..', 'config'), env: {}, overrides: o.overrides ?? {} });
  return {
    store: o.store,
    clock: o.clock,
    config,
    metrics: new SchedulerMetrics(() => o.store.countByState()),
    log: pino({ level: 'silent' }),
    router: o.router,
    limits: new DispatchLimits(),
    ...(o.fences ? { cluster: { memberId: 'm', fences: o.fences } } : {}),
  };
}

/**
 * A router over fake actors (objects with `tell`, as the tests record them): `owners[p]` owns
 * partition p; no cron actor.
 */
export function routerWith(o: { dispatcher?: unknown; owners?: unknown[] } = {}): ActorRouter {
  const router = new ActorRouter();
  if (o.dispatcher) router.setDispatcher(o.dispatcher as never);
  (o.owners ?? []).forEach((ref, p) => router.setOwner(p, ref as never));
  return router;
}

/** A `noop` task of partition 0 and tenant `t`, SCHEDULED at `dueAt` (or PENDING, due then), created at `createdAt`. */
export function waitingTask(
  id: string,
  dueAt: number,
  createdAt: number,
  o: { state?: 'SCHEDULED' | 'PENDING'; queue?: string } = {},
): NewTask {
  const state = o.state ?? 'SCHEDULED';
  return {
    id,
    partition: 0,
    taskType: 'noop',
    payload: null,
    priority: 'medium',
    queue: o.queue ?? 'default',
    tenantId: 't',
    correlationId: null,
    idempotencyKey: null,
    metadata: {},
    retry: { maxRetries: 0, backoff: 'fixed', delaySeconds: 0 },
    timeoutSeconds: 10,
    scheduledAt: state === 'SCHEDULED' ? dueAt : null,
    dueAt,
    state,
    createdAt,
  };
}

/** Lets queued store work (the group commit runs on setImmediate) and an actor's pump finish. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/**
 * Due entries for tasks stored with {@link waitingTask} in partition 0 (seq = position + 1), as a
 * partition owner hands them to the dispatcher: tenant `t`, type `noop`, priority medium, due at
 * `dueAt` (epoch ms), in `state`; `concurrencyKey` when given per id.
 */
export function dueEntries(
  ids: readonly string[],
  dueAt: number,
  state: DueEntry['state'] = 'PENDING',
  concurrencyKeyOf: (id: string) => string | undefined = () => undefined,
): DueEntry[] {
  return ids.map((id, i) => {
    const key = concurrencyKeyOf(id);
    return {
      id,
      partition: 0,
      seq: i + 1,
      dueAt,
      priority: 'medium',
      tenantId: 't',
      taskType: 'noop',
      state,
      ...(key !== undefined ? { concurrencyKey: key } : {}),
    };
  });
}

/**
 * A dispatcher test's store and clock, fresh for each case: an in-memory SQLite store opened with
 * one partition, and a manual clock at `t0` (epoch ms).
 */
export async function memoryStoreAndClock(t0: number): Promise<{ store: SqliteStore; clock: ManualClock }> {
  const store = new SqliteStore(':memory:');
  await store.open(1);
  return { store, clock: new ManualClock(t0) };
}

/** A dispatcher test's clean-up: destroys the dispatcher (when the case built one), then closes the store. */
export async function closeDispatcherAndStore(dispatcher: { destroy(): void } | undefined | null, store: Store): Promise<void> {
  dispatcher?.destroy();
  await store.close();
}
