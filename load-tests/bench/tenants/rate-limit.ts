/**
 * Scenario 2, task-type rate limit (issue 5, must-show 2). The service's config file limits
 * `send_email` starts to `--rl-rate` (100) per second with burst `--rl-burst` (10).
 *
 * 1. baseline: `--rl-noop-tasks` (1,000) `noop` tasks alone; their drain time (first send → all
 *    terminal in /metrics), and the part of it after their last acknowledgement.
 * 2. limited: `--rl-tasks` (3,000) `send_email` tasks and the same `noop` tasks submitted at the
 *    same instant (batch requests all in flight together). The noop drain time (first send → all
 *    noop terminal in /metrics) shows whether the limited type slows the others; once every
 *    send_email task is terminal, all of them are read back through the list endpoint and their
 *    `started_at` give: the most starts in any sliding 1 s window (at most rate + burst allowed:
 *    110), first → last start, and the mean rate.
 */
import { performance } from 'node:perf_hooks';
import type { TreeSampler } from '../proc-sampler';
import { loadavg1m } from '../results-file';
import { sleep } from '../run-control';
import { distribution, round } from '../stats';
import { ScenarioService } from './scenario-service';
import { delta, deltas, pollUntil, scrapeTenants, TenantSnapshot } from './tenant-metrics';
import { backlogBodies, backlogSummary, getJson, ListedTask, listTasksOfType, submitBacklog } from './tenants-api';
import type { TenantsOptions } from './tenants-options';
import { maxInSlidingWindow, minMax, perBucket } from './window-stats';

const log = (msg: string) => process.stderr.write(`[bench-tenants] rate_limit: ${msg}\n`);

/** Dispatch lag (started_at − due_at, ms) of listed tasks. */
const lagOf = (tasks: ListedTask[]) =>
  distribution(
    tasks.filter((t) => t.started_at && t.due_at).map((t) => Date.parse(t.started_at as string) - Date.parse(t.due_at as string)),
  );

/** `n` noop tasks alone: drain time from the first send to the scrape that shows them terminal. */
async function noopAlone(ss: ScenarioService, o: TenantsOptions): Promise<Record<string, unknown>> {
  const control = ss.client(4);
  const before = await scrapeTenants(control);
  const sub = await submitBacklog(
    ss.client(o.concurrency * 2),
    backlogBodies({ task_type: 'noop' }, o.rlNoopTasks, o.batchSize),
    o.concurrency,
  );
  const done = await pollUntil(
    control,
    o.pollMs,
    (s) => delta(s.terminal, before.terminal, 'noop') >= o.rlNoopTasks,
    (s) => delta(s.terminal, before.terminal, 'noop'),
  );
  return {
    tasks: o.rlNoopTasks,
    submit: backlogSummary(sub),
    drain_s: round((done.snap.at - sub.first_send_at) / 1000, 3),
    drain_after_last_ack_s: round((done.snap.at - sub.last_ack_at) / 1000, 3),
  };
}

/** Figures of the limited type's start instants. */
function startFigures(tasks: ListedTask[], o: TenantsOptions): Record<string, unknown> {
  const starts = tasks
    .filter((t) => t.started_at)
    .map((t) => Date.parse(t.started_at as string))
    .sort((a, b) => a - b);
  if (starts.length === 0) return { started: 0 };
  const { min, max } = minMax(starts);
  const spanS = (max - min) / 1000;
  const window = maxInSlidingWindow(starts, 1000);
  const allowed = Math.floor(o.rlRate + o.rlBurst);
  const expectedSpanS = Math.max(0, (starts.length - o.rlBurst) / o.rlRate);
  return {
    started: starts.length,
    not_succeeded: tasks.filter((t) => t.status !== 'SUCCEEDED').length,
    max_starts_in_any_1s_window: window.count,
    max_window_starts_at: window.window_start_ms === null ? null : new Date(window.window_start_ms).toISOString(),
    max_starts_in_any_100ms_window: maxInSlidingWindow(starts, 100).count,
    allowed_in_any_1s_window: allowed,
    first_to_last_start_s: round(spanS, 3),
    expected_first_to_last_s: round(expectedSpanS, 2),
    mean_rate_per_s: round(spanS > 0 ? (starts.length - 1) / spanS : null, 2),
    starts_per_second: perBucket(starts, min, 1000),
    dispatch_lag: lagOf(tasks),
    target: { max_in_1s_window: allowed, met: window.count <= allowed },
  };
}

/** The rate-limit scenario on one service. */
export async function rateLimitScenario(ss: ScenarioService, o: TenantsOptions): Promise<Record<string, unknown>> {
  const control = ss.client(4);
  const sampler = ss.svc.sampler as TreeSampler;
  const limitsInForce = await getJson(control, '/api/v1/rate-limits');

  let baseline: Record<string, unknown> | null = null;
  if (o.rlNoopTasks > 0) {
    log(`baseline: ${o.rlNoopTasks} noop alone`);
    baseline = await noopAlone(ss, o);
    await sleep(1000);
  }

  log(`limited: ${o.rlTasks} send_email + ${o.rlNoopTasks} noop at once`);
  const load_at_start = loadavg1m();
  const before = await scrapeTenants(control);
  sampler.beginPhase();
  const emailBodies = backlogBodies({ task_type: 'send_email' }, o.rlTasks, o.batchSize);
  const noopBodies = o.rlNoopTasks > 0 ? backlogBodies({ task_type: 'noop' }, o.rlNoopTasks, o.batchSize) : [];
  const t0 = performance.now();
  const cancel = { failed: false };
  const failOnError = <T>(p: Promise<T>) =>
    p.catch((err: unknown) => {
      cancel.failed = true;
      throw err;
    });
  const emailSub = failOnError(submitBacklog(ss.client(emailBodies.length + 2), emailBodies, emailBodies.length));
  const noopSub = failOnError(submitBacklog(ss.client(noopBodies.length + 2), noopBodies, Math.max(1, noopBodies.length), true));
  const emailTerminal = (s: TenantSnapshot) => delta(s.terminal, before.terminal, 'send_email');
  const noopTerminal = (s: TenantSnapshot) => delta(s.terminal, before.terminal, 'noop');
  let noopDoneAt: number | null = null;
  const allDone = pollUntil(
    control,
    o.pollMs,
    (s) => {
      if (cancel.failed) throw new Error('a submission failed');
      if (noopDoneAt === null && noopTerminal(s) >= o.rlNoopTasks) noopDoneAt = s.at;
      return noopDoneAt !== null && emailTerminal(s) >= o.rlTasks;
    },
    (s) => emailTerminal(s) + noopTerminal(s),
  );
  const [email, noop, done] = await Promise.all([emailSub, noopSub, allDone]);
  const resources = sampler.endPhase();
  const load_at_end = loadavg1m();

  const emailTasks = await listTasksOfType(control, 'send_email');
  const alongside = new Set(noop.ids.flat());
  const noopTasks = (await listTasksOfType(control, 'noop')).filter((t) => alongside.has(t.task_id));
  const noopDrainS = noopDoneAt === null ? null : ((noopDoneAt as number) - t0) / 1000;
  const baseDrain = (baseline?.drain_s as number | null | undefined) ?? null;
  return {
    rate_limit_in_force: limitsInForce,
    noop_alone: baseline,
    send_email: {
      tasks: o.rlTasks,
      submit: backlogSummary(email),
      ...startFigures(emailTasks, o),
      all_terminal_s: round((done.snap.at - t0) / 1000, 3),
    },
    noop_alongside: {
      tasks: o.rlNoopTasks,
      submit: backlogSummary(noop),
      drain_s: round(noopDrainS, 3),
      drain_after_last_ack_s: noopDoneAt === null ? null : round(((noopDoneAt as number) - noop.last_ack_at) / 1000, 3),
      drain_vs_alone: baseDrain && noopDrainS !== null ? round(noopDrainS / baseDrain, 2) : null,
      dispatch_lag: lagOf(noopTasks),
    },
    terminal_by_type: deltas(done.snap.terminal, before.terminal),
    rate_limit_waits: deltas(done.snap.rateLimitWaits, before.rateLimitWaits),
    resources,
    load_at_start,
    load_at_end,
  };
}
