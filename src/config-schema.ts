/**
 * The configuration's schema (zod): every key's shape and range, and the `Config` type the service
 * reads. Where values come from and in which order (files, environment, overrides) is config.ts.
 */
import { z } from 'zod';
import { PRIORITIES, RETRY_BACKOFFS } from './domain/task';
import { TENANT_ID_PATTERN, TENANT_ID_RULE } from './domain/tenant-id';
import { SCHEMA_NAME } from './storage/postgres/schema-name';

/**
 * A whole number, from JSON or from an environment variable's decimal digits (`PORT=8080`). Not
 * `z.coerce`: `Number()` also reads `0x4739`, `1e3`, `" 12 "` and `true`, so `PORT=0x4739`
 * listened on 18233 without a word.
 */
const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^-?[0-9]+$/.test(v) ? Number(v) : v),
    z.number({ invalid_type_error: 'must be a whole number written in decimal digits' }).int().min(min).max(max),
  );
/**
 * The longest delay a Node timer takes (2^31 − 1 ms, about 24.8 days): a longer one is cut to 1 ms
 * with a `TimeoutOverflowWarning` (Node's `setTimeout` docs), so an interval, grace or lease
 * configured longer would fire at once, again and again.
 */
export const MAX_TIMER_MS = 2_147_483_647;
/** A duration in ms used as a timer's delay: a whole number from `min` to {@link MAX_TIMER_MS}. */
const timerMs = (min: number, max = MAX_TIMER_MS) => int(min, max);
/** The API's bound on `timeout_seconds` and `max_retry_delay_seconds` (7 days; contract/task-schemas.ts). */
const WEEK_SECONDS = 604_800;
/** A token-bucket limit; burst 1 (the default) spaces starts evenly: at most `ratePerSecond` in any 1 s window. */
const rateLimit = z
  .object({ ratePerSecond: z.number().min(0.001).max(1_000_000), burst: z.number().int().min(1).max(1_000_000).default(1) })
  .strict();
/** A tenant id (domain/tenant-id.ts), as in `metadata.tenant_id`. */
const tenantId = z.string().regex(new RegExp(TENANT_ID_PATTERN), TENANT_ID_RULE);
/** A file path, or null for none. */
const fileOrNull = z.string().min(1).nullable();

/**
 * A string holding JSON (from an environment variable) is parsed; anything else is left to the
 * schema. Text that is not JSON is an issue naming the parser's complaint (not "expected array,
 * received string").
 */
function jsonText(v: unknown, ctx: z.RefinementCtx): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch (err) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: `is not valid JSON text: ${(err as Error).message}` });
    return z.NEVER;
  }
}

/** The highest port: a connection URL names a port from 1 to this (0 is none a client can connect to). */
const MAX_PORT = 65_535;

/**
 * What is wrong with `port` (the text after a host's `:`, perhaps empty), or null when it is a port
 * or absent. Not repeated in the message: a password with an unencoded "/" or "@" can be misread as a host and port.
 */
function portProblem(port: string | undefined): string | null {
  if (port === undefined || port === '') return null;
  const n = /^[0-9]+$/.test(port) ? Number(port) : NaN;
  return n >= 1 && n <= MAX_PORT ? null : `has a port that is not a whole number from 1 to ${MAX_PORT}`;
}

/** The port each host of `hosts` (`host:port`, `[ipv6]:port`, comma-separated) names: the first problem, or null. */
function hostsPortProblem(hosts: string): string | null {
  for (const host of hosts.split(',')) {
    const problem = portProblem(/^(?:\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(host)?.[1]);
    if (problem !== null) return problem;
  }
  return null;
}

/**
 * A connection URL (`redisUrl`, `postgresUrl`, `mongodbUri`), checked at load time as its driver
 * reads it, so that a value the driver would refuse (pg: a TypeError at start) or accept and fail
 * on at every reconnect (ioredis with port 99999: a RangeError and `degraded` for ever) stops
 * start-up with one line naming the key. The message never repeats the value (it may hold a
 * password).
 * @param schemes the URL schemes accepted, e.g. `['redis', 'rediss']`
 * @param parse `url`: the whole value must be a WHATWG URL (ioredis, pg; pg also takes an empty host
 *   after `user@`, as `postgres://user@/db`); `hosts`: a MongoDB connection string, whose host
 *   list (`h1:27017,h2:27017`) is no URL host, so only each host's port is checked here (the
 *   driver parses the rest when the store opens, also refused with exit 78 naming the key)
 */
const connectionUrl = (schemes: readonly string[], parse: 'url' | 'hosts') => {
  const rule = `must be a ${schemes.map((s) => `${s}://`).join(' or ')} URL`;
  const scheme = new RegExp(`^(?:${schemes.map((s) => s.replace('+', '\\+')).join('|')})://\\S+$`);
  return z.string().superRefine((v, ctx) => {
    const fail = (message: string) => ctx.addIssue({ code: z.ZodIssueCode.custom, message });
    if (!scheme.test(v)) return fail(rule);
    if (parse === 'hosts') {
      // The host list as the MongoDB driver finds it (mongodb-connection-string-url's HOSTS_REGEX).
      const hosts = /^[^/]+:\/\/(?:[^:@]*(?::[^@]*)?@)?((?!:)[^/?@]*)/.exec(v)?.[1] ?? '';
      const problem = hostsPortProblem(hosts);
      return problem === null ? undefined : fail(problem);
    }
    let url: URL | null = null;
    for (const text of [v, v.replace('@/', '@placeholder/')]) {
      try {
        url = new URL(text);
        break;
      } catch {
        // pg reads `postgres://user@/db` (no host: its default) by trying again with a placeholder host; ioredis reads it too (localhost).
      }
    }
    if (url === null) {
      // Userinfo ends at the last "@" before the path; the host is what follows, up to "/", "?" or "#".
      const host = /^[^:]+:\/\/(?:[^/?#]*@)?([^/?#@]*)/.exec(v)?.[1] ?? '';
      return fail(
        hostsPortProblem(host) ?? `${rule}, but is not a valid URL (are special characters in the user name or password percent-encoded?)`,
      );
    }
    const problem = portProblem(url.port);
    if (problem !== null) fail(problem);
  });
};

/** One worker pool of `workerPools`: its name (worker ids `<name>-worker-<n>`), its task types, its processes × concurrency. */
const workerPool = z
  .object({
    name: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,39}$/, 'must start with a lower-case letter and hold only a-z, 0-9, "-" and "_" (at most 40)'),
    taskTypes: z.array(z.string().min(1).max(200)).min(1),
    processes: int(1, 64),
    concurrency: int(1, 10_000),
  })
  .strict();

/** Pool names are unique and not `default` (the pool of every other type); a task type is pinned to one pool at most. */
function checkWorkerPools(pools: Array<z.infer<typeof workerPool>>, ctx: z.RefinementCtx): void {
  const names = new Set<string>(['default']);
  const pinned = new Map<string, string>();
  pools.forEach((p, i) => {
    if (names.has(p.name))
      ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${p.name}" is taken (pool names are unique; "default" is reserved)` });
    names.add(p.name);
    p.taskTypes.forEach((t, j) => {
      const other = pinned.get(t);
      if (other !== undefined)
        ctx.addIssue({ code: 'custom', path: [i, 'taskTypes', j], message: `"${t}" is already pinned to pool "${other}"` });
      pinned.set(t, p.name);
    });
  });
}

/**
 * Schema of the resolved configuration (docs/DESIGN.md §11). Every default lives in `config/default.json`;
 * this schema only checks shapes and ranges.
 */
export const ConfigSchema = z
  .object({
    port: int(0, 65535),
    host: z.string().min(1),
    store: z.enum(['sqlite', 'mongodb', 'postgres']),
    sqlitePath: z.string().min(1),
    /**
     * Create the SQLite file's directory when it is missing (env `SQLITE_CREATE_DIR`): `true`
     * always, `false` never (start-up refuses, exit 78: a missing directory is often a volume
     * that is not mounted), `null` (default) only for the default path {@link DEFAULT_SQLITE_PATH},
     * so `npm start` works on a fresh clone while an explicitly configured path is never created.
     */
    sqliteCreateDir: z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean().nullable()),
    /** MongoDB store (`store: "mongodb"`): `mongodb://host:port/db` or `mongodb+srv://…` (env `MONGODB_URI`). */
    mongodbUri: connectionUrl(['mongodb', 'mongodb+srv'], 'hosts').nullable(),
    /** PostgreSQL store (`store: "postgres"`): `postgres://user:pass@host:port/db` (env `POSTGRES_URL`). */
    postgresUrl: connectionUrl(['postgres', 'postgresql'], 'url').nullable().default(null),
    /**
     * PostgreSQL store: the schema its tables live in (created, with the tables, at start-up; env
     * `POSTGRES_SCHEMA`): lower-case letters, digits and `_`. Default `public`. Several clusters
     * (or tests) can share one database, each in its own schema.
     */
    postgresSchema: z
      .string()
      .regex(SCHEMA_NAME, 'must be lower-case letters, digits and _, not starting with a digit (at most 63)')
      .default('public'),
    /** Redis for cluster coordination (`redis://` or `rediss://`); null: embedded, no Redis. */
    redisUrl: connectionUrl(['redis', 'rediss'], 'url').nullable(),
    workers: int(1, 64),
    workerConcurrency: int(1, 10_000),
    partitions: int(1, 4096),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    /**
     * Where the service exports its spans (OpenTelemetry: one trace per task, with the submission,
     * queue-wait, attempt and external hand-off spans; docs/OPERATIONS.md "Tracing"): `none`
     * (default: nothing is recorded, no per-task cost), `console` (one JSON line per span on
     * stdout) or `otlp` (OTLP over HTTP to `otlpTracesEndpoint`). The service process and its
     * worker processes each export their own spans.
     */
    tracesExporter: z.enum(['none', 'console', 'otlp']),
    /** OTLP/HTTP traces URL; null: the exporter's default (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else localhost:4318). */
    otlpTracesEndpoint: z.string().url().nullable(),
    /**
     * Delay (ms) between two exports of the batch span processor (its `scheduledDelayMillis`;
     * env `OTEL_BSP_SCHEDULE_DELAY`). Spans still queued are exported at a graceful stop.
     */
    tracesExportDelayMs: int(1, 3_600_000),
    /**
     * task_type → handler module: a path relative to the config file that names it, an absolute
     * path, or a package name (docs/HANDLERS.md; located by `src/handlers/handler-module.ts`).
     */
    handlers: z.record(z.string().min(1)),
    /** How far ahead (ms) each partition owner keeps due tasks in memory. */
    horizonMs: timerMs(1000),
    /** Most tasks one partition owner holds in its window at once. */
    windowMaxTasks: int(10),
    /** Most tasks one partition owner may have handed to the dispatcher and not yet seen claimed. */
    ownerMaxOutstanding: int(1),
    /**
     * How long (ms) a due task handed to the dispatcher goes without its PENDING mark: marked
     * between this and twice this after the hand-out if the dispatcher still holds it; a task
     * claimed sooner is never marked (its claim is due and claim in one write). 0: marked at once.
     */
    dueMarkDelayMs: int(0, 60_000),
    /**
     * Embedded mode: how far ahead of their due time (ms) tasks are handed to the dispatcher and
     * claimed, so that a herd due at one instant needs no claim write at the instant: the
     * dispatcher holds each claimed attempt and sends it to a worker at its due time, never
     * earlier. Tasks with a concurrency key, under a rate limit or of an external queue are not
     * claimed ahead. 0: no task is handed out before its due time. Cluster mode never claims ahead.
     */
    claimAheadMs: int(0, 60_000),
    /** Most tasks in one claim (the claims answered together for a worker go to it as one `run` message). */
    workerBatchMax: int(1),
    bodyLimitBytes: int(1024),
    batchMaxTasks: int(1, 100_000),
    /**
     * Grace (ms) after an attempt's timeout before its worker process is killed: the handler's
     * signal fires at the timeout; a handler that has not returned by then is stuck.
     */
    timeoutGraceMs: timerMs(0),
    /**
     * Attempt lease (ms): a RUNNING attempt whose worker sends no heartbeat for this long is lost
     * (retried as `worker_lost`). Workers heartbeat every third of it while attempts run.
     */
    leaseMs: timerMs(1000),
    /**
     * Cluster mode (store `mongodb`): TTL (ms) of this member's record and of its partition leases.
     * Renewed every third of it; a dead member's partitions move to the others within about one TTL.
     */
    leaseTtlMs: int(300, 3_600_000),
    /** Cluster mode: this process's member id (null: `<hostname>-<pid>-<random>`, new at each start). */
    memberId: z.string().min(1).max(200).nullable(),
    /** A waiting task this long (ms) past its due time is reported (and re-offered) by the audit. */
    auditOverdueMs: int(1000),
    /** Interval of the audit reconciler (ms). */
    auditIntervalMs: timerMs(1000),
    /** How long a worker process may take to start and answer its first hello (ms). */
    workerStartTimeoutMs: timerMs(1000),
    /** Supervision ping interval (ms): a worker answering with a new pid was respawned. */
    workerPingMs: timerMs(50),
    /** How long an idempotency key is held after its task was submitted (ms; default 24 h). */
    idempotencyRetentionMs: int(1000),
    /**
     * How long a graceful stop waits (ms) for running attempts; those still running then are recorded
     * as free retries (`service_stopped`) and run again after the restart or on another node.
     */
    shutdownGraceMs: timerMs(0),
    /** Largest task payload accepted, as JSON text (bytes; larger → 413 `PAYLOAD_TOO_LARGE`). */
    maxPayloadBytes: int(2),
    /** Largest task metadata accepted, as JSON text (bytes; larger → 413 `PAYLOAD_TOO_LARGE`). */
    maxMetadataBytes: int(2),
    /** Largest handler result stored, as JSON text (bytes; larger → the attempt fails `result_too_large`). */
    maxResultBytes: int(4),
    /** How long finished tasks (SUCCEEDED, FAILED, DEAD, CANCELLED) are kept after completion (ms; default 7 days). */
    resultRetentionMs: int(1000),
    /** How often the maintenance pass purges expired tasks and idempotency keys (ms). */
    maintenanceIntervalMs: timerMs(1000),
    /** How far ahead (ms) the cron evaluator keeps due definitions in memory (reloaded every half of it). */
    cronHorizonMs: timerMs(1000),
    /** Most cron definitions the evaluator holds in its window at once. */
    cronWindowMax: int(1),
    /**
     * A fire time at most this late (ms) when the evaluator reaches it fires normally; later ones
     * were missed (downtime) and follow the definition's `catch_up`.
     */
    cronMisfireGraceMs: int(100),
    /** A ready task waiting this long (ms since due) competes as `high` (priority aging). */
    priorityAgingMs: int(1),
    /** Per tenant: weight in the round-robin between tenants (default 1) and a limit on its starts. */
    tenants: z.record(
      tenantId,
      z
        .object({
          /** As `PUT /api/v1/tenants/{id}` accepts it (contract/tenant-schemas.ts): 0.001 to 1,000,000. */
          weight: z.number().min(0.001).max(1_000_000).optional(),
          rateLimit: rateLimit.optional(),
          submitRateLimit: rateLimit.optional(),
          maxWaiting: int(1).optional(),
        })
        .strict(),
    ),
    /** Submissions per second each tenant may make (429 above; null: no limit). */
    submitRateLimit: rateLimit.nullable(),
    /** Most waiting tasks in all (503 `OVERLOADED` at the cap, low priority refused from 80 %; null: no cap). */
    maxWaitingTasks: int(1).nullable(),
    /** Most waiting tasks per tenant (same rules; null: no cap). */
    maxWaitingPerTenant: int(1).nullable(),
    /** How often (ms) the waiting counts are read exactly from the store while a cap is set. */
    waitingCountRefreshMs: timerMs(100),
    /**
     * Priority shedding into an overflow hold (the specification's backpressure layer 4). Off by
     * default: a held task may wait long past its `scheduled_at`, which a client that gets 202 does
     * not expect unless the operator chose it (env OVERFLOW_ENABLED). When on, a low-priority
     * submission over its shedding threshold (80 % of a cap) is stored OVERFLOW (202) instead of
     * refused, while fewer than `maxTasks` are held; it is released oldest first, every
     * `releaseIntervalMs` (at most `releaseBatch` a pass), once the waiting depth is under
     * `lowWaterMark` × the cap (global and its tenant's). At a cap itself every priority is refused (503).
     */
    overflow: z
      .object({
        enabled: z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean()),
        lowWaterMark: z.number().gt(0).max(0.8, 'must be at most 0.8 (the low-priority shedding threshold)'),
        maxTasks: int(1),
        releaseIntervalMs: timerMs(10),
        releaseBatch: int(1, 100_000),
      })
      .strict(),
    /** API keys (SHA-256 of each key, hex) and the tenant each acts for, or admin. None: the API is open. */
    apiKeys: z
      .array(
        z
          .object({
            sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be the SHA-256 of the key, 64 hex digits'),
            tenant: tenantId.optional(),
            admin: z.boolean().optional(),
            name: z.string().optional(),
          })
          .strict()
          .refine((k) => k.admin === true || k.tenant !== undefined, 'needs "tenant" or "admin": true')
          // Both would make a tenant's key an admin's without saying so.
          .refine((k) => !(k.admin === true && k.tenant !== undefined), 'has both "tenant" and "admin": true; give one'),
      )
      // One key, one role: a hash listed twice (in any case) would take the role of its last entry.
      .superRefine((keys, ctx) => {
        const seen = new Map<string, number>();
        keys.forEach((k, i) => {
          const first = seen.get(k.sha256.toLowerCase());
          if (first !== undefined)
            ctx.addIssue({ code: 'custom', path: [i, 'sha256'], message: `is the same key as apiKeys[${first}]; list each key once` });
          else seen.set(k.sha256.toLowerCase(), i);
        });
      }),
    /**
     * HTTPS (docs/OPERATIONS.md "HTTPS"): with `certFile` and `keyFile` (PEM; env TLS_CERT_FILE,
     * TLS_KEY_FILE) the service serves HTTPS only, on the same HOST and PORT. `caFile` (PEM, env
     * TLS_CA_FILE): clients must present a certificate issued by one of its CAs (mutual TLS).
     * All null (the default): plain HTTP. Files are read at start-up; a missing or bad one stops it.
     */
    tls: z
      .object({ certFile: fileOrNull, keyFile: fileOrNull, caFile: fileOrNull })
      .strict()
      .refine(
        (t) => (t.certFile === null) === (t.keyFile === null),
        'certFile (env TLS_CERT_FILE) and keyFile (env TLS_KEY_FILE) go together',
      )
      .refine((t) => t.caFile === null || t.certFile !== null, 'caFile (env TLS_CA_FILE) needs certFile and keyFile'),
    /** Serve without API keys on a non-loopback HOST (env ALLOW_UNAUTHENTICATED=true). */
    allowUnauthenticated: z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean()),
    /** Per task type: a token-bucket limit on starts. */
    rateLimits: z.record(rateLimit),
    /**
     * External queues (docs/DESIGN.md §6; docs/EXTERNAL-QUEUES.md): queue name → where its tasks go instead of the forked
     * workers. The dispatcher claims them as usual and appends one entry per attempt to the Redis
     * stream `stream` (default `scheduler:queue:<name>`); consumers read it with XREADGROUP in the
     * consumer group `group` (default `scheduler`) and report with
     * `POST /api/v1/tasks/{id}/complete`. `leaseMs`: how long an attempt may run without a
     * completion or heartbeat before it is retried (default: the top-level `leaseMs`).
     * `maxInFlight`: most attempts of the queue out in the stream at once (default 1000), so the
     * stream never grows without bound. Needs `redisUrl` (checked at start).
     * `transport: "http"` makes it a pull queue instead (docs/API.md "HTTP pull workers"): workers
     * lease its tasks with `POST /api/v1/queues/{queue}/lease`; no Redis, no `stream` or `group`.
     */
    externalQueues: z.record(
      z.string().min(1).max(200),
      z
        .object({
          transport: z.enum(['stream', 'http']).optional(),
          stream: z.string().min(1).max(1000).optional(),
          group: z.string().min(1).max(200).optional(),
          leaseMs: timerMs(100).optional(),
          maxInFlight: int(1, 1_000_000).optional(),
        })
        .strict()
        .refine((q) => q.transport !== 'http' || (q.stream === undefined && q.group === undefined), {
          message: 'stream and group are settings of a Redis stream queue, not of transport "http" (a pull queue)',
        }),
    ),
    /**
     * Worker pools of their own for some task types (docs/OPERATIONS.md "Worker pools"): each pool
     * is `processes` forked worker processes running up to `concurrency` attempts each, and its
     * `taskTypes` run only there, so a CPU-heavy or runaway handler cannot hold up the others. Every
     * type not named here runs in the default pool (`workers` × `workerConcurrency`). Env
     * `WORKER_POOLS` takes the same array as JSON text.
     */
    workerPools: z.preprocess(jsonText, z.array(workerPool).max(16).superRefine(checkWorkerPools)),
    /** Most tasks in one workflow (more → 413 `WORKFLOW_TOO_LARGE`). */
    workflowMaxTasks: int(1, 1_000_000),
    /**
     * Most dependencies in one workflow, all its tasks' `dependencies` counted (more → 413
     * `WORKFLOW_TOO_LARGE`, `details.limit` `dependencies`): a read of a workflow lists every one,
     * on the main thread (1,000,000 took about 2 s, 100,000 about 0.25 s, on 2026-12-07).
     */
    workflowMaxDependencies: int(1, 10_000_000),
    /** Largest `POST /api/v1/workflows` body in bytes (a 10,000-task DAG is about 1 MiB of JSON). */
    workflowBodyLimitBytes: int(1024),
    /**
     * Long polls (`GET /api/v1/tasks/{id}?wait=`, the same for workflows; docs/API.md "Waiting for
     * a result"): at most `maxWaiters` held by a node at once (one more → 429 `TOO_MANY_WAITERS`),
     * and every `recheckMs` the ids waited on are read in one batch, which finds the ends this node
     * is not told about (another node's, tasks cancelled by their workflow or upstream).
     */
    waits: z.object({ maxWaiters: int(1, 1_000_000), recheckMs: int(10, 60_000) }).strict(),
    defaults: z
      .object({
        priority: z.enum(PRIORITIES),
        maxRetries: int(0, 1000),
        retryBackoff: z.enum(RETRY_BACKOFFS),
        retryDelaySeconds: z.coerce.number().min(0).max(86_400),
        maxRetryDelaySeconds: z.coerce.number().min(0).max(WEEK_SECONDS),
        timeoutSeconds: z.coerce.number().min(0.001).max(WEEK_SECONDS),
        queue: z.string().min(1),
        tenantId,
      })
      .strict(),
  })
  .strict();

export type Config = Readonly<
  z.infer<typeof ConfigSchema> & {
    /**
     * Not a setting: for each `handlers` entry, the folder its module path is resolved against (that
     * of the config file it came from; the working directory for `overrides`). Filled by
     * {@link loadConfig}; absent or missing a type: the working directory.
     */
    handlerDirs?: Readonly<Record<string, string>>;
  }
>;
