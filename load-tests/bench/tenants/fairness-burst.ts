/**
 * The fairness scenario's `due_at_once` contention phase (issue 31, must-show 4): tenant A's
 * `--a-tasks` `noop` tasks all have `scheduled_at` the same whole second, `--a-due-lead-s` ahead
 * of A's first send (auto: long enough to submit them all first), sent in batches before it; so
 * the burst is every A task coming due at one instant. Tenant B's trickle (one task every
 * `--b-interval-ms`) runs from A's first send until A has drained.
 *
 * Windows, by B's due_at (lag) and by B's send instant (ack):
 * - `a_submitting`: from A's first send to A's last acknowledgement;
 * - `before_due`: from A's first send to A's due second (contains a_submitting when A was in time);
 * - `drain`: from A's due second to the /metrics scrape showing every A task terminal.
 * The target is B's p99 dispatch lag ≤ 100 ms and B's p99 ack ≤ 100 ms in the drain window.
 * A's drain time runs from the due second to that scrape.
 */
import { performance } from 'node:perf_hooks';
import type { TreeSampler } from '../proc-sampler';
import { loadavg1m } from '../results-file';
import { distribution, round, sample } from '../stats';
import { fetchTasks, lagReport } from '../task-lag';
import { acksSentIn, lagBySecond, lagsDueIn, startAfterSend } from './fairness-lag';
import { Pacer } from './pacer';
import { ScenarioService } from './scenario-service';
import { delta, deltas, pollUntil, scrapeTenants, TenantSnapshot } from './tenant-metrics';
import { backlogBodies, backlogSummary, submitBacklog } from './tenants-api';
import type { TenantsOptions } from './tenants-options';

const log = (msg: string) => process.stderr.write(`[bench-tenants] fairness: ${msg}\n`);

/** Sockets of B's client: more than B ever has in flight, so no request queues in the harness. */
const PACER_SOCKETS = 512;

/** The bounds on B while A's burst drains (p99, ms). */
export const BURST_B_LAG_P99_MS = 100;
export const BURST_B_ACK_P99_MS = 100;

/**
 * Seconds between A's first send and its due second when `--a-due-lead-s` is 0 (auto): 10 s plus
 * 1 s per 10,000 tasks (submission measured at 25,000–30,000 tasks/s on 2 cores, so a loaded
 * machine still finishes before the due second).
 */
export function autoDueLeadS(aTasks: number): number {
  return 10 + Math.ceil(aTasks / 10_000);
}

/** A's burst due at one second and B's trickle, until A has drained. */
export async function burstContention(ss: ScenarioService, o: TenantsOptions, bBody: string): Promise<Record<string, unknown>> {
  const control = ss.client(o.lagConcurrency + 2);
  const aClient = ss.client(o.concurrency * 2);
  const sampler = ss.svc.sampler as TreeSampler;
  const leadS = o.aDueLeadS > 0 ? o.aDueLeadS : autoDueLeadS(o.aTasks);
  const dueWall = Math.ceil((Date.now() + leadS * 1000) / 1000) * 1000;
  const duePerf = performance.now() + (dueWall - Date.now());
  const scheduledAt = new Date(dueWall).toISOString();
  const bodies = backlogBodies({ task_type: 'noop', scheduled_at: scheduledAt, metadata: { tenant_id: 'A' } }, o.aTasks, o.batchSize);
  log(`A's ${o.aTasks} tasks are due at ${scheduledAt} (${leadS} s ahead)`);
  const load_at_start = loadavg1m();
  const before = await scrapeTenants(control);
  sampler.beginPhase();

  const pacer = new Pacer(ss.client(PACER_SOCKETS), bBody, o.bIntervalMs);
  const t0 = performance.now();
  const t0Wall = Date.now();
  pacer.start();
  const cancel = { failed: false };
  const submitting = submitBacklog(aClient, bodies, o.concurrency, true).catch((err: unknown) => {
    cancel.failed = true;
    throw err;
  });
  let allStartedAt: number | null = null;
  let lastTimeline = -Infinity;
  let loopSinceTimeline = 0;
  const loopBeforeDue: number[] = [];
  const loopDrain: number[] = [];
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
        (s.at < duePerf ? loopBeforeDue : loopDrain).push(s.eventLoopMaxMs);
        loopSinceTimeline = Math.max(loopSinceTimeline, s.eventLoopMaxMs);
      }
      if (s.at - lastTimeline >= 1000) {
        lastTimeline = s.at;
        timeline.push({
          t_s: round((s.at - t0) / 1000, 2) as number,
          t_after_due_s: round((s.at - duePerf) / 1000, 2) as number,
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
  const drainedWall = Date.now() - (performance.now() - drained.snap.at);
  await pacer.stop();
  const bDone = await pollUntil(
    control,
    o.pollMs,
    (s) => delta(s.terminal, before.terminal, 'noop') >= o.aTasks + pacer.tasks.length,
    (s) => delta(s.terminal, before.terminal, 'noop'),
  );
  const resources = sampler.endPhase();
  const load_at_end = loadavg1m();
  const drainS = (drained.snap.at - duePerf) / 1000;
  log(`A drained ${drainS.toFixed(2)} s after its due second; reading ${pacer.tasks.length} B tasks back`);

  const bTasks = await fetchTasks(
    control,
    pacer.tasks.map((t) => t.task_id),
    o.lagConcurrency,
  );
  const aSample = await fetchTasks(control, sample(a.ids.flat(), 1000), o.lagConcurrency);
  const lag = {
    all: lagReport(bTasks, bTasks.length),
    a_submitting: lagsDueIn(bTasks, t0Wall, a.last_ack_wall),
    before_due: lagsDueIn(bTasks, t0Wall, dueWall),
    drain: lagsDueIn(bTasks, dueWall, drainedWall),
  };
  const ack = {
    all: pacer.summary().ack_latency,
    a_submitting: acksSentIn(pacer, t0Wall, a.last_ack_wall),
    before_due: acksSentIn(pacer, t0Wall, dueWall),
    drain: acksSentIn(pacer, dueWall, drainedWall),
  };
  const lagMet = lag.drain.p99_ms !== null && lag.drain.p99_ms <= BURST_B_LAG_P99_MS;
  const ackMet = ack.drain.p99_ms !== null && ack.drain.p99_ms <= BURST_B_ACK_P99_MS;
  return {
    mode: 'due_at_once',
    a: {
      tasks: o.aTasks,
      due_at: scheduledAt,
      due_lead_s: leadS,
      submit: backlogSummary(a),
      last_ack_before_due_s: round((dueWall - a.last_ack_wall) / 1000, 3),
      drain_s: round(drainS, 3),
      drain_tasks_per_s: round(o.aTasks / drainS, 0),
      all_started_after_due_s: allStartedAt === null ? null : round(((allStartedAt as number) - duePerf) / 1000, 3),
      dispatch_lag_sample: lagReport(aSample, o.aTasks),
      polls: drained.polls,
    },
    b: {
      submissions: pacer.summary(),
      dispatch_lag: lag,
      submission_ack: ack,
      start_after_send: startAfterSend(bTasks, pacer),
      lag_by_second_of_due: lagBySecond(bTasks, dueWall),
    },
    terminal_by_type: deltas(bDone.snap.terminal, before.terminal),
    started_by_tenant: deltas(bDone.snap.dispatched, before.dispatched),
    target: {
      b_lag_p99_ms: BURST_B_LAG_P99_MS,
      b_ack_p99_ms: BURST_B_ACK_P99_MS,
      lag_met: lagMet,
      ack_met: ackMet,
      met: lagMet && ackMet,
    },
    service_event_loop_max_per_scrape: { before_due: distribution(loopBeforeDue), drain: distribution(loopDrain) },
    timeline,
    resources,
    load_at_start,
    load_at_end,
  };
}
