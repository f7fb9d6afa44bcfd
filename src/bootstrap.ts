import { ActorRef, spawnLocal } from './actors/runtime/comedy';
import type { FastifyInstance } from 'fastify';
import pino, { Logger } from 'pino';
import { startActorRuntime, ActorRuntime } from './actors/actor-runtime';
import { Maintenance } from './background/maintenance';
import { Periodic } from './background/periodic';
import { passFailureLog, periodicPass } from './background/pass-failures';
import { OPEN_FILES_CHECK_MS, OpenFilesWatch } from './observability/open-files-watch';
import { LIMITS_SYNC_MS } from './services/limits-in-force';
import { schedulerApiActor } from './client/scheduler-api-actor';
import { mayCreateSqliteDir, type Config } from './config';
import { createStore } from './storage/create-store';
import { Clock, SystemClock } from './domain/clock';
import { SampledRead } from './observability/sampled-read';
import { SchedulerMetrics } from './observability/metrics';
import type { TaskService } from './services/task-service';
import { createServices } from './services';
import { TaskEndEvents } from './services/task-end-events';
import type { ResultWaiters } from './services/result-waiters';
import { appFor } from './api/app-for';
import { closeWithin, OpenSockets } from './api/open-sockets';
import { certificateValidityWarning, httpsOptionsOf } from './api/tls';
import type { CronService } from './services/cron-service';
import { resolveHandlerModules } from './handlers/handler-module';
import { probeHandlerModules } from './handlers/handler-probe';
import { SqliteStore } from './storage/sqlite/sqlite-store';
import { StoreLock } from './storage/sqlite/store-lock';
import { checkStorePath } from './storage/sqlite/store-preflight';
import { logStoreHealth } from './storage/store-health';
import { Store } from './storage/store';
import { ActorRouter } from './actors/router';
import { actorGateway, cronGateway, externalGateway } from './actors/gateway';
import type { TenantAdmin } from './services/tenant-admin';
import type { WorkflowService } from './services/workflow-service';
import { PartitionFences } from './cluster/partition-fences';
import { defaultMemberId } from './cluster/member-id';
import { claimMember, newInstanceToken } from './cluster/member-claim';
import { createStreamRedis } from './cluster/redis/redis-connection';
import { attachPeers } from './actors/peers';
import { StreamDispatch } from './actors/dispatcher/stream-dispatch';
import { Coordination, redisPrefixOf, startCoordination } from './cluster/redis/coordination';
import { PgCoordination, startPgCoordination } from './cluster/postgres/pg-coordination';
import { busKindOf } from './cluster/bus-kind';
import type { ClockSyncOptions } from './cluster/offset-clock';
import { registerTracing } from './observability/tracing';
import { TaskSpans } from './observability/task-spans';

/** A started scheduler: store, actors, service and (not yet listening) HTTP app. */
export interface Scheduler {
  config: Config;
  store: Store;
  service: TaskService;
  crons: CronService;
  /** Workflow (DAG) operations. */
  workflows: WorkflowService;
  /** Tenant weights and rate limits (admin). */
  tenants: TenantAdmin;
  /** The `?wait=` long polls this node holds (`size`). */
  waiters: ResultWaiters;
  /** Redis coordination (clock, shared rate limits, pub/sub); null without `redisUrl`. */
  coordination: Coordination | null;
  /** PostgreSQL coordination (clock, LISTEN/NOTIFY): store `postgres` without `redisUrl`; else null. */
  pgCoordination: PgCoordination | null;
  runtime: ActorRuntime;
  app: FastifyInstance;
  /** The actor serving the message API; hand it to `new SchedulerClient(apiActor)`. */
  apiActor: ActorRef;
  log: Logger;
  /**
   * Refuses new work (503 + Retry-After; HTTP keeps answering meanwhile), waits ≤ shutdownGraceMs
   * for running attempts, then closes HTTP, the actors and the store.
   */
  close(): Promise<void>;
}

/**
 * Starts everything but the HTTP listener, in dependency order: the embedded store's lock (one
 * service per SQLite file, storage/sqlite/store-lock.ts) → store (migrations) → recovery of
 * attempts orphaned by a previous process → actors (supervisor, dispatcher + workers, partition
 * owners) → service → HTTP app and message-API actor.
 * With `redisUrl` set, Redis coordination starts first (`cluster/redis/`): the scheduler's clock
 * becomes the Redis server's time (measured offset, errs late), rate limits are shared buckets in
 * Redis, and offers and aborts are also published to the other nodes. An unreachable Redis does
 * not stop start-up: the node runs degraded (local clock and limits; /readyz says so).
 * Without `redisUrl` on the PostgreSQL store, the database gives the clock and carries the messages
 * (`cluster/postgres/`: clock_timestamp() offset, LISTEN/NOTIFY); rate limits stay per node.
 * @param options.clock time source (default: system clock; with Redis, the local clock the
 *   measured offset corrects)
 * @param options.clockSync how that offset is measured (cluster/offset-clock.ts; default every
 *   30 s); a caller that injects a ManualClock passes `{ intervalMs: Infinity }`
 * @param options.logger pino logger (default: JSON to stdout at config.logLevel)
 * @param options.globalTracing with `tracesExporter` set, also register this process's tracer
 *   provider as the OpenTelemetry API's global one (the service's `main` does; once per process)
 * @throws ConfigError (exit 78) naming a TLS file (`tls.*`) that cannot be read or is not a matching PEM certificate and key
 * @throws StoreInUseError (a StoreConfigError: `npm start` exits 78 with its one line) when another
 *   running service holds the embedded store's file; StoreConfigError when the embedded store's
 *   path cannot be used (a missing directory without `sqliteCreateDir`, an unwritable directory, a
 *   foreign or corrupt file: storage/sqlite/store-preflight.ts)
 */
/** Largest share of time spent counting tasks by state for /metrics. */
const DEPTH_COUNT_DUTY_CYCLE = 0.02;
/** A depth count slower than this (ms) is refreshed in the background; scrapes get the last one. */
const DEPTH_COUNT_SERVE_STALE_MS = 250;
/** A depth count is reused for at least this long (ms), however fast it was. */
const DEPTH_COUNT_MIN_AGE_MS = 1000;
/**
 * Before the first depth count has answered, a scrape waits for it at most this long (ms), then
 * gets `scheduler_tasks` without samples (the count goes on): the first count at fifty million
 * tasks on a loaded machine took over 10 s, longer than a scraper's timeout.
 */
const DEPTH_COUNT_FIRST_WAIT_MS = 2000;

/** How often the embedded store's WAL is checkpointed (ms). */
const WAL_CHECKPOINT_EVERY_MS = 1000;
/** Longest wait (ms) at shutdown for HTTP connections to end by themselves once the drain is over. */
const HTTP_CLOSE_BOUND_MS = 2000;

export async function startScheduler(
  config: Config,
  options: { clock?: Clock; clockSync?: ClockSyncOptions; logger?: Logger; globalTracing?: boolean } = {},
): Promise<Scheduler> {
  const log = options.logger ?? pino({ level: config.logLevel, base: { service: 'scheduler' } });
  // The certificate and key (HTTPS) are read and checked before anything is opened: a bad file stops start-up (exit 78).
  const https = httpsOptionsOf(config.tls);
  const localClock = options.clock ?? new SystemClock();
  const certWarning = https && certificateValidityWarning(https.cert, config.tls.certFile as string, localClock.now());
  if (certWarning) log.warn(certWarning);
  // Handler modules are located and loaded (in a child process) before anything is opened: a
  // missing module, one without a handler or with a payload schema that does not compile stops
  // start-up (exit 78). The payload schemas they export are checked at submission.
  const payloadSchemas = await probeHandlerModules(resolveHandlerModules(config), {
    clock: localClock,
    timeoutMs: config.workerStartTimeoutMs,
  });
  // This process's spans (submission, queue wait, external hand-off); the workers export their own.
  const tracing = registerTracing(config.tracesExporter, {
    otlpEndpoint: config.otlpTracesEndpoint,
    exportDelayMs: config.tracesExportDelayMs,
    global: options.globalTracing === true,
  });
  const spans = tracing ? new TaskSpans(tracing.tracer) : null;
  // The path is checked before anything creates a file there (a missing volume, a foreign file).
  if (config.store === 'sqlite') checkStorePath(config.sqlitePath, mayCreateSqliteDir(config));
  // One service per embedded store file (see store-lock.ts); taken before anything reads the store.
  const lock = config.store === 'sqlite' && config.sqlitePath !== ':memory:' ? StoreLock.acquire(config.sqlitePath) : null;
  // The store reads the scheduler's clock (chosen below, once coordination is up) when a queued claim runs.
  let schedulerClock: Clock = localClock;
  const store = createStore(config, { now: () => schedulerClock.now() }, localClock);
  // One log line per change of the store's health (a fault, its end), never one per request.
  const unlogHealth = logStoreHealth(store.health, log, () => localClock.now());
  try {
    const schema = await store.open(config.partitions);
    if (schema?.from === 0) log.info({ store: store.name, schema_version: schema.to }, 'store created');
    else if (schema) log.info({ store: store.name, from: schema.from, to: schema.to, applied: schema.applied }, 'store schema upgraded');
  } catch (err) {
    unlogHealth();
    lock?.release();
    await tracing?.shutdown().catch(() => undefined);
    throw err;
  }
  // The depth gauge's count takes ~1.5 s of a core at 10 million tasks: at most 2 % of the time
  // goes to it (at that size a count is reused for about a minute), however often /metrics is read.
  // Once a count has taken 250 ms or more, a scrape never waits for the next one (it gets the last).
  // A fast count is still reused for 1 s: a scraper reading 4 times a second (the benchmarks) made
  // the store count at nearly every scrape.
  const depth = new SampledRead(
    () => store.countByState(),
    localClock,
    DEPTH_COUNT_DUTY_CYCLE,
    DEPTH_COUNT_SERVE_STALE_MS,
    DEPTH_COUNT_MIN_AGE_MS,
    DEPTH_COUNT_FIRST_WAIT_MS,
  );
  const metrics = new SchedulerMetrics(() => depth.get());
  let runtime: ActorRuntime | null = null;
  let coordination: Coordination | null = null;
  let pgCoordination: PgCoordination | null = null;
  // External queues' Redis client (null without external queues); see createStreamRedis in src/cluster/redis/redis-connection.ts.
  let redis: ReturnType<typeof createStreamRedis> = null;
  try {
    const bus = busKindOf(config);
    if (bus === 'redis' && config.redisUrl !== null) {
      coordination = await startCoordination({
        url: config.redisUrl,
        base: localClock,
        log,
        registry: metrics.registry,
        prefix: redisPrefixOf(config),
        ...(options.clockSync ? { clockSync: options.clockSync } : {}),
      });
    } else if (bus === 'postgres' && config.postgresUrl) {
      // No Redis: the database's clock and LISTEN/NOTIFY between nodes (docs/CLUSTER.md).
      pgCoordination = await startPgCoordination({
        url: config.postgresUrl,
        schema: config.postgresSchema,
        base: localClock,
        log,
        registry: metrics.registry,
        ...(options.clockSync ? { clockSync: options.clockSync } : {}),
      });
    }
    const clock: Clock = coordination?.clock ?? pgCoordination?.clock ?? localClock;
    schedulerClock = clock;
    const coord = coordination;
    redis = createStreamRedis(config);
    const router = new ActorRouter();
    const gateway = actorGateway(router);
    // This node's "task ended" events: the dispatcher and the services publish, the `?wait=` waiters listen.
    const taskEnds = new TaskEndEvents();
    const services = await createServices({
      store,
      clock,
      config,
      metrics,
      log,
      gateway,
      cronGateway: cronGateway(router),
      externalGateway: externalGateway(router),
      spans,
      payloadSchemas,
      taskEnds,
      ...(coord ? { rateLimiter: coord.rateLimiter, concurrencyBackend: coord.concurrency, redisStatus: coord.status } : {}),
    });
    const { service, crons, workflows, tenants, guard, limits } = services;
    // Cluster mode (PostgreSQL or MongoDB store): partitions are owned through leases, shared with other
    // members. RUNNING attempts may belong to live members, so none is recovered at start: the
    // attempt-lease sweeper retries those whose worker stopped heartbeating.
    const cluster =
      config.store !== 'sqlite'
        ? { memberId: config.memberId ?? defaultMemberId(), instance: newInstanceToken(), fences: new PartitionFences() }
        : null;
    // One live process per member id: refused (exit 78) while another process heartbeats it.
    if (cluster) {
      const address = `${config.host}:${config.port}`;
      await claimMember({ store, clock, memberId: cluster.memberId, instance: cluster.instance, address, ttlMs: config.leaseTtlMs, log });
    }
    if (!cluster) {
      const recovered = await services.operations.recoverOrphans();
      if (recovered > 0)
        log.warn(
          { recovered },
          'attempts interrupted by the previous process were recorded as lost (worker_lost): retried while retries remain',
        );
    }
    if (cluster) services.operations.setOwnershipProbe(() => router.ownership());
    runtime = await startActorRuntime({
      store,
      clock,
      config,
      metrics,
      log,
      router,
      limits,
      cluster,
      spans,
      taskEnds,
      ...(redis ? { streams: new StreamDispatch(redis) } : {}),
    });
    // Wake-ups and cancels between nodes only where the nodes share one store (cluster mode):
    // embedded nodes with REDIS_URL share the clock and the rate limits, not their tasks.
    // Task ends are shared too: a long poll on one node wakes when another node ends its task.
    // The bus is Redis pub/sub, or without Redis on the PostgreSQL store its LISTEN/NOTIFY.
    const peers = coord ?? pgCoordination;
    if (cluster && peers) {
      await attachPeers(peers, router, config.horizonMs, taskEnds);
      // Weights and limits changed through one member reach the others at once (limits-in-force.ts).
      tenants.onStoredChange(() => void peers.bus.publish('limits', {}));
      peers.bus.on('limits', () => void tenants.loadStored().catch((err) => log.warn({ err }, 'reading the stored limits failed')));
    }
    if (cluster) log.info({ member_id: cluster.memberId, owned: cluster.fences.size }, 'joined the cluster');
    const apiActor = await spawnLocal(
      runtime.root,
      schedulerApiActor(service, crons, workflows, tenants, services.external),
      'scheduler-api',
    );
    const app = appFor(services, config, metrics, log, https);
    const sockets = new OpenSockets(app.server);
    const maintenance = new Maintenance({ store, clock, config, metrics, log });
    maintenance.start();
    // The embedded store's WAL is checkpointed off the writer's commits (see SqliteStore.checkpoint).
    const checkpoints =
      store instanceof SqliteStore
        ? periodicPass(clock, WAL_CHECKPOINT_EVERY_MS, () => store.checkpoint(), passFailureLog(log, clock, 'WAL checkpoint failed'))
        : null;
    checkpoints?.start();
    const openFiles = new OpenFilesWatch(log);
    openFiles.check(); // the limit is read now: at the limit, its file cannot be opened
    const openFilesWatch = new Periodic(
      clock,
      OPEN_FILES_CHECK_MS,
      async () => openFiles.check(),
      () => undefined,
    );
    openFilesWatch.start();
    // A store fault is logged once by the store's health (OPERATIONS.md: one line, no stack).
    const audit = periodicPass(
      clock,
      config.auditIntervalMs,
      () => services.operations.audit(),
      passFailureLog(log, clock, 'audit pass failed'),
    );
    audit.start();
    const waitingCounts = periodicPass(
      clock,
      config.waitingCountRefreshMs,
      async () => guard.refresh(await store.countWaitingByTenant()),
      passFailureLog(log, clock, 'waiting-count refresh failed'),
    );
    if (guard.countsNeeded) waitingCounts.start();
    // Held low-priority tasks (overflow) are let in as the waiting depth falls (services/overflow-release.ts).
    const overflowRelease = periodicPass(
      clock,
      config.overflow.releaseIntervalMs,
      () => services.overflow.pass(),
      passFailureLog(log, clock, 'overflow release pass failed'),
    );
    overflowRelease.start();
    // Weights and limits changed through another member whose announcement was lost (limits-in-force.ts).
    const limitsSync = cluster
      ? periodicPass(clock, LIMITS_SYNC_MS, () => tenants.loadStored(), passFailureLog(log, clock, 'reading the stored limits failed'))
      : null;
    limitsSync?.start();
    const rt = runtime;
    const streamsRedis = redis;
    let closing: Promise<void> | null = null;
    return {
      config,
      store,
      service,
      crons,
      workflows,
      tenants,
      waiters: services.waiters,
      coordination: coord,
      pgCoordination,
      runtime: rt,
      app,
      apiActor,
      log,
      close: () =>
        (closing ??= (async () => {
          // New work is refused first (503 with Retry-After, /readyz 503), while HTTP stays up
          // through the drain: a client gets an answer to retry elsewhere, not a refused connection.
          service.stopAccepting();
          crons.stopAccepting();
          workflows.stopAccepting();
          // Long polls answer now with the current state: a 60 s wait never holds up the shutdown.
          await services.waiters.close();
          await maintenance.stop();
          await checkpoints?.stop();
          await audit.stop();
          await openFilesWatch.stop();
          await waitingCounts.stop();
          await overflowRelease.stop();
          await limitsSync?.stop();
          const { stillRunning, unwritten } = await rt.close(config.shutdownGraceMs);
          if (stillRunning > 0)
            log.warn({ stillRunning }, 'attempts still running at shutdown were ended as free retries (service_stopped); they run again');
          if (unwritten > 0)
            log.warn(
              { unwritten },
              'completions the store did not take are lost at shutdown; their attempts are recovered as lost (worker_lost, counted against max_retries) at the next start, or by another cluster member once their lease runs out',
            );
          // Every request has its answer by now: a connection still open after a short wait (an idle
          // client, a TLS handshake that never ends) must not hold the stop.
          const cut = await closeWithin(app, sockets, HTTP_CLOSE_BOUND_MS, clock);
          if (cut > 0) log.info({ connections: cut }, 'connections still open after the drain were closed');
          await streamsRedis?.quit().catch(() => streamsRedis.disconnect());
          await coord?.close();
          await pgCoordination?.close();
          await store.close();
          unlogHealth();
          lock?.release();
          // Spans still queued in the batch processor are exported before the process exits.
          await tracing?.shutdown().catch((err) => log.warn({ err }, 'exporting the last spans failed'));
        })()),
    };
  } catch (err) {
    await runtime?.close(0).catch(() => undefined);
    redis?.disconnect();
    await coordination?.close().catch(() => undefined);
    await pgCoordination?.close().catch(() => undefined);
    await store.close();
    unlogHealth();
    lock?.release();
    await tracing?.shutdown().catch(() => undefined);
    throw err;
  }
}
