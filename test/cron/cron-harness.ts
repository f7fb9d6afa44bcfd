import path from 'node:path';
import pino from 'pino';
import { Config, loadConfig } from '../../src/config';
import { CronEvaluator } from '../../src/actors/cron/cron-evaluator';
import { CronService } from '../../src/services/cron-service';
import { ManualClock } from '../../src/domain/clock';
import { DueEntry } from '../../src/domain/task';
import { registeredTaskTypes } from '../../src/handlers/registry';
import { SchedulerMetrics } from '../../src/observability/metrics';
import type { TaskSpans } from '../../src/observability/task-spans';
import { CronFiring, CronFiringResult } from '../../src/storage/cron-store';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { Store } from '../../src/storage/store';

/** 2026-06-01T12:00:00Z, a whole minute. */
export const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

/** Config for cron tests (defaults + overrides). */
export function cronTestConfig(overrides: Record<string, unknown> = {}): Config {
  return loadConfig({
    configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
    env: {},
    overrides: { partitions: 4, logLevel: 'silent', ...overrides },
  });
}

/** One evaluator on its own connection to the store file, with what it produced. */
export interface EvaluatorNode {
  store: Store;
  evaluator: CronEvaluator;
  crons: CronService;
  instances: DueEntry[];
  aborts: Array<{ taskId: string; attempt: number }>;
  /** Firings whose compare-and-set failed (another evaluator won, or an edit came first). */
  lost: number;
  metrics: SchedulerMetrics;
  close(): Promise<void>;
}

/**
 * Opens a store on `file` (own connection, writes in process) with a CronService and a
 * CronEvaluator driven by `clock`. The evaluator is not started.
 * @param spans the evaluator's task spans (tracing), if any
 */
export async function evaluatorNode(file: string, clock: ManualClock, config: Config, spans?: TaskSpans): Promise<EvaluatorNode> {
  const store = new SqliteStore(file, { writerThread: false });
  await store.open(config.partitions);
  const metrics = new SchedulerMetrics(() => store.countByState());
  const node = {} as EvaluatorNode;
  const fireCrons = store.fireCrons.bind(store);
  store.fireCrons = async (firings: CronFiring[], now: number): Promise<CronFiringResult[]> => {
    const results = await fireCrons(firings, now);
    node.lost += results.filter((r) => !r.applied).length;
    return results;
  };
  const evaluator = new CronEvaluator({
    store,
    clock,
    config,
    metrics,
    log: pino({ level: 'silent' }),
    onInstances: (entries) => node.instances.push(...entries),
    onAborts: (aborts) => node.aborts.push(...aborts),
    ...(spans ? { spans } : {}),
  });
  const crons = new CronService({
    store,
    clock,
    config,
    taskTypes: new Set(registeredTaskTypes(config.handlers)),
    gateway: { cronChanged: (id) => evaluator.changed(id) },
  });
  Object.assign(node, {
    store,
    evaluator,
    crons,
    metrics,
    instances: [],
    aborts: [],
    lost: 0,
    close: async () => {
      evaluator.stop();
      await evaluator.settled();
      await store.close();
    },
  });
  return node;
}

/** Moves the clock and waits until every evaluator has finished what that woke up. */
export async function advance(clock: ManualClock, ms: number, nodes: EvaluatorNode[]): Promise<void> {
  clock.advance(ms);
  await settle(nodes);
}

/** Waits until no evaluator has work in progress (a pump may chain another). */
export async function settle(nodes: EvaluatorNode[]): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await Promise.all(nodes.map((n) => n.evaluator.settled()));
    await new Promise((r) => setImmediate(r));
  }
}

/** Every fire record of a cron, oldest first. */
export async function firesOf(store: Store, cronId: string) {
  const out = [];
  let cursor: string | undefined;
  do {
    const page = await store.listCronFires(cronId, { limit: 1000, cursor });
    out.push(...page.fires);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return out.reverse();
}

/** Plays a worker: claims and completes (SUCCEEDED) each of these instances that is PENDING. */
export async function runToSuccess(store: Store, ids: string[], now: number): Promise<void> {
  const claimed = await store.claimTasks(ids, 'worker-test', now, 30_000);
  await store.completeAttempts(
    claimed.map((c) => ({
      taskId: c.id,
      attempt: c.attempt,
      state: 'SUCCEEDED' as const,
      retryAt: null,
      result: null,
      error: null,
      durationMs: 1,
    })),
    now,
  );
}
