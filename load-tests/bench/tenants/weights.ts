/**
 * Scenario 3, tenant weights: tenant C gets weight `--weight-c` (3) and tenant D weight 1
 * (`PUT /api/v1/tenants/{id}` `{weight}`); both submit `--weight-tasks` (20,000) `noop` tasks
 * due now, in alternating batch requests, so both have a backlog from the first batches on.
 *
 * Once all are terminal every task is read back through the list endpoint. Over the interval in
 * which both tenants had work, [later of the two first starts, earlier of the two last starts],
 * the ratio of C's starts to D's should be about the weight ratio (smooth weighted round-robin
 * between tenants). The same ratio from the `scheduler_tenant_dispatched_total` counters (scrapes
 * while both tenants still had unstarted tasks) is given as a cross-check, and per-second ratios
 * show whether it holds throughout.
 */
import { performance } from 'node:perf_hooks';
import type { TreeSampler } from '../proc-sampler';
import { loadavg1m } from '../results-file';
import { round } from '../stats';
import { ScenarioService } from './scenario-service';
import { delta, pollUntil, scrapeTenants, TenantSnapshot } from './tenant-metrics';
import { backlogBodies, backlogSummary, getJson, listTasksOfType, putTenantWeight, submitBacklog } from './tenants-api';
import type { TenantsOptions } from './tenants-options';
import { minMax, perBucket, shareIn } from './window-stats';

const log = (msg: string) => process.stderr.write(`[bench-tenants] weights: ${msg}\n`);

/** C ÷ D between the first scrape where both had started and the last where both had tasks left. */
function metricsRatio(scrapes: Array<{ c: number; d: number }>, n: number): Record<string, unknown> {
  const first = scrapes.findIndex((s) => s.c > 0 && s.d > 0);
  let last = -1;
  for (let i = scrapes.length - 1; i >= 0; i--) {
    if (scrapes[i].c < n && scrapes[i].d < n) {
      last = i;
      break;
    }
  }
  if (first < 0 || last <= first) return { ratio: null, scrapes: scrapes.length };
  const c = scrapes[last].c - scrapes[first].c;
  const d = scrapes[last].d - scrapes[first].d;
  return { c_started: c, d_started: d, ratio: d > 0 ? round(c / d, 3) : null, scrapes_used: last - first + 1 };
}

/** The weights scenario on one service. */
export async function weightsScenario(ss: ScenarioService, o: TenantsOptions): Promise<Record<string, unknown>> {
  const control = ss.client(4);
  const sampler = ss.svc.sampler as TreeSampler;
  const settings = [await putTenantWeight(control, 'C', o.weightC), await putTenantWeight(control, 'D', 1)];
  const listed = await getJson(control, '/api/v1/tenants');

  const cBodies = backlogBodies({ task_type: 'noop', metadata: { tenant_id: 'C' } }, o.weightTasks, o.batchSize);
  const dBodies = backlogBodies({ task_type: 'noop', metadata: { tenant_id: 'D' } }, o.weightTasks, o.batchSize);
  const bodies: string[] = [];
  for (let i = 0; i < cBodies.length; i++) bodies.push(cBodies[i], dBodies[i]);

  log(`C (weight ${o.weightC}) and D (weight 1), ${o.weightTasks} noop each`);
  const load_at_start = loadavg1m();
  const before = await scrapeTenants(control);
  sampler.beginPhase();
  const t0 = performance.now();
  const cancel = { failed: false };
  const submitting = submitBacklog(ss.client(o.concurrency * 2), bodies, o.concurrency).catch((err: unknown) => {
    cancel.failed = true;
    throw err;
  });
  const scrapes: Array<{ c: number; d: number }> = [];
  const timeline: Array<Record<string, number>> = [];
  let lastTimeline = -Infinity;
  const terminal = (s: TenantSnapshot) => delta(s.terminal, before.terminal, 'noop');
  const draining = pollUntil(
    control,
    o.pollMs,
    (s) => {
      if (cancel.failed) throw new Error('a submission failed');
      return terminal(s) >= 2 * o.weightTasks;
    },
    terminal,
    (s) => {
      const c = delta(s.dispatched, before.dispatched, 'C');
      const d = delta(s.dispatched, before.dispatched, 'D');
      scrapes.push({ c, d });
      if (s.at - lastTimeline >= 1000) {
        lastTimeline = s.at;
        timeline.push({
          t_s: round((s.at - t0) / 1000, 2) as number,
          c_started: c,
          d_started: d,
          c_ready: s.ready.get('C') ?? 0,
          d_ready: s.ready.get('D') ?? 0,
        });
      }
    },
  );
  const [sub, done] = await Promise.all([submitting, draining]);
  const resources = sampler.endPhase();
  const load_at_end = loadavg1m();

  const tasks = await listTasksOfType(control, 'noop');
  const startsOf = (tenant: string) =>
    tasks
      .filter((t) => t.metadata?.tenant_id === tenant && t.started_at)
      .map((t) => Date.parse(t.started_at as string))
      .sort((a, b) => a - b);
  const c = startsOf('C');
  const d = startsOf('D');
  if (c.length === 0 || d.length === 0) throw new Error(`read back ${c.length} C and ${d.length} D starts`);
  const cr = minMax(c);
  const dr = minMax(d);
  const from = Math.max(cr.min, dr.min);
  const to = Math.min(cr.max, dr.max);
  const both = shareIn(c, d, from, to);
  const origin = Math.min(cr.min, dr.min);
  const cPerS = perBucket(
    c.filter((t) => t >= from && t <= to),
    from,
    1000,
  );
  const dPerS = perBucket(
    d.filter((t) => t >= from && t <= to),
    from,
    1000,
  );
  const perSecond = cPerS.map((n, i) => ({
    c: n,
    d: dPerS[i] ?? 0,
    ratio: (dPerS[i] ?? 0) > 0 ? round(n / (dPerS[i] as number), 2) : null,
  }));
  return {
    weights: { C: o.weightC, D: 1 },
    settings_answered: settings,
    tenants_listed: listed,
    tasks_per_tenant: o.weightTasks,
    submit: backlogSummary(sub),
    all_terminal_s: round((done.snap.at - t0) / 1000, 3),
    both_busy: {
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      seconds: round((to - from) / 1000, 3),
      c_starts: both.a,
      d_starts: both.b,
      ratio_c_to_d: both.ratio,
      expected_ratio: o.weightC,
      per_second: perSecond,
    },
    metrics_cross_check: metricsRatio(scrapes, o.weightTasks),
    last_start_s: { C: round((cr.max - origin) / 1000, 3), D: round((dr.max - origin) / 1000, 3) },
    read_back: { c: c.length, d: d.length, not_succeeded: tasks.filter((t) => t.status !== 'SUCCEEDED').length },
    timeline,
    resources,
    load_at_start,
    load_at_end,
  };
}
