import type { Logger } from 'pino';
import type { Config } from '../config';
import { CronService } from './cron-service';
import type { CronGateway, ExternalGateway, SchedulingGateway } from './ports';
import { TaskEndEvents } from './task-end-events';
import { ResultWaiters } from './result-waiters';
import { TERMINAL_STATES } from '../domain/task';
import { PayloadChecks } from '../handlers/payload-schemas';
import { Clock } from '../domain/clock';
import { DispatchLimits } from '../domain/dispatch-limits';
import type { RateLimiterBackend } from '../domain/rate-limiter-backend';
import type { ConcurrencyBackend } from '../domain/concurrency-limits';
import { SchedulerMetrics } from '../observability/metrics';
import { TaskService } from './task-service';
import { OperationsService } from './operations-service';
import { Store } from '../storage/store';
import { SubmissionGuard } from './submission-guard';
import { OverflowRelease } from './overflow-release';
import { TenantAdmin } from './tenant-admin';
import { WorkflowService } from './workflow-service';
import { ExternalTaskService } from './external-task-service';
import { PullLeaseService } from './pull-lease-service';
import type { TaskSpans } from '../observability/task-spans';

/** Every operation the REST API and the actor-message API offer, over one store. */
export interface Services {
  service: TaskService;
  /** Start-up recovery, the audit pass and readiness. */
  operations: OperationsService;
  crons: CronService;
  workflows: WorkflowService;
  tenants: TenantAdmin;
  guard: SubmissionGuard;
  /** Releases tasks held in the overflow hold; the service process runs a pass every `overflow.releaseIntervalMs`. */
  overflow: OverflowRelease;
  /** Tenant weights and rate limits in force (shared with the dispatcher and partition owners). */
  limits: DispatchLimits;
  /** External consumers' reports on attempts of external queues (complete, heartbeat, …). */
  external: ExternalTaskService;
  /** The `?wait=` long polls held by this node; `close()` answers them all (shutdown). */
  waiters: ResultWaiters;
  /** HTTP pull workers' lease requests. */
  pull: PullLeaseService;
}

export interface ServicesDeps {
  store: Store;
  clock: Clock;
  config: Config;
  metrics: SchedulerMetrics;
  log: Logger;
  /** New tasks to their owners, aborts to the dispatcher, ends to the cron actor. */
  gateway: SchedulingGateway;
  /** Cron edits to the cron actor. */
  cronGateway: CronGateway;
  /** External consumers' completions to the dispatcher; absent (no actors): they answer 503. */
  externalGateway?: ExternalGateway;
  /** Where rate-limit buckets live (cluster mode: Redis); default: in-process token buckets. */
  rateLimiter?: RateLimiterBackend;
  /** Shares concurrency limits across nodes (Redis); default: counted in this process. */
  concurrencyBackend?: ConcurrencyBackend;
  /** Health of the Redis coordination for /readyz (cluster mode). */
  redisStatus?: () => 'up' | 'down';
  /** The service process's task spans (tracing configured); absent or null: no submission spans. */
  spans?: TaskSpans | null;
  /**
   * Payload schemas the configured handler modules export, by task type (`probeHandlerModules`),
   * checked at submission like the built-ins'; absent: none.
   */
  payloadSchemas?: Readonly<Record<string, object>>;
  /**
   * This node's "task ended" events, shared with the actors that publish them (the composition
   * root makes one); absent: a private one (only the services' own cancels are announced).
   */
  taskEnds?: TaskEndEvents;
}

/**
 * The tenant weights and rate limits of the config files. `now`: epoch ms (buckets start full).
 * @param backend where the buckets live (default: in-process)
 * @param concurrencyBackend shares the concurrency limits across nodes (default: none, per process)
 */
export function dispatchLimitsFromConfig(
  config: Config,
  now: number,
  backend?: RateLimiterBackend,
  concurrencyBackend?: ConcurrencyBackend,
): DispatchLimits {
  const limits = new DispatchLimits(backend, concurrencyBackend ?? null);
  for (const [tenant, t] of Object.entries(config.tenants)) {
    if (t.weight !== undefined) limits.setWeight(tenant, t.weight);
    if (t.rateLimit) limits.setTenantLimit(tenant, t.rateLimit, now);
  }
  for (const [type, limit] of Object.entries(config.rateLimits)) limits.setTypeLimit(type, limit, now);
  return limits;
}

/**
 * Builds the services in dependency order: dispatch limits (config, then what admins stored),
 * the submission guard (exact waiting and held counts first when a cap is set) and the overflow
 * release, then the task, cron and
 * workflow services. The service process and the route tests build them the same way.
 */
export async function createServices(deps: ServicesDeps): Promise<Services> {
  const { store, clock, config, metrics, log, gateway, cronGateway, redisStatus } = deps;
  const limits = dispatchLimitsFromConfig(config, clock.now(), deps.rateLimiter, deps.concurrencyBackend);
  const tenants = new TenantAdmin({ store, clock, config, limits });
  await tenants.loadStored();
  const guard = new SubmissionGuard(config);
  if (guard.countsNeeded) guard.refresh(await store.countWaitingByTenant(), await store.countOverflowByTenant());
  const overflow = new OverflowRelease({ store, clock, config, guard, metrics, gateway });
  const spans = deps.spans ?? null;
  const payloads = new PayloadChecks(config.handlers, deps.payloadSchemas);
  const taskEnds = deps.taskEnds ?? new TaskEndEvents();
  const waiters = resultWaiters(deps, taskEnds);
  const service = new TaskService({ store, clock, config, metrics, log, gateway, guard, spans, payloads, waiters, taskEnds });
  const operations = new OperationsService({
    store,
    clock,
    config,
    metrics,
    gateway,
    accepting: () => service.isAccepting,
    ...(redisStatus ? { redisStatus } : {}),
  });
  const crons = new CronService({
    store,
    clock,
    config,
    taskTypes: new Set(service.registeredTypes),
    payloads,
    gateway: cronGateway,
  });
  const workflows = new WorkflowService({ store, clock, config, metrics, gateway, guard, spans, payloads, waiters, taskEnds });
  const external = new ExternalTaskService({ store, clock, config, gateway: deps.externalGateway ?? null });
  const pull = new PullLeaseService({ config, gateway: deps.externalGateway ?? null, health: store.health });
  return { service, operations, crons, workflows, tenants, guard, overflow, limits, external, waiters, pull };
}

/**
 * The long polls' registry over the store (`waits` config): the re-check reads every waited-on id
 * in one batch; a task or workflow that no longer exists counts as ended (its waiter's read then
 * answers 404).
 */
function resultWaiters(deps: ServicesDeps, events: TaskEndEvents): ResultWaiters {
  const { store, clock, config, log } = deps;
  return new ResultWaiters({
    clock,
    events,
    maxWaiters: config.waits.maxWaiters,
    recheckMs: config.waits.recheckMs,
    endedTasks: async (ids) => {
      const states = await store.getTaskStates(ids);
      return new Set(
        ids.filter((id) => {
          const state = states.get(id);
          return state === undefined || TERMINAL_STATES.has(state);
        }),
      );
    },
    endedWorkflows: async (ids) => {
      const found = await Promise.all(ids.map((id) => store.getWorkflow(id)));
      return new Set(ids.filter((_, i) => found[i] === null || found[i]?.status !== 'RUNNING'));
    },
    onError: (err) => log.warn({ err }, 'waiters: re-check failed'),
  });
}
