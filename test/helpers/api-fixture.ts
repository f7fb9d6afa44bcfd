import path from 'node:path';
import pino, { Logger } from 'pino';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { Config, loadConfig } from '../../src/config';
import { ManualClock } from '../../src/domain/clock';
import { DueEntry } from '../../src/domain/task';
import { SchedulerMetrics } from '../../src/observability/metrics';
import type { TaskService } from '../../src/services/task-service';
import type { OperationsService } from '../../src/services/operations-service';
import { createServices } from '../../src/services';
import { appFor } from '../../src/api/app-for';
import type { CronService } from '../../src/services/cron-service';
import type { DispatchLimits } from '../../src/domain/dispatch-limits';
import type { SubmissionGuard } from '../../src/services/submission-guard';
import type { OverflowRelease } from '../../src/services/overflow-release';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { tempDir } from './temp-dir';
import type { WorkflowService } from '../../src/services/workflow-service';
import { TaskEndEvents } from '../../src/services/task-end-events';
import type { ResultWaiters } from '../../src/services/result-waiters';
import type { ExternalGateway } from '../../src/services/ports';

/** A service over a real SQLite store, a manual clock and a recording gateway; no actors. */
export interface ApiFixture {
  app: FastifyInstance;
  service: TaskService;
  operations: OperationsService;
  crons: CronService;
  workflows: WorkflowService;
  limits: DispatchLimits;
  guard: SubmissionGuard;
  /** The overflow release; the fixture runs no pass on its own (call `pass()`). */
  overflow: OverflowRelease;
  store: SqliteStore;
  clock: ManualClock;
  config: Config;
  stored: DueEntry[];
  aborted: Array<{ taskId: string; attempt: number }>;
  /** Task ids the service reported as ended outside the dispatcher. */
  ended: string[];
  /** Cron ids the cron service reported as changed. */
  cronsChanged: string[];
  /** The services' "task ended" events (publish here what the dispatcher would). */
  taskEnds: TaskEndEvents;
  /** The `?wait=` long polls held. */
  waiters: ResultWaiters;
  /** Every route the app declared (fastify `onRoute`), for checks on their schemas. */
  routes: RouteOptions[];
  close(): Promise<void>;
}

/**
 * @param overrides config keys
 * @param logger the app's pino logger (default: a silent app)
 * @param env environment the config is loaded with (e.g. `SCHEDULER_CONFIG` naming a config file)
 * @param externalGateway stands in for the dispatcher's side of external queues (default: none,
 *   so completions and lease requests answer 503)
 */
export async function apiFixture(
  overrides: Record<string, unknown> = {},
  logger?: Logger,
  env: NodeJS.ProcessEnv = {},
  externalGateway?: ExternalGateway,
): Promise<ApiFixture> {
  const dir = tempDir();
  const config = loadConfig({
    configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
    env,
    overrides: { sqlitePath: path.join(dir.path, 'test.db'), partitions: 8, logLevel: 'silent', ...overrides },
  });
  const store = new SqliteStore(config.sqlitePath);
  await store.open(config.partitions);
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0, 0));
  const metrics = new SchedulerMetrics(() => store.countByState());
  const stored: DueEntry[] = [];
  const aborted: Array<{ taskId: string; attempt: number }> = [];
  const ended: string[] = [];
  const cronsChanged: string[] = [];
  const gateway = {
    tasksStored: (e: DueEntry[]) => stored.push(...e),
    abortRunning: (taskId: string, attempt: number) => aborted.push({ taskId, attempt }),
    tasksEnded: (ids: string[]) => ended.push(...ids),
  };
  const taskEnds = new TaskEndEvents();
  const services = await createServices({
    taskEnds,
    store,
    clock,
    config,
    metrics,
    log: pino({ level: 'silent' }),
    gateway,
    cronGateway: { cronChanged: (id) => cronsChanged.push(id) },
    ...(externalGateway ? { externalGateway } : {}),
  });
  const { service, operations, crons, workflows, limits, guard, overflow } = services;
  const app = appFor(services, config, metrics, logger);
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (r) => void routes.push(r));
  await app.ready();
  return {
    taskEnds,
    waiters: services.waiters,
    routes,
    app,
    service,
    operations,
    crons,
    workflows,
    limits,
    guard,
    overflow,
    store,
    clock,
    config,
    stored,
    aborted,
    ended,
    cronsChanged,
    close: async () => {
      await app.close();
      await store.close();
      dir.remove();
    },
  };
}

/** A request with a JSON body through `app.inject` (the body sent as its JSON text). */
export function sendJson(f: ApiFixture, method: 'POST' | 'PATCH' | 'PUT', url: string, body: unknown) {
  return f.app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
}
