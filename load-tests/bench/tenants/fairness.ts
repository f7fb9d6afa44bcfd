/**
 * Scenario 1, fairness (issue 5, must-show 1): does one tenant's backlog delay another tenant?
 *
 * 1. baseline: tenant B alone submits one `noop` task every `--b-interval-ms` (10) for
 *    `--baseline-seconds` (10), single `POST /api/v1/tasks` paced by a timer; once they are all
 *    terminal each one is read with `GET /api/v1/tasks/{id}`: dispatch lag = started_at − due_at.
 * 2. contention, `--a-mode run_now`: the same trickle of B starts together with tenant A's backlog of `--a-tasks`
 *    (100,000) `noop` tasks due now (batches of `--batch-size` with `--concurrency` in flight,
 *    `metadata.tenant_id: "A"`) and goes on until A has drained. A's drain time runs from A's first
 *    send to the /metrics scrape that shows all A tasks terminal; B's lag is computed as in 1.
 *    `--a-mode due_at_once` (the default) sends A's tasks due at one second ahead instead: see
 *    fairness-burst.ts.
 *
 * /metrics has no tenant label on completions, so "all A terminal" is read from one scrape as
 * terminal noop tasks since the start − B's started attempts (`scheduler_tenant_dispatched_total`
 * {tenant="B"}) ≥ A's count: B's finished tasks never outnumber its started ones, so the condition
 * never holds early; it holds late only while a B task is running at the scrape (a few ms).
 * The same counter for A gives the instant every A task had started. B runs on its own HTTP client
 * with enough sockets for every request in flight, so its requests never wait inside the harness.
 */
import { performance } from 'node:perf_hooks';
import type { TreeSampler } from '../proc-sampler';
import { loadavg1m } from '../results-file';
import { sleep } from '../run-control';
import { distribution, round, sample } from '../stats';
import { fetchTasks, lagReport } from '../task-lag';
import { burstContention } from './fairness-burst';
import { lagBySecond, splitLag, startAfterSend } from './fairness-lag';
import { Pacer } from './pacer';
import { ScenarioService } from './scenario-service';
import { delta, deltas, pollUntil, scrapeTenants, TenantSnapshot } from './tenant-metrics';
import { backlogBodies, backlogSummary, submitBacklog } from './tenants-api';
import type { TenantsOptions } from './tenants-options';

const log = (msg: string) => process.stderr.write(`[bench-tenants] fairness: ${msg}\n`);

/** Sockets of B's client: more than B ever has in flight, so no request queues in the harness. */
const PACER_SOCKETS = 512;

/** B's dispatch-lag target of the issue (p99, ms). */
export const B_P99_TARGET_MS = 100;

/** Runs B's trickle alone for `--baseline-seconds`; its lag figures. */
async function baseline(ss: ScenarioService, o: TenantsOptions, bBody: string): Promise<Record<string, unknown>> {
  const control = ss.client(o.lagConcurrency + 2);
  const sampler = ss.svc.sampler as TreeSampler;
  const load_at_start = loadavg1m();
  const before = await scrapeTenants(control);
  sampler.beginPhase();
  const pacer = new Pacer(ss.client(PACER_SOCKETS), bBody, o.bIntervalMs);
  pacer.start();
  // Scrape /metrics while B runs, as during the contention phase (same measurement load).
  const loopMax: number[] = [];
  const end = performance.now() + o.baselineSeconds * 1000;
  await pollUntil(
    control,
    o.pollMs,
    (s) => s.at >= end,
    (s) => s.at,
    (s) => {
      if (s.eventLoopMaxMs !== null) loopMax.push(s.eventLoopMaxMs);
    },
  );
  await pacer.stop();
  await pollUntil(
    control,
    o.pollMs,
    (s) => delta(s.terminal, before.terminal, 'noop') >= pacer.tasks.length,
    (s) => delta(s.terminal, before.terminal, 'noop'),
  );
  const resources = sampler.endPhase();
  const tasks = await fetchTasks(
    control,
    pacer.tasks.map((t) => t.task_id),
    o.lagConcurrency,
  );
  return {
    b: { submissions: pacer.summary(), dispatch_lag: lagReport(tasks, tasks.length), start_after_send: startAfterSend(tasks, pacer) },
    service_event_loop_max_per_scrape: distribution(loopMax),
    resources,
    load_at_start,
    load_at_end: loadavg1m(),
  };
}

/** A's backlog and B's trickle together, until A has drained. */
async function contention(ss: ScenarioService, o: TenantsOptions, bBody: string): Promise<Record<string, unknown>> {
  const control = ss.client(o.lagConcurrency + 2);
  const aClient = ss.client(o.concurrency * 2);
  const sampler = ss.svc.sampler as TreeSampler;
  const bodies = backlogBodies({ task_type: 'noop', metadata: { tenant_id: 'A' } }, o.aTasks, o.batchSize);
  const load_at_start = loadavg1m();
  const before = await scrapeTenants(control);
  sampler.beginPhase();

  const pacer = new Pacer(ss.client(PACER_SOCKETS), bBody, o.bIntervalMs);
  const t0 = performance.now();
  pacer.start();
  const cancel = { failed: false };
  const submitting = submitBacklog(aClient, bodies, o.concurrency, true).catch((err: unknown) => {
    cancel.failed = true;
    throw err;
  });
  let allStartedAt: number | null = null;
  let lastTimeline = -Infinity;
  let loopSinceTimeline = 0;
  const loopMax: number[] = [];
  const timeline: Array<Record<string, number>> = [];
  const aTerminal = (s: TenantSnapshot) => delta(s.terminal, before.terminal, 'noop') - delta(s.dispatched, before.dispatched, 'B');
  const draining = pollUntil(
    control,
    o.pollMs,
    (s) => {
      if (cancel.failed) throw new Error("A's submission failed");
      return aTerminal(s) >= o.aTasks;
    },
    (s) => delta(s.terminal, before.terminal, 'noop') + delta(s.dispatched, before.dispatched, 'A'),
    (s) => {
      const aStarted = delta(s.dispatched, before.dispatched, 'A');
      if (allStartedAt === null && aStarted >= o.aTasks) allStartedAt = s.at;
      if (s.eventLoopMaxMs !== null) {
        loopMax.push(s.eventLoopMaxMs);
        loopSinceTimeline = Math.max(loopSinceTimeline, s.eventLoopMaxMs);
      }
      if (s.at - lastTimeline >= 1000) {
        lastTimeline = s.at;
        timeline.push({
          t_s: round((s.at - t0) / 1000, 2) as number,
          a_started: aStarted,
          b_started: delta(s.dispatched, before.dispatched, 'B'),
          a_ready: s.ready.get('A') ?? 0,
          b_ready: s.ready.get('B') ?? 0,
          pending: s.depth.get('PENDING') ?? 0,
          event_loop_max_ms: round(loopSinceTimeline, 1) as number,
        });
        loopSinceTimeline = 0;
      }
    },
  );
  const [a, drained] = await Promise.all([submitting, draining]);
  await pacer.stop();
  const bDone = await pollUntil(
    control,
    o.pollMs,
    (s) => delta(s.terminal, before.terminal, 'noop') >= o.aTasks + pacer.tasks.length,
    (s) => delta(s.terminal, before.terminal, 'noop'),
  );
  const resources = sampler.endPhase();
  const load_at_end = loadavg1m();
  log(`A drained after ${((drained.snap.at - a.first_send_at) / 1000).toFixed(2)} s; reading ${pacer.tasks.length} B tasks back`);

  const bTasks = await fetchTasks(
    control,
    pacer.tasks.map((t) => t.task_id),
    o.lagConcurrency,
  );
  const aSample = await fetchTasks(control, sample(a.ids.flat(), 1000), o.lagConcurrency);
  const bLag = splitLag(bTasks, a.last_ack_wall);
  const drainS = (drained.snap.at - a.first_send_at) / 1000;
  const p99 = (bLag as { p99_ms: number | null }).p99_ms;
  return {
    mode: 'run_now',
    a: {
      tasks: o.aTasks,
      submit: backlogSummary(a),
      drain_s: round(drainS, 3),
      drain_tasks_per_s: round(o.aTasks / drainS, 0),
      drain_after_last_ack_s: round((drained.snap.at - a.last_ack_at) / 1000, 3),
      all_started_s: allStartedAt === null ? null : round(((allStartedAt as number) - a.first_send_at) / 1000, 3),
      dispatch_lag_sample: lagReport(aSample, o.aTasks),
      polls: drained.polls,
    },
    b: {
      submissions: pacer.summary(),
      dispatch_lag: bLag,
      start_after_send: startAfterSend(bTasks, pacer),
      lag_by_second_of_due: lagBySecond(bTasks, a.first_send_wall),
    },
    terminal_by_type: deltas(bDone.snap.terminal, before.terminal),
    started_by_tenant: deltas(bDone.snap.dispatched, before.dispatched),
    target: { b_p99_ms: B_P99_TARGET_MS, met: p99 !== null && p99 <= B_P99_TARGET_MS },
    service_event_loop_max_per_scrape: distribution(loopMax),
    timeline,
    resources,
    load_at_start,
    load_at_end,
  };
}

/** The whole fairness scenario on one service: baseline (B alone), then A and B together. */
export async function fairnessScenario(ss: ScenarioService, o: TenantsOptions): Promise<Record<string, unknown>> {
  const bBody = JSON.stringify({ task_type: 'noop', metadata: { tenant_id: 'B' } });
  const out: Record<string, unknown> = {};
  if (o.baselineSeconds > 0) {
    log(`baseline: B alone, one task every ${o.bIntervalMs} ms for ${o.baselineSeconds} s`);
    out.baseline_b_alone = await baseline(ss, o, bBody);
    await sleep(1000); // a quiet gap
  }
  if (o.aMode === 'due_at_once') {
    log(`burst: A submits ${o.aTasks} tasks due at one second ahead while B goes on, until A has drained`);
    out.with_a_burst = await burstContention(ss, o, bBody);
  } else {
    log(`contention: A submits ${o.aTasks} tasks due now while B goes on`);
    out.with_a_backlog = await contention(ss, o, bBody);
  }
  return out;
}
