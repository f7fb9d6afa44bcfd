/**
 * The soak on a started service: the peak burst (unless --rate), then `--duration` of mixed load
 * (soak-load.ts) sampled every `--sample-interval` (soak-samples.ts), then the drain (crons
 * paused, every acknowledged task ended), the side-effect check (effect-log.ts) and the verdict
 * (soak-verdict.ts). Expected failures (a figure out of tolerance, a task missing) are recorded in
 * the report; only harness errors throw.
 */
import { performance } from 'node:perf_hooks';
import { FireRun, readRuns } from '../cron/cron-api';
import { loadavgs } from '../results-file';
import { checkAborted, run, sleep } from '../run-control';
import { round } from '../stats';
import { call } from '../tenants/tenants-api';
import { KINDS, Kind, SeqBook, taskType, verifyEffects } from './effect-log';
import { createCrons, flood, LoadCounters, SteadyStream, submitBatch, submitWorkflow } from './soak-load';
import { histP99Ms, LagSampler, scrapeSoak, SoakScrape, terminalOf, treeRss } from './soak-samples';
import type { SoakOptions } from './soak-options';
import type { SoakService } from './soak-service';
import { FloodSpan, SoakSample, verdict } from './soak-verdict';

const log = (msg: string) => process.stderr.write(`[bench-soak] ${msg}\n`);
const MB = 1048576;

/**
 * Polls /metrics every `pollMs` until `done`; fails when `progress` has not moved for `stallMs`.
 * @returns the satisfying scrape
 */
async function pollScrape(
  ss: SoakService,
  pollMs: number,
  done: (s: SoakScrape) => boolean,
  progress: (s: SoakScrape) => number,
  what: string,
  stallMs = 60_000,
): Promise<SoakScrape> {
  const client = ss.client(2);
  let last = -1;
  let moved = performance.now();
  for (;;) {
    checkAborted();
    const s = await scrapeSoak(client);
    if (done(s)) return s;
    const p = progress(s);
    if (p !== last) {
      last = p;
      moved = performance.now();
    } else if (performance.now() - moved > stallMs)
      throw new Error(`${what}: no progress for ${stallMs / 1000} s (at ${p}); depth ${JSON.stringify(s.depth)}`);
    await sleep(pollMs);
  }
}

/** Run-now burst of `n` tasks (batches of 500, 4 in flight): tasks per second from the first send to all ended. */
async function measurePeak(ss: SoakService, book: SeqBook, n: number, c: LoadCounters): Promise<Record<string, unknown>> {
  const client = ss.client(8);
  const before = terminalOf(await scrapeSoak(client), taskType('peak'));
  const t0 = performance.now();
  const sizes: number[] = [];
  for (let left = n; left > 0; left -= 500) sizes.push(Math.min(500, left));
  let next = 0;
  let acked = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < sizes.length) {
        const k = sizes[next++];
        const ids = await submitBatch(
          client,
          book,
          Array.from({ length: k }, () => ({ kind: 'peak' as Kind, tenant: 'P' })),
          c,
        );
        if (ids === null) throw new Error(`peak burst: ${c.errors[c.errors.length - 1]}`);
        acked += ids.length;
      }
    }),
  );
  const submitS = (performance.now() - t0) / 1000;
  await pollScrape(
    ss,
    100,
    (s) => terminalOf(s, taskType('peak')) - before >= acked,
    (s) => terminalOf(s, taskType('peak')),
    'peak burst',
  );
  const s = (performance.now() - t0) / 1000;
  return { tasks: acked, submit_s: round(submitS, 2), drain_s: round(s, 2), tasks_per_s: round(acked / s, 0) };
}

/** The whole soak on `ss` (started). @returns the report's soak part */
export async function soakScenario(ss: SoakService, o: SoakOptions): Promise<Record<string, any>> {
  const book = new SeqBook();
  const c: LoadCounters = { throttled: 0, requests: 0, errors: [] };
  const out: Record<string, any> = {};
  let rate = o.rate;
  if (rate === null) {
    log(`measuring the peak: ${o.peakTasks} run-now tasks at once`);
    out.peak = await measurePeak(ss, book, o.peakTasks, c);
    rate = Math.max(1, Math.round((out.peak.tasks_per_s as number) / 2));
    log(`peak ${out.peak.tasks_per_s} tasks/s: steady rate ${rate}/s`);
    await sleep(2000);
  }
  out.rate_per_s = rate;

  const control = ss.client(4);
  const lagClient = ss.client(8);
  const cronIds = await createCrons(control, o.crons, o.cronEveryS, c);
  const lag = new LagSampler(o.lagSample);
  const startWall = Date.now();
  const t0 = performance.now();
  const endAt = t0 + o.durationMs;
  const steady = new SteadyStream(ss.client(64), book, c, rate, o.batchMs, o.retryFraction, (id, w) => lag.offer(id, w));
  steady.start();
  log(`soak: ${o.durationMs / 60_000} min, warm-up ${o.warmupMs / 60_000} min, ${rate}/s steady, ${o.crons} crons every ${o.cronEveryS} s`);

  // Floods, mid-period: at floodEvery/2 + k × floodEvery.
  const floods: Array<FloodSpan & { at_min: number; acked: number; submit_s: number; drain_s: number | null }> = [];
  const floodLoop = (async () => {
    if (o.floodEveryMs <= 0) return;
    let floodAcked = 0;
    const floodBase = terminalOf(await scrapeSoak(control), taskType('flood'));
    for (let k = 0; ; k++) {
      const at = t0 + o.floodEveryMs / 2 + k * o.floodEveryMs;
      if (at >= endAt) return;
      await sleep(at - performance.now());
      const startWall = Date.now();
      const f = await flood(ss.client(4), book, o.floodTasks, c);
      floodAcked += f.acked;
      const span = {
        startWall,
        endWall: null as number | null,
        at_min: round((at - t0) / 60_000, 2) as number,
        ...f,
        drain_s: null as number | null,
      };
      floods.push(span);
      log(`flood ${k + 1} at ${span.at_min} min: ${f.acked} tasks`);
      const want = floodAcked;
      await pollScrape(
        ss,
        250,
        (s) => terminalOf(s, taskType('flood')) - floodBase >= want,
        (s) => terminalOf(s, taskType('flood')),
        'flood',
      );
      span.endWall = Date.now();
      span.drain_s = round((span.endWall - startWall) / 1000, 2);
    }
  })();

  // Cron fire records: with --retention-min the service deletes those older than the retention,
  // so they are read every half retention (at most every 5 min) and kept here by instant.
  const fires = new Map<string, FireRun>();
  const fireThrottle = { retried: 0 };
  const readFires = async () => {
    for (const id of cronIds)
      for (const r of (await readRuns(control, id, startWall, fireThrottle)).runs) fires.set(`${id}/${r.fire_time}`, r);
  };
  const fireLoop = (async () => {
    if (o.retentionMs === null) return;
    const every = Math.min(o.retentionMs / 2, 5 * 60_000);
    for (let k = 1; ; k++) {
      const at = t0 + k * every;
      if (at >= endAt) return;
      await sleep(at - performance.now());
      await readFires();
    }
  })();

  let workflows = 0;
  const workflowLoop = (async () => {
    if (o.workflowEveryMs <= 0) return;
    for (let k = 1; ; k++) {
      const at = t0 + k * o.workflowEveryMs;
      if (at >= endAt) return;
      await sleep(at - performance.now());
      if ((await submitWorkflow(control, book, o.workflowLayers, o.workflowWidth, c)) > 0) workflows++;
    }
  })();

  // Samples.
  const samples: SoakSample[] = [];
  let prev = await scrapeSoak(control);
  let closed: Array<{ id: string; sentWall: number }> = [];
  for (let k = 1; ; k++) {
    const at = t0 + k * o.sampleIntervalMs;
    if (at > endAt + 1) break;
    await sleep(at - performance.now());
    const s = await scrapeSoak(control);
    const rss = treeRss(ss.svc.child?.pid ?? 0, ss.svc.sampler?.lastWorkerPids ?? []);
    const files = ss.storeFiles();
    const toRead = closed;
    closed = lag.rotate();
    const recs = await lag.readBack(lagClient, toRead);
    const recLags = recs.map((r) => r.lagMs).sort((a, b) => a - b);
    const sample: SoakSample = {
      t_s: round((at - t0) / 1000, 1) as number,
      main_rss_mb: rss.main_mb,
      workers_rss_mb: rss.workers_mb,
      event_loop_max_ms: s.eventLoopMaxMs === null ? null : (round(s.eventLoopMaxMs, 1) as number),
      main_heap_used_mb: s.heapUsedBytes === null ? null : round(s.heapUsedBytes / MB, 1),
      main_external_mb: s.externalBytes === null ? null : round(s.externalBytes / MB, 1),
      main_heap_total_mb: s.heapTotalBytes === null ? null : round(s.heapTotalBytes / MB, 1),
      wal_mb: round(files.wal_bytes / MB, 2) as number,
      db_mb: round(files.db_bytes / MB, 2) as number,
      steady_lag_p99_ms_prev_interval: recLags.length ? recLags[Math.min(recLags.length - 1, Math.ceil(0.99 * recLags.length) - 1)] : null,
      steady_lag_hist_p99_le_ms: histP99Ms(prev.lagS, s.lagS),
      ended_in_interval: KINDS.reduce((a, kd) => a + terminalOf(s, taskType(kd)) - terminalOf(prev, taskType(kd)), 0),
      depth: s.depth,
      loadavg: loadavgs()[0],
    };
    samples.push(sample);
    prev = s;
    log(
      `t=${sample.t_s}s rss main ${sample.main_rss_mb} MB workers ${sample.workers_rss_mb} MB, wal ${sample.wal_mb} MB, db ${sample.db_mb} MB, loop max ${sample.event_loop_max_ms} ms, lag p99 ${sample.steady_lag_p99_ms_prev_interval} ms`,
    );
  }
  await steady.stop();
  await Promise.all([floodLoop, workflowLoop, fireLoop]);
  await lag.readBack(lagClient, [...closed, ...lag.rotate()]);
  out.load = {
    steady: steady.summary(),
    workflows,
    requests: c.requests,
    throttled_responses: c.throttled,
    submit_errors: c.errors.slice(0, 10),
  };

  // Drain: pause the crons, then wait until every acknowledged task has ended.
  for (const id of cronIds)
    await call(control, 'PATCH', `/api/v1/cron-tasks/${encodeURIComponent(id)}`, JSON.stringify({ enabled: false }), 200, c);
  const acked = book.acknowledgedByKind();
  const cronCreated: string[] = [];
  const cronOutcomes: Record<string, number> = {};
  await readFires();
  for (const r of fires.values()) {
    cronOutcomes[r.outcome] = (cronOutcomes[r.outcome] ?? 0) + 1;
    if (r.outcome !== 'skipped' && r.task_id) cronCreated.push(r.task_id);
  }
  acked.cron = cronCreated.length;
  const drainT0 = performance.now();
  log(`drain: waiting for ${JSON.stringify(acked)}`);
  const base = { peak: 0 } as Record<string, number>;
  const ended = (s: SoakScrape) => KINDS.reduce((a, k) => a + Math.min(terminalOf(s, taskType(k)) - (base[k] ?? 0), acked[k] ?? 0), 0);
  const want = KINDS.reduce((a, k) => a + (acked[k] ?? 0), 0);
  const final = await pollScrape(ss, 250, (s) => ended(s) >= want, ended, 'drain', 120_000);
  out.drain_s = round((performance.now() - drainT0) / 1000, 2);

  const terminal: Record<string, Record<string, number>> = {};
  for (const [k, v] of final.terminal) {
    const [type, status] = k.split('/');
    if (!type.startsWith('soak_')) continue;
    terminal[type] = { ...(terminal[type] ?? {}), [status]: v };
  }
  const unexpected: string[] = [];
  for (const k of KINDS) {
    const t = terminal[taskType(k)] ?? {};
    const notOk = Object.entries(t).filter(([st, n]) => st !== 'SUCCEEDED' && n > 0);
    if (notOk.length) unexpected.push(`${k}: ${JSON.stringify(Object.fromEntries(notOk))}`);
    if ((t.SUCCEEDED ?? 0) !== (acked[k] ?? 0)) unexpected.push(`${k}: ${t.SUCCEEDED ?? 0} SUCCEEDED of ${acked[k] ?? 0} acknowledged`);
  }
  const effects = verifyEffects(ss.effectsDir, book, cronCreated);
  out.completeness = {
    acknowledged_by_kind: acked,
    unknown_submissions: book.unknown.length,
    terminal_by_type: terminal,
    cron_fire_outcomes: cronOutcomes,
    unexpected,
    stale_completions: final.staleCompletions,
    worker_restarts: final.workerRestarts,
    worker_kills: final.workerKills,
    effects,
    ok: unexpected.length === 0 && effects.ok && book.unknown.length === 0,
  };
  out.floods = floods.map((f) => ({ at_min: f.at_min, acked: f.acked, submit_s: f.submit_s, drain_s: f.drain_s }));
  out.verdict = verdict(samples, lag.records, floods, startWall, o);
  out.lag_read_back = {
    records: lag.records.length,
    not_started_when_read: lag.records.filter((r) => r.notStarted).length,
    fetch_errors: lag.fetchErrors,
  };
  out.samples = samples;
  out.pass = out.verdict.figures_pass === true && out.completeness.ok === true;
  if (run.signal.aborted) throw new Error('aborted');
  return out;
}
