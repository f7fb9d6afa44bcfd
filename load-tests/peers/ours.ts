/**
 * The same three scenarios on our service (the real `node dist/src/main.js`, defaults, SQLite with
 * synchronous=FULL), over its REST API with the bench's keep-alive client:
 *
 *   backlog: N noop tasks in batch requests, all `scheduled_at` one instant T (start +
 *            backlogLeadMs), so that nothing runs while they are enqueued; at T they are a waiting
 *            backlog of N; processing rate = N ÷ (T → the last one finished). The service
 *            has no "workers off" switch (WORKERS ≥ 1), hence the due instant instead of a consumer
 *            started later as for the peers. `enqueued_before_due` must be true for this to hold.
 *   e2e:     N noop tasks due now in batch requests; first request → the last one finished.
 *   herd:    H tasks `scheduled_at` one instant; lateness = started_at − scheduled_at (GET of every task).
 *
 * "Finished" is the service's `scheduler_last_task_finished_timestamp_seconds` (set when the
 * commit of a task's end has answered) in the scrape that first sees all N terminal: the instant
 * the last one finished, as BullMQ's figure is its worker's 'completed' event for the last job,
 * not the poll that noticed it. `seen_by_poll` keeps the poll-based figure (the arrival of that
 * scrape: later by up to one poll interval plus one scrape).
 */
import { performance } from 'node:perf_hooks';
import { TreeSampler } from '../bench/proc-sampler';
import type { PgStatements } from './pg-statements';
import { CompletionWait, waitForCompletions } from '../bench/completion-wait';
import { HttpClient, retryAfterMs } from '../bench/http-client';
import { scrape } from '../bench/metrics';
import { checkAborted, mapLimit, sleep } from '../bench/run-control';
import type { Service } from '../bench/service-process';
import { round } from '../bench/stats';
import { fetchTasks, SubmitAck } from '../bench/task-lag';
import { herdFigures } from './peer-scenarios';

export interface OursSetup {
  tasks: number;
  herd: number;
  herdLeadMs: number;
  backlogLeadMs: number;
  /** /metrics poll interval while waiting for the tasks to finish (ms). */
  pollMs: number;
  batchSize: number;
  inFlight: number;
  timeBoundS: number;
  /** Postmaster pid of the PostgreSQL cluster the bench started for `--ours-store postgres` (its CPU is reported per scenario), else null. */
  pgPid?: number | null;
  /** `--pg-statements`: the reader of the service's statements per scenario; absent: none. */
  statements?: PgStatements | null;
}

/** Starts measuring the CPU of the bench's own PostgreSQL cluster (postmaster and backends); `end()` gives CPU-s, null without one. */
function pgCpu(s: OursSetup): { end(): number | null } {
  const t = s.pgPid ? new TreeSampler(s.pgPid) : null;
  t?.beginPhase();
  return {
    end: () => {
      const u = t?.endPhase();
      return u ? (round(u.main_cpu_s + u.workers_cpu_s, 2) as number) : null;
    },
  };
}

/** Epoch ms of a performance.now() reading. */
const epochOf = (perf: number) => Date.now() - (performance.now() - perf);

/** Submits n noop tasks (optionally all due at `dueAtMs`) in batches, `inFlight` at once; returns the acks. */
async function submitAll(client: HttpClient, n: number, batchSize: number, inFlight: number, dueAtMs?: number): Promise<SubmitAck[]> {
  const sizes: number[] = [];
  for (let left = n; left > 0; left -= batchSize) sizes.push(Math.min(batchSize, left));
  const task = dueAtMs === undefined ? { task_type: 'noop' } : { task_type: 'noop', scheduled_at: new Date(dueAtMs).toISOString() };
  const acks: SubmitAck[] = [];
  await mapLimit(sizes, inFlight, async (size) => {
    const body = JSON.stringify({ tasks: Array.from({ length: size }, () => task) });
    for (let tries = 0; ; tries++) {
      checkAborted();
      const res = await client.request('POST', '/api/v1/tasks/batch', body, 60_000);
      if (res.status === 202) {
        acks.push(...(JSON.parse(res.body) as { tasks: SubmitAck[] }).tasks);
        return;
      }
      if ((res.status === 429 || res.status === 503) && tries < 100) {
        await sleep(retryAfterMs(res));
        continue;
      }
      throw new Error(`POST /api/v1/tasks/batch: HTTP ${res.status} ${res.body.slice(0, 300)}`);
    }
  });
  return acks;
}

const rate = (n: number, ms: number) => round((n * 1000) / Math.max(ms, 1e-6), 0);

/**
 * The rate figures of a drain of `n` tasks: `ms` from its start to the finish instant (`source`
 * says whose), and `seenMs` to the poll that saw it.
 */
function drainFigures(n: number, ms: number, seenMs: number, wait: CompletionWait, source: 'service' | 'poll', pollMs: number) {
  return {
    seconds: round(ms / 1000, 3),
    completed: n,
    complete: true,
    terminal_counts: wait.counts,
    tasks_per_s: rate(n, ms),
    finish_from: source,
    seen_by_poll: { poll_ms: pollMs, seconds: round(seenMs / 1000, 3), tasks_per_s: rate(n, seenMs) },
  };
}

/**
 * The instant (epoch ms) the last of the tasks finished: the service's own reading in the scrape
 * that saw them all, else (a build without that gauge) the arrival of that scrape.
 */
function finishedAt(wait: CompletionWait): { at: number; source: 'service' | 'poll' } {
  const seen = epochOf(wait.done_at);
  const service = wait.last.lastFinishedMs;
  return service !== null && service <= seen ? { at: service, source: 'service' } : { at: seen, source: 'poll' };
}

export async function oursBacklog(client: HttpClient, svc: Service, s: OursSetup): Promise<Record<string, unknown>> {
  const baseline = await scrape(client);
  await s.statements?.begin();
  svc.sampler?.beginPhase();
  const pg = pgCpu(s);
  const t0 = performance.now();
  const due = Date.now() + s.backlogLeadMs;
  await submitAll(client, s.tasks, s.batchSize, s.inFlight, due);
  const enqueueMs = performance.now() - t0;
  const enqueuedAt = Date.now();
  const wait = await waitForCompletions(client, baseline, s.tasks, s.pollMs, t0, s.backlogLeadMs + s.timeBoundS * 1000);
  const finished = finishedAt(wait);
  const ms = finished.at - due;
  const seenMs = epochOf(wait.done_at) - due;
  return {
    tasks: s.tasks,
    enqueue: { seconds: round(enqueueMs / 1000, 3), tasks_per_s: rate(s.tasks, enqueueMs) },
    enqueued_before_due: enqueuedAt < due,
    processing: drainFigures(s.tasks, ms, seenMs, wait, finished.source, s.pollMs),
    service_resources: svc.sampler?.endPhase() ?? null,
    postgres_cpu_s: pg.end(),
    ...(s.statements ? { pg_statements_per_1000: await s.statements.end(s.tasks) } : {}),
  };
}

export async function oursEndToEnd(client: HttpClient, svc: Service, s: OursSetup): Promise<Record<string, unknown>> {
  const baseline = await scrape(client);
  await s.statements?.begin();
  svc.sampler?.beginPhase();
  const pg = pgCpu(s);
  const t0 = performance.now();
  const cancel = { cancelled: false };
  const waiting = waitForCompletions(client, baseline, s.tasks, s.pollMs, t0, s.timeBoundS * 1000, cancel);
  waiting.catch(() => undefined);
  try {
    await submitAll(client, s.tasks, s.batchSize, s.inFlight);
  } catch (err) {
    cancel.cancelled = true;
    throw err;
  }
  const enqueueMs = performance.now() - t0;
  const wait = await waiting;
  const finished = finishedAt(wait);
  const ms = finished.at - epochOf(t0);
  const seenMs = wait.done_at - t0;
  return {
    tasks: s.tasks,
    enqueue: { seconds: round(enqueueMs / 1000, 3), tasks_per_s: rate(s.tasks, enqueueMs) },
    end_to_end: drainFigures(s.tasks, ms, seenMs, wait, finished.source, s.pollMs),
    service_resources: svc.sampler?.endPhase() ?? null,
    postgres_cpu_s: pg.end(),
    ...(s.statements ? { pg_statements_per_1000: await s.statements.end(s.tasks) } : {}),
  };
}

export async function oursHerd(client: HttpClient, svc: Service, s: OursSetup): Promise<Record<string, unknown>> {
  const baseline = await scrape(client);
  svc.sampler?.beginPhase();
  const due = Date.now() + s.herdLeadMs;
  const acks = await submitAll(client, s.herd, s.batchSize, s.inFlight, due);
  const enqueuedAt = Date.now();
  await waitForCompletions(client, baseline, s.herd, s.pollMs, performance.now(), s.herdLeadMs + s.timeBoundS * 1000);
  const resources = svc.sampler?.endPhase() ?? null;
  const tasks = await fetchTasks(
    client,
    acks.map((a) => a.task_id),
  );
  const lateness = tasks.filter((t) => t.started_at).map((t) => Date.parse(t.started_at as string) - due);
  return {
    ...herdFigures(s.herd, due, enqueuedAt, lateness, false),
    not_succeeded: tasks.filter((t) => t.status !== 'SUCCEEDED').length,
    service_resources: resources,
  };
}

/**
 * The warm-up (`--warmup N`): N noop tasks due now, submitted and waited for, before the measured
 * scenarios, so that they run on a service whose code paths have run (as BullMQ's consumer does
 * with its own warm-up). Reported, not compared.
 */
export async function oursWarmup(client: HttpClient, s: OursSetup, n: number): Promise<Record<string, unknown>> {
  const baseline = await scrape(client);
  const t0 = performance.now();
  await submitAll(client, n, s.batchSize, s.inFlight);
  await waitForCompletions(client, baseline, n, s.pollMs, t0, s.timeBoundS * 1000);
  return { tasks: n, seconds: round((performance.now() - t0) / 1000, 3) };
}
