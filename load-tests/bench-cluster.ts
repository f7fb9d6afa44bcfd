/**
 * Cluster-mode benchmark (issue 7): end-to-end throughput and dispatch lag of the real service
 * (`node dist/src/main.js`) on the embedded store (SQLite, 1 process), on the MongoDB-wire store
 * with 1 process, and with 3 processes sharing one database (tasks submitted round-robin); then
 * the failover run: 3 processes, `--failover-tasks` side-effect tasks, one process SIGKILLed (with
 * its workers) once a third of them ran, while the submission goes on to the survivors; prints the lease take-over time, the time until the
 * survivors' owners run every partition, and the counts (SUCCEEDED, side effects, re-runs).
 *
 * Needs MONGODB_URI for the MongoDB runs (a MongoDB replica set, or FerretDB: `export
 * CI_REDIS_PORT=… CI_FERRETDB_PORT=…; source .ci/services.sh`); each run uses a fresh database
 * `cluster_<random>` on that server, dropped afterwards. Without MONGODB_URI only the embedded run
 * happens. With CLUSTER_STORE=postgres the cluster runs use PostgreSQL instead (POSTGRES_URL, a
 * fresh schema per run; test/helpers/cluster-store.ts). With REDIS_URL set, the cluster processes get it (Redis coordination: a task submitted on
 * a non-owner wakes its owner at once); without it they run without Redis (the owner finds such a
 * task at its next window read, horizonMs / 2). Speed is reported, never asserted: exit 0 when the runs went to the end, 1 on failure.
 *
 * Defaults keep a FerretDB run near a minute; the issue's failover figure is `--failover-tasks 20000`
 * (about 11 minutes on FerretDB's PostgreSQL backend on 2 cores, see load-tests/README.md).
 *
 * Usage: npm run bench:cluster   (= npm run build && node dist/load-tests/bench-cluster.js)
 *        node dist/load-tests/bench-cluster.js [--tasks 200] [--failover-tasks 200] [--lease-ttl-ms 6000]
 *          [--attempt-lease-ms 5000] [--timeout 600] [--handler side-effect|noop|sleep] [--sleep-ms 20]
 *          [--stores sqlite,postgres,mongodb] [--nodes 1,3] [--batch 100] [--submitters 1]
 *          [--workers 2] [--worker-concurrency 1024]
 *        (attempt lease of the failover run: the dead member's attempts are retried after it;
 *        `--failover-tasks 0` skips it)
 *
 * `--handler`: the throughput runs' task type: `side-effect` (default: a handler module appending
 * a line to a file per run), the built-in `noop`, or the built-in `sleep` with `{ms: --sleep-ms}`
 * (I/O-bound: every node has the same worker slots, so three nodes have three times the slots).
 * `--stores` runs the embedded store and each named cluster store side by side in one run (each
 * cluster store's runs set CLUSTER_STORE for that store); default: `sqlite` and CLUSTER_STORE's.
 * `--batch` tasks per submission request, `--submitters` requests in flight.
 *
 * Throughput = tasks / (first submission → last SUCCEEDED, from the tasks' own timestamps);
 * dispatch lag = started_at − due_at of every task (due_at = submission time for immediate tasks).
 * Writes the report to load-tests/results/cluster-latest.json and prints it as JSON.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { distribution, Distribution, round } from './bench/stats';
import { machineInfo } from './bench/results-file';
import { http } from '../test/helpers/http';
import { startServiceProcess } from '../test/helpers/service-process';
import { tempDir } from '../test/helpers/temp-dir';
import {
  Cluster,
  listByStatus,
  metricSum,
  ownedCount,
  readSideEffects,
  sideEffectHandlerSource,
  startCluster,
  until,
  untilBalanced,
} from '../test/helpers/cluster-processes';
import { ClusterDatabase, clusterStoreKind, clusterStoreMissing, StoredLease } from '../test/helpers/cluster-store';

const TASK_TYPE = 'bench_side_effect';
const BATCH = 100;

/** What the throughput runs submit (`--handler`, `--sleep-ms`, `--batch`, `--submitters`). */
interface Load {
  handler: 'side-effect' | 'noop' | 'sleep';
  sleepMs: number;
  batch: number;
  submitters: number;
}

/** The task type and payload of task `i` of a throughput run. */
function loadTask(load: Load, i: number): Record<string, unknown> {
  if (load.handler === 'noop') return { task_type: 'noop', payload: { n: i } };
  if (load.handler === 'sleep') return { task_type: 'sleep', payload: { ms: load.sleepMs, n: i } };
  return { task_type: TASK_TYPE, payload: { n: i } };
}

interface Endpoint {
  url: string;
}

interface ThroughputResult {
  store: string;
  nodes: number;
  /** The processes had REDIS_URL (pub/sub wake-ups of a partition's owner, shared clock and limits). */
  redis: boolean;
  tasks: number;
  /** The task type run (`--handler`): side-effect, noop or sleep (with its ms). */
  handler: string;
  submit_ms: number;
  end_to_end_ms: number;
  tasks_per_s: number | null;
  /** From each task's final attempt: a retry's `due_at` is its retry time, so a retry looks on time here. */
  dispatch_lag: Distribution;
  /** Tasks that ran more than one attempt (the dispatch lag does not show them; the end-to-end time does). */
  retried: number;
}

/** Batch `b` of `n` side-effect tasks (task `i` has payload `{n: i}`; with `keyed`, the idempotency key `failover-<i>`). */
function batchOf(b: number, n: number, keyed: boolean): Array<Record<string, unknown>> {
  return Array.from({ length: Math.min(BATCH, n - b * BATCH) }, (_, i) => ({
    task_type: TASK_TYPE,
    payload: { n: b * BATCH + i },
    ...(keyed ? { idempotency_key: `failover-${b * BATCH + i}` } : {}),
  }));
}

/**
 * Submits `n` tasks of `load` in batches of `load.batch` round-robin over `targets`, with
 * `load.submitters` requests in flight; returns the ids.
 */
async function submit(targets: Endpoint[], n: number, load: Load): Promise<string[]> {
  const ids: string[][] = [];
  let next = 0;
  const submitter = async () => {
    for (let b = next++; b * load.batch < n; b = next++) {
      const from = b * load.batch;
      const tasks = Array.from({ length: Math.min(load.batch, n - from) }, (_, i) => loadTask(load, from + i));
      const res = await http('POST', `${targets[b % targets.length].url}/api/v1/tasks/batch`, { tasks });
      if (res.status !== 202) throw new Error(`batch answered ${res.status}: ${JSON.stringify(res.body)}`);
      ids[b] = res.body.tasks.map((t: { task_id: string }) => t.task_id);
    }
  };
  await Promise.all(Array.from({ length: load.submitters }, submitter));
  return ids.flat();
}

/**
 * The failover run's submitter: like `submit`, but each batch goes to the next of `targets()` as
 * it is at that moment (the run takes the victim out before killing it), and every task carries
 * the idempotency key `failover-<n>`. A batch whose request fails (the victim died under it, its
 * tasks possibly stored) is sent again to the next target: the keys make the repeat answer with
 * the tasks already stored instead of storing them twice. `acked` counts the tasks acknowledged.
 */
function submitThroughFailover(targets: () => Endpoint[], n: number): { acked: () => number; done: Promise<string[]> } {
  const ids: string[] = [];
  const done = (async () => {
    for (let b = 0; b * BATCH < n; b++) {
      const tasks = batchOf(b, n, true);
      for (let tries = 0; ; tries++) {
        const live = targets();
        const res = await http('POST', `${live[(b + tries) % live.length].url}/api/v1/tasks/batch`, { tasks }).catch((err: Error) => ({
          status: 0,
          body: String(err),
        }));
        if (res.status === 200 || res.status === 202) {
          ids.push(...res.body.tasks.map((t: { task_id: string }) => t.task_id));
          break;
        }
        if (tries >= 5) throw new Error(`batch ${b} answered ${res.status}: ${JSON.stringify(res.body)}`);
      }
    }
    return ids;
  })();
  return { acked: () => ids.length, done };
}

/**
 * Waits until `n` tasks are SUCCEEDED. With `db` (a cluster's database) it counts them there: the
 * service's `scheduler_tasks` gauge is a sampled count whose age grows with the count's duration
 * (SampledRead's duty cycle), minutes on FerretDB holding 20,000 tasks. Without, it reads the gauge
 * (the embedded store counts in milliseconds, so the gauge stays current).
 */
async function drained(url: string, n: number, timeoutMs: number, db?: ClusterDatabase): Promise<void> {
  if (db === undefined) {
    await until(
      `${n} tasks SUCCEEDED`,
      async () => ((await metricSum({ url } as never, 'scheduler_tasks\\{state="SUCCEEDED"\\}')) >= n ? true : undefined),
      timeoutMs,
      250,
    );
    return;
  }
  const reader = await db.connect();
  try {
    await until(`${n} tasks SUCCEEDED`, async () => ((await reader.countTasks('SUCCEEDED')) >= n ? true : undefined), timeoutMs, 250);
  } finally {
    await reader.close();
  }
}

/** Reads every task back and measures end-to-end time and dispatch lag from its timestamps. */
async function measure(url: string, ids: string[], store: string, nodes: number, submitMs: number, load: Load): Promise<ThroughputResult> {
  const lags: number[] = [];
  let retried = 0;
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < ids.length; i += 16) {
    const tasks = await Promise.all(ids.slice(i, i + 16).map(async (id) => (await http('GET', `${url}/api/v1/tasks/${id}`)).body));
    for (const t of tasks) {
      lags.push(Date.parse(t.started_at) - Date.parse(t.due_at));
      if (t.attempts > 1) retried++;
      first = Math.min(first, Date.parse(t.created_at));
      last = Math.max(last, Date.parse(t.completed_at));
    }
  }
  const e2e = last - first;
  return {
    store,
    nodes,
    redis: store !== 'sqlite' && redisEnv().REDIS_URL !== '',
    tasks: ids.length,
    handler: load.handler === 'sleep' ? `sleep ${load.sleepMs} ms` : load.handler,
    submit_ms: submitMs,
    end_to_end_ms: e2e,
    tasks_per_s: round((ids.length * 1000) / e2e),
    dispatch_lag: distribution(lags),
    retried,
  };
}

/** REDIS_URL for the cluster processes: the benchmark's own, or none (the service-process helper clears it). */
function redisEnv(): { REDIS_URL: string } {
  return { REDIS_URL: process.env.REDIS_URL ?? '' };
}

function handlerConfig(scratch: string): Record<string, unknown> {
  const handler = path.join(scratch, 'handler.js');
  fs.writeFileSync(handler, sideEffectHandlerSource(path.join(scratch, 'side-effects.log')));
  return { handlers: { [TASK_TYPE]: handler } };
}

async function embeddedRun(tasks: number, timeoutMs: number, load: Load, slots: Record<string, string>): Promise<ThroughputResult> {
  const dir = tempDir('bench-cluster-');
  const file = path.join(dir.path, 'config.json');
  fs.writeFileSync(file, JSON.stringify(handlerConfig(dir.path)));
  const svc = await startServiceProcess(dir.path, { SCHEDULER_CONFIG: file, LOG_LEVEL: 'warn', ...slots }, 30_000);
  try {
    const t0 = Date.now();
    const ids = await submit([svc], tasks, load);
    const submitMs = Date.now() - t0;
    await drained(svc.url, tasks, timeoutMs);
    return await measure(svc.url, ids, 'sqlite', 1, submitMs, load);
  } finally {
    await svc.stop();
    dir.remove();
  }
}

/** Clusters running now: a SIGINT or SIGTERM of the benchmark kills their processes (see reapOnSignal). */
const running = new Set<Cluster>();

/**
 * On SIGINT or SIGTERM, SIGKILLs every service process of the running clusters and their workers,
 * then exits 130. Without it, an interrupted run left its services running; they reconnected to
 * the next FerretDB started on the same port and loaded it.
 */
function reapOnSignal(): void {
  const reap = () => {
    for (const cluster of running) {
      for (const node of cluster.nodes) {
        for (const pid of [...node.svc.workerPids(), node.svc.child.pid ?? 0]) {
          try {
            if (pid > 0) process.kill(pid, 'SIGKILL');
          } catch {
            /* already gone */
          }
        }
      }
    }
    process.exit(130);
  };
  process.once('SIGINT', reap);
  process.once('SIGTERM', reap);
}

/** startCluster, tracked in `running` until its stop. */
async function trackedCluster(o: Parameters<typeof startCluster>[0]): Promise<Cluster> {
  const cluster = await startCluster(o);
  running.add(cluster);
  const stop = cluster.stop.bind(cluster);
  cluster.stop = async () => {
    try {
      await stop();
    } finally {
      running.delete(cluster);
    }
  };
  return cluster;
}

async function clusterRun(
  nodes: number,
  tasks: number,
  ttl: number,
  timeoutMs: number,
  load: Load,
  slots: Record<string, string>,
): Promise<ThroughputResult> {
  const cluster = await trackedCluster({
    nodes,
    leaseTtlMs: ttl,
    partitions: 12,
    configIn: handlerConfig,
    env: { ...redisEnv(), ...slots },
  });
  try {
    // Every node holds its rendezvous share before the clock starts: a sum of 12 alone was reached
    // while the first node still held the joiners' partitions, before the hand-overs.
    await untilBalanced(cluster.nodes, 12);
    const t0 = Date.now();
    const ids = await submit(
      cluster.nodes.map((n) => n.svc),
      tasks,
      load,
    );
    const submitMs = Date.now() - t0;
    await drained(cluster.nodes[0].svc.url, tasks, timeoutMs, cluster.db);
    return await measure(cluster.nodes[0].svc.url, ids, cluster.db.kind, nodes, submitMs, load);
  } finally {
    await cluster.stop();
  }
}

async function failoverRun(tasks: number, ttl: number, attemptLeaseMs: number, timeoutMs: number): Promise<Record<string, unknown>> {
  const cluster: Cluster = await trackedCluster({
    nodes: 3,
    leaseTtlMs: ttl,
    partitions: 12,
    configIn: handlerConfig,
    config: { leaseMs: attemptLeaseMs },
    env: redisEnv(),
  });
  const log = path.join(cluster.scratch, 'side-effects.log');
  const lines = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').length - 1 : 0);
  try {
    const victim = cluster.nodes[2];
    const survivors = cluster.nodes.slice(0, 2);
    let targets: Endpoint[] = cluster.nodes.map((n) => n.svc);
    const submission = submitThroughFailover(() => targets, tasks);
    // Kill mid-run: submission goes on (to the survivors) while the victim dies.
    const third = until('a third of the side effects', async () => (lines() >= tasks / 3 ? true : undefined), timeoutMs, 20);
    await Promise.race([third, submission.done.then(() => third)]);
    targets = survivors.map((n) => n.svc);
    const before = await cluster.db.readLeases();
    const lost = [...before].filter(([, l]) => l.owner === victim.memberId).map(([p]) => p);
    const workers = victim.svc.workerPids();
    const atKill = lines();
    const ackedAtKill = submission.acked();
    const killedAt = Date.now();
    await victim.svc.kill9();
    for (const pid of workers) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone with its parent */
      }
    }
    // The victim's leases as it left them (it renews no more): they expire at their expires_at.
    const atDeath = await cluster.db.readLeases();
    const expiresAt = Math.max(...lost.map((p) => (atDeath.get(p)?.owner === victim.memberId ? atDeath.get(p)!.expiresAt : 0)));
    const takeoverMs = await pollLeases(cluster.db, 10 * ttl, (now) =>
      lost.every((p) => now.get(p)?.owner !== victim.memberId && (now.get(p)?.epoch ?? 0) > (before.get(p)?.epoch ?? 0))
        ? Date.now() - killedAt
        : undefined,
    );
    const ownersMs = await until(
      'owners running',
      async () => {
        const counts = await Promise.all(survivors.map((n) => ownedCount(n.svc)));
        return counts.reduce((s, x) => s + x, 0) === 12 ? Date.now() - killedAt : undefined;
      },
      20 * ttl,
      20,
    );
    const ids = await submission.done;
    const t0 = Date.now();
    await drained(survivors[0].svc.url, tasks, timeoutMs, cluster.db);
    const drainMs = Date.now() - t0;
    const survivorLeaseLosses = (await Promise.all(survivors.map((n) => metricSum(n.svc, 'scheduler_lease_losses_total')))).reduce(
      (a, b) => a + b,
      0,
    );
    const succeeded = await listByStatus(survivors[0].svc.url, 'SUCCEEDED', TASK_TYPE);
    const { lines: effects, torn } = readSideEffects(log);
    const byId = new Map<string, number>();
    for (const l of effects) byId.set(l.id, (byId.get(l.id) ?? 0) + 1);
    const finalRuns = ids.filter((id) => effects.filter((l) => l.id === id && l.attempt === succeeded.get(id)).length === 1).length;
    return {
      tasks,
      redis: redisEnv().REDIS_URL !== '',
      lease_ttl_ms: ttl,
      attempt_lease_ms: attemptLeaseMs,
      killed: victim.memberId,
      partitions_lost: lost.length,
      side_effects_at_kill: atKill,
      /** Tasks acknowledged when the victim was killed (the rest went to the survivors). */
      submitted_at_kill: ackedAtKill,
      lease_takeover_ms: takeoverMs,
      /** When the victim's last lease expired, from the kill (≤ TTL: its last renewal preceded the kill). */
      leases_expired_after_kill_ms: expiresAt > 0 ? expiresAt - killedAt : null,
      /** Take-over after that expiry: the survivors' reaction time (wake at expiry, grant, fence). */
      takeover_after_expiry_ms: expiresAt > 0 ? takeoverMs - (expiresAt - killedAt) : null,
      owners_running_ms: ownersMs,
      drain_after_owners_ms: drainMs,
      /** Leases the survivors lost themselves (renewal rounds too slow for the TTL): churn. */
      survivor_lease_losses: survivorLeaseLosses,
      succeeded: succeeded.size,
      side_effect_lines: effects.length,
      tasks_run_more_than_once: [...byId.values()].filter((n) => n > 1).length,
      tasks_with_one_final_completion: finalRuns,
      extra_runs_from_killed_member: effects.filter((l) => l.member === victim.memberId && l.attempt !== succeeded.get(l.id)).length,
      torn_lines: torn.length,
    };
  } finally {
    await cluster.stop();
  }
}

/**
 * Polls the lease documents through one connection every 20 ms until `check` returns a value
 * (a fresh connection per poll would add its handshake to the measured time).
 * @throws Error after `timeoutMs`
 */
async function pollLeases<T>(
  db: ClusterDatabase,
  timeoutMs: number,
  check: (leases: Map<number, StoredLease>) => T | undefined,
): Promise<T> {
  const reader = await db.connect();
  try {
    return await until('lease take-over', async () => check(await reader.leases()), timeoutMs, 20);
  } finally {
    await reader.close();
  }
}

async function main(): Promise<number> {
  reapOnSignal();
  const { values } = parseArgs({
    options: {
      tasks: { type: 'string', default: '200' },
      'failover-tasks': { type: 'string', default: '200' },
      'lease-ttl-ms': { type: 'string', default: '6000' },
      'attempt-lease-ms': { type: 'string', default: '5000' },
      timeout: { type: 'string', default: '600' },
      handler: { type: 'string', default: 'side-effect' },
      'sleep-ms': { type: 'string', default: '20' },
      stores: { type: 'string' },
      nodes: { type: 'string', default: '1,3' },
      batch: { type: 'string', default: String(BATCH) },
      submitters: { type: 'string', default: '1' },
      workers: { type: 'string', default: '2' },
      'worker-concurrency': { type: 'string', default: '1024' },
    },
  });
  const tasks = Number(values.tasks);
  const failoverTasks = Number(values['failover-tasks']);
  const ttl = Number(values['lease-ttl-ms']);
  const attemptLeaseMs = Number(values['attempt-lease-ms']);
  const timeoutMs = Number(values.timeout) * 1000;
  const load: Load = {
    handler: values.handler as Load['handler'],
    sleepMs: Number(values['sleep-ms']),
    batch: Number(values.batch),
    submitters: Number(values.submitters),
  };
  const nodeCounts = values.nodes.split(',').map(Number);
  if (
    ![tasks, ttl, attemptLeaseMs, timeoutMs, load.batch, load.submitters, ...nodeCounts].every((n) => Number.isInteger(n) && n > 0) ||
    !(Number.isInteger(failoverTasks) && failoverTasks >= 0) ||
    !['side-effect', 'noop', 'sleep'].includes(load.handler) ||
    !(Number.isInteger(load.sleepMs) && load.sleepMs >= 0)
  ) {
    process.stderr.write(
      '--tasks, --lease-ttl-ms, --timeout, --batch, --submitters and --nodes must be positive integers, --failover-tasks and --sleep-ms ≥ 0, --handler side-effect|noop|sleep\n',
    );
    return 2;
  }
  // Same worker slots on every node (and on the embedded service): WORKERS × WORKER_CONCURRENCY,
  // by default the service's own 2 × 1024 (the processes run with NODE_ENV=test, whose profile
  // config/test.json has 2 × 16: 32 slots capped one node at ~1,100-2,000 noop tasks/s on PostgreSQL).
  const slots: Record<string, string> = { WORKERS: values.workers, WORKER_CONCURRENCY: values['worker-concurrency'] };
  const stores = (values.stores ?? `sqlite,${clusterStoreKind()}`).split(',').map((x) => x.trim());
  const report: Record<string, unknown> = {
    at: new Date().toISOString(),
    machine: machineInfo(),
    load,
    slots,
    throughput: [] as ThroughputResult[],
  };
  const runs = report.throughput as ThroughputResult[];
  const failures: Array<{ store: string; nodes: number; error: string }> = [];
  report.failures = failures;
  const say = (s: string) => process.stderr.write(`[bench-cluster] ${s}\n`);
  for (const store of stores) {
    if (store === 'sqlite') {
      say(`embedded (sqlite), 1 node, ${tasks} tasks`);
      runs.push(await embeddedRun(tasks, timeoutMs, load, slots));
      continue;
    }
    process.env.CLUSTER_STORE = store;
    const missing = clusterStoreMissing();
    if (missing) {
      say(`${store} runs skipped: ${missing}`);
      continue;
    }
    for (const nodes of nodeCounts) {
      say(`${store}, ${nodes} node(s), ${tasks} tasks`);
      try {
        runs.push(await clusterRun(nodes, tasks, ttl, timeoutMs, load, slots));
      } catch (err) {
        // One store's failure (a slow FerretDB past a bound) leaves the other stores' figures.
        say(`${store} ×${nodes} failed: ${err instanceof Error ? err.message : String(err)}`);
        failures.push({ store, nodes, error: err instanceof Error ? err.message : String(err) });
      }
    }
    if (failoverTasks > 0) {
      say(`failover: 3 nodes, ${failoverTasks} tasks, SIGKILL one`);
      report[`failover_${store}`] = await failoverRun(failoverTasks, ttl, attemptLeaseMs, timeoutMs);
    }
  }
  for (const r of runs)
    say(
      `${r.store} ×${r.nodes}${r.redis ? ' (redis)' : ''} ${r.handler}: ${r.tasks_per_s} tasks/s end to end (submit ${r.submit_ms} ms), dispatch lag p50 ${r.dispatch_lag.p50_ms} ms p99 ${r.dispatch_lag.p99_ms} ms, ${r.retried} retried`,
    );
  for (const store of stores) if (report[`failover_${store}`]) say(`failover ${store}: ${JSON.stringify(report[`failover_${store}`])}`);
  const out = path.resolve(__dirname, '..', '..', 'load-tests', 'results');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'cluster-latest.json'), JSON.stringify(report, null, 2));
  process.stdout.write(`${JSON.stringify(report)}\n`);
  return failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench-cluster failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
