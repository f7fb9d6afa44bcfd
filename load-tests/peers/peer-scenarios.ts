/**
 * The three scenarios on a peer (BullMQ, Agenda, graphile-worker, pg-boss): a fresh queue name /
 * key prefix (Redis) or a fresh database (PostgreSQL, dropped after) per scenario,
 * the consumer in a forked peer-worker process, the producer in the bench process. With
 * `warmup` (BullMQ), the consumer process first completes that many jobs on a queue of its own.
 *
 *   backlog: enqueue N with no consumer running (enqueue rate), then start the consumer and time
 *            the drain of that waiting backlog (processing rate).
 *   e2e:     consumer running and idle; enqueue N; first enqueue call → Nth completion.
 *   herd:    consumer running; H jobs all delayed until one instant; how late each started.
 *
 * Rates over a time bound: when the bound hits first, the rate is (completed ÷ elapsed) and
 * `complete` is false.
 */
import { performance } from 'node:perf_hooks';
import { TreeSampler } from '../bench/proc-sampler';
import { checkAborted } from '../bench/run-control';
import { distribution, round } from '../bench/stats';
import { AgendaProducer, BullProducer, Producer } from './peer-producers';
import { GraphileProducer, PgBossProducer } from './pg-producers';
import { PGBOSS_QUEUE } from './pg-consumers';
import type { PgHandle } from './postgres-server';
import { purgeKeys } from './redis-server';
import type { WorkerConfig } from './peer-worker';
import { PeerWorkerProcess } from './worker-process';

export interface PeerSetup {
  system: 'bullmq' | 'agenda' | 'graphile' | 'pgboss';
  label: string;
  redisUrl: string;
  /** The PostgreSQL peers' server (a database per scenario); null for the Redis peers. */
  pg: PgHandle | null;
  graphileBatched?: boolean;
  pgbossBatchSize?: number;
  pgbossPollingMs?: number;
  pgbossWorkers?: number;
  /** The bench's own redis-server, whose CPU time is reported with each scenario; null for REDIS_URL. */
  redisPid: number | null;
  concurrency: number;
  processEveryMs: number;
  lockLimit: number;
  batchSize: number;
  inFlight: number;
  tasks: number;
  herd: number;
  herdLeadMs: number;
  timeBoundS: number;
  /** BullMQ: jobs the scenario's consumer process completes on a queue of its own before the scenario (0: none). */
  warmup: number;
}

let seq = 0;
function namespace(s: PeerSetup, scenario: string): string {
  return `bench-${s.label}-${scenario}-${process.pid}-${Date.now().toString(36)}-${seq++}`;
}

function producerFor(s: PeerSetup, ns: string, pgUrl: string): Producer {
  if (s.system === 'graphile') return new GraphileProducer(pgUrl, s.batchSize, s.inFlight);
  if (s.system === 'pgboss') return new PgBossProducer(pgUrl, PGBOSS_QUEUE, s.batchSize, s.inFlight);
  return s.system === 'bullmq' ? new BullProducer(s.redisUrl, ns, s.batchSize, s.inFlight) : new AgendaProducer(s.redisUrl, ns, s.inFlight);
}

/** A database name from a namespace: lower case, `_` for anything else, at most 63 characters. */
function dbName(ns: string): string {
  return ns
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 63);
}

/** Runs `fn` with a started consumer process and a producer on a fresh namespace; always closes both. */
async function withPeer<T>(
  s: PeerSetup,
  scenario: string,
  fn: (w: PeerWorkerProcess, p: Producer) => Promise<T>,
): Promise<T & { consumer_resources: unknown; redis_cpu_s?: number | null; postgres_cpu_s?: number | null; consumer_errors: string[] }> {
  const ns = namespace(s, scenario);
  const db = s.pg ? dbName(ns) : null;
  const pgUrl = s.pg && db ? await s.pg.createDatabase(db) : '';
  const cfg: WorkerConfig = {
    system: s.system,
    redisUrl: s.redisUrl,
    namespace: ns,
    concurrency: s.concurrency,
    processEveryMs: s.processEveryMs,
    lockLimit: s.lockLimit,
    pgUrl,
    graphileBatched: s.graphileBatched,
    pgbossBatchSize: s.pgbossBatchSize,
    pgbossPollingMs: s.pgbossPollingMs,
    pgbossWorkers: s.pgbossWorkers,
  };
  const worker = new PeerWorkerProcess(cfg);
  const producer = producerFor(s, ns, pgUrl);
  try {
    // PostgreSQL peers: the producer installs the schema first, so that two installs do not race.
    if (s.pg) await producer.ready().then(() => worker.start());
    else await Promise.all([worker.start(), producer.ready()]);
    if (s.system === 'bullmq' && s.warmup > 0) await warmUp(s, ns, worker);
    worker.sampler?.beginPhase();
    const storePid = s.pg ? s.pg.pid : s.redisPid;
    const store = storePid === null ? null : new TreeSampler(storePid);
    store?.beginPhase();
    const out = await fn(worker, producer);
    const resources = worker.sampler?.endPhase() ?? null;
    const storeUse = store?.endPhase();
    // PostgreSQL: the postmaster and its backends (those alive at the end of the scenario).
    const storeCpu = storeUse ? round(storeUse.main_cpu_s + (s.pg ? storeUse.workers_cpu_s : 0), 2) : null;
    const cpu = s.pg ? { postgres_cpu_s: storeCpu } : { redis_cpu_s: storeCpu };
    return { ...out, consumer_resources: resources, ...cpu, consumer_errors: worker.errorMessages.slice(0, 5) };
  } finally {
    await producer.close().catch(() => undefined);
    await worker.stop();
    if (s.pg && db) await s.pg.dropDatabase(db).catch(() => undefined);
    // Remove this scenario's keys (BullMQ's `bull:<queue>:…`, Agenda's `<prefix>:…`), so that later
    // scenarios and rounds find the Redis as empty as the first did.
    if (!s.pg) await purgeKeys(s.redisUrl, [`bull:${ns}:*`, `bull:${ns}-warmup:*`, `${ns}:*`]).catch(() => undefined);
  }
}

/** The warm-up: `s.warmup` jobs on the queue `<ns>-warmup`, consumed by a second worker in the consumer's process. */
async function warmUp(s: PeerSetup, ns: string, worker: PeerWorkerProcess): Promise<void> {
  const producer = new BullProducer(s.redisUrl, `${ns}-warmup`, s.batchSize, s.inFlight);
  try {
    await producer.ready();
    // Both awaited together: a warm-up that fails while the jobs are still being added rejects here, not unhandled.
    await Promise.all([worker.warmup(`${ns}-warmup`, s.warmup, s.timeBoundS * 1000), producer.enqueue(s.warmup)]);
  } finally {
    await producer.close().catch(() => undefined);
    // Its jobs leave Redis before the measured scenario, which then finds it as a cold run does.
    await purgeKeys(s.redisUrl, [`bull:${ns}-warmup:*`]).catch(() => undefined);
  }
}

/** Jobs per second: whole numbers from 10/s up, one decimal below. */
function rate(n: number, ms: number): number | null {
  const perS = (n * 1000) / Math.max(ms, 1e-6);
  return round(perS, perS >= 10 ? 0 : 1);
}

/** Backlog: enqueue rate with no consumer, then the drain rate of the waiting backlog. */
export async function peerBacklog(s: PeerSetup): Promise<Record<string, unknown>> {
  return withPeer(s, 'backlog', async (worker, producer) => {
    const t0 = performance.now();
    await producer.enqueue(s.tasks);
    const enqueueMs = performance.now() - t0;
    checkAborted();
    const startAt = await worker.run(s.tasks);
    const done = await worker.waitDone(s.timeBoundS * 1000);
    const ms = (done.at ?? Date.now()) - startAt;
    const completed = done.at === null ? done.completed : s.tasks;
    return {
      tasks: s.tasks,
      enqueue: { seconds: round(enqueueMs / 1000, 3), tasks_per_s: rate(s.tasks, enqueueMs) },
      processing: {
        seconds: round(ms / 1000, 3),
        completed,
        complete: done.at !== null,
        failed: done.failed,
        tasks_per_s: rate(completed, ms),
        ...inProcess(done.handlerAt, startAt, s.tasks),
      },
    };
  });
}

/** PostgreSQL peers: the rate to the Nth completion in the consumer, before its database confirmed them all. */
function inProcess(handlerAt: number | null | undefined, from: number, n: number): Record<string, unknown> {
  if (handlerAt === null || handlerAt === undefined) return {};
  return { in_process: { seconds: round((handlerAt - from) / 1000, 3), tasks_per_s: rate(n, handlerAt - from) } };
}

/** End to end: consumer idle and waiting; first enqueue → Nth completion. */
export async function peerEndToEnd(s: PeerSetup): Promise<Record<string, unknown>> {
  return withPeer(s, 'e2e', async (worker, producer) => {
    await worker.run(s.tasks);
    const t0 = Date.now();
    await producer.enqueue(s.tasks);
    const enqueuedAt = Date.now();
    const done = await worker.waitDone(s.timeBoundS * 1000);
    const ms = (done.at ?? Date.now()) - t0;
    const completed = done.at === null ? done.completed : s.tasks;
    return {
      tasks: s.tasks,
      enqueue: { seconds: round((enqueuedAt - t0) / 1000, 3), tasks_per_s: rate(s.tasks, enqueuedAt - t0) },
      end_to_end: {
        seconds: round(ms / 1000, 3),
        completed,
        complete: done.at !== null,
        failed: done.failed,
        tasks_per_s: rate(completed, ms),
        ...inProcess(done.handlerAt, t0, s.tasks),
      },
    };
  });
}

/** Herd: H jobs delayed until one instant (start + herdLeadMs); start lateness of each. */
export async function peerHerd(s: PeerSetup): Promise<Record<string, unknown>> {
  return withPeer(s, 'herd', async (worker, producer) => {
    await worker.run(s.herd);
    const due = Date.now() + s.herdLeadMs;
    await producer.enqueue(s.herd, due);
    const enqueuedAt = Date.now();
    const done = await worker.waitDone(s.herdLeadMs + s.timeBoundS * 1000);
    const rep = await worker.report();
    return herdFigures(s.herd, due, enqueuedAt, rep.lateness_ms, done.at === null);
  });
}

/** The herd figures shared with ours: lateness over the jobs that started, how many did not, early starts. */
export function herdFigures(
  count: number,
  due: number,
  enqueuedAt: number,
  lateness: number[],
  timedOut: boolean,
): Record<string, unknown> {
  return {
    tasks: count,
    due_at: new Date(due).toISOString(),
    enqueued_ms_before_due: due - enqueuedAt,
    lateness: distribution(lateness),
    started: lateness.length,
    not_started_within_bound: count - lateness.length,
    timed_out: timedOut,
    started_early: lateness.filter((l) => l < 0).length,
  };
}
