/**
 * The cron-firing scenario: create N `noop` definitions (overlap_policy `skip`) through the REST
 * API, let them fire, pause them, read every fire record back and fetch a sample of the
 * instances. Phases (each with its own CPU and RSS figures from the TreeSampler):
 *
 * 1. create: N × `POST /api/v1/cron-tasks`, `--concurrency` in flight. Each answer's
 *    `next_fire_time` is the first fire time that cron owes.
 * 2. fire: nothing is sent. The measured window ends at `windowEnd`, the first fire time at or
 *    after (last create answer + `--seconds`); the crons keep running `--settle-ms` past it so
 *    that late firings of the window are still made.
 * 3. read back: N × `PATCH {enabled:false}` (so the reads do not compete with new firings), a wait
 *    until no task is PENDING or RUNNING (at most 30 s), N × `GET …/runs` (paginated), then
 *    `GET /api/v1/tasks/{id}` for a random sample of the instances made in the window.
 */
import { performance } from 'node:perf_hooks';
import type { HttpClient } from '../http-client';
import { scrape } from '../metrics';
import type { PhaseResources, TreeSampler } from '../proc-sampler';
import { mapLimit, sleep } from '../run-control';
import type { Service } from '../service-process';
import { distribution, round, sample } from '../stats';
import { fetchTasks } from '../task-lag';
import { createCron, pauseCron, readRuns, Throttle } from './cron-api';
import { cronMetricsDelta, scrapeCron } from './cron-metrics';
import type { CronOptions } from './cron-options';
import { analyse, CronReadBack, Instance } from './exactness';

const log = (msg: string) => process.stderr.write(`[bench-cron] ${msg}\n`);

/** CPU of a phase as % of one core (user + system time ÷ wall time). */
function cpuPct(r: PhaseResources): { main: number | null; workers: number | null; service_total: number | null; harness: number | null } {
  const pct = (s: number) => (r.wall_s > 0 ? round((100 * s) / r.wall_s, 1) : null);
  return {
    main: pct(r.main_cpu_s),
    workers: pct(r.workers_cpu_s),
    service_total: pct(r.main_cpu_s + r.workers_cpu_s),
    harness: pct(r.harness_cpu_s),
  };
}

/** Polls /metrics until no task is PENDING or RUNNING; returns the wait (ms), null when it timed out. */
async function waitIdle(client: HttpClient, limitMs: number): Promise<number | null> {
  const t0 = performance.now();
  for (;;) {
    const snap = await scrape(client);
    if ((snap.depth.PENDING ?? 0) + (snap.depth.RUNNING ?? 0) === 0) return round(performance.now() - t0, 0);
    if (performance.now() - t0 > limitMs) return null;
    await sleep(200);
  }
}

/** Start lag = started_at − fire time (ms) of the fetched instances, with the checks on them. */
async function startLag(client: HttpClient, instances: Instance[], steadyFrom: number, o: CronOptions): Promise<Record<string, unknown>> {
  const picked = sample(instances, o.lagSample);
  const tasks = await fetchTasks(
    client,
    picked.map((i) => i.taskId),
    o.concurrency,
  );
  const lags: number[] = [];
  const steady: number[] = [];
  let notStarted = 0;
  let early = 0;
  let mismatch = 0;
  let notOk = 0;
  tasks.forEach((t, i) => {
    const fireTime = picked[i].fireTime;
    if (t.status !== 'SUCCEEDED') notOk++;
    if (t.scheduled_at === null || Date.parse(t.scheduled_at) !== fireTime) mismatch++;
    if (!t.started_at) {
      notStarted++;
      return;
    }
    const lag = Date.parse(t.started_at) - fireTime;
    if (lag < 0) early++;
    lags.push(lag);
    if (fireTime >= steadyFrom) steady.push(lag);
  });
  return {
    ...distribution(lags),
    sampled_of: instances.length,
    not_started: notStarted,
    not_succeeded: notOk,
    started_before_fire_time: early,
    scheduled_at_not_fire_time: mismatch,
    steady: { ...distribution(steady), from: new Date(steadyFrom).toISOString() },
  };
}

/**
 * Runs the scenario on a started service and returns its figures (see the file header).
 * @throws Error on an HTTP failure or when the run is aborted (timeout, service death)
 */
export async function cronScenario(client: HttpClient, svc: Service, o: CronOptions): Promise<Record<string, unknown>> {
  const sampler = svc.sampler as TreeSampler;
  const throttle: Throttle = { retried: 0 };
  const metricsBefore = await scrapeCron(client);

  // 1. create
  log(`creating ${o.crons} crons "${o.cronExpression}" (${o.concurrency} in flight)`);
  sampler.beginPhase();
  const createLat: number[] = [];
  const t0 = performance.now();
  const created = await mapLimit(
    Array.from({ length: o.crons }, (_, i) => i),
    o.concurrency,
    async (i) => {
      const s = performance.now();
      const c = await createCron(client, `bench-cron-${i}`, o.cronExpression, throttle);
      createLat.push(performance.now() - s);
      return { id: c.cron_id, first: Date.parse(c.next_fire_time as string) };
    },
  );
  const createdAt = Date.now();
  const createSeconds = (performance.now() - t0) / 1000;
  const createRes = sampler.endPhase();

  // 2. fire
  const windowEnd = Math.ceil((createdAt + o.seconds * 1000) / o.periodMs) * o.periodMs;
  const pauseAt = windowEnd + o.settleMs;
  log(`firing; window ends ${new Date(windowEnd).toISOString()}, pause in ${round((pauseAt - Date.now()) / 1000, 1)} s`);
  sampler.beginPhase();
  for (let left = pauseAt - Date.now(); left > 0; left = pauseAt - Date.now()) {
    await sleep(Math.min(left, 15_000));
    if (pauseAt - Date.now() > 0) log(`${round((pauseAt - Date.now()) / 1000, 0)} s to go`);
  }
  const fireRes = sampler.endPhase();

  // 3. pause, drain, read back
  sampler.beginPhase();
  const tPause = performance.now();
  const paused = await mapLimit(created, o.concurrency, (c) => pauseCron(client, c.id, throttle));
  const pauseSeconds = (performance.now() - tPause) / 1000;
  const idleAfterMs = await waitIdle(client, 30_000);
  log(`paused in ${round(pauseSeconds, 1)} s; reading fire records`);
  const tRead = performance.now();
  let pages = 0;
  const readBack: CronReadBack[] = await mapLimit(created, o.concurrency, async (c) => {
    const r = await readRuns(client, c.id, c.first, throttle);
    pages += r.pages;
    return { cronId: c.id, firstFireTime: c.first, lastFireAtPause: null, runs: r.runs };
  });
  paused.forEach((p, i) => {
    readBack[i].lastFireAtPause = p.last_fire_time === null ? null : Date.parse(p.last_fire_time);
  });
  const readSeconds = (performance.now() - tRead) / 1000;
  const analysis = analyse(readBack, windowEnd, o.periodMs);
  const start = await startLag(client, analysis.instances, analysis.steadyFrom, o);
  const readRes = sampler.endPhase();
  const metricsAfter = await scrapeCron(client);

  return {
    crons: o.crons,
    cron_expression: o.cronExpression,
    overlap_policy: 'skip',
    create: {
      seconds: round(createSeconds, 2),
      crons_per_s: round(o.crons / createSeconds, 0),
      latency: distribution(createLat),
      throttled_retries: throttle.retried,
    },
    fire_lag: analysis.fireLag,
    fire_lag_steady: analysis.fireLagSteady,
    start_lag: start,
    exactness: analysis.exactness,
    caught_up_lag: analysis.caughtUpLag,
    fire_lag_by_fire_time: analysis.fireLagByFireTime,
    server_metrics: cronMetricsDelta(metricsBefore, metricsAfter),
    firing_phase: {
      wall_s: fireRes.wall_s,
      cpu_pct_of_one_core: cpuPct(fireRes),
      resources: fireRes,
    },
    create_phase: { cpu_pct_of_one_core: cpuPct(createRes), resources: createRes },
    read_back: {
      pause_seconds: round(pauseSeconds, 2),
      idle_after_pause_ms: idleAfterMs,
      runs_pages: pages,
      runs_read_seconds: round(readSeconds, 2),
      resources: readRes,
    },
  };
}
