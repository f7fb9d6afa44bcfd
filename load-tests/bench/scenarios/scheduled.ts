/**
 * Scenario c, scheduled: a batch of tasks all scheduled at the same instant; how late they
 * started relative to scheduled_at, and whether any started early.
 */
import { performance } from 'node:perf_hooks';
import type { Options } from '../cli-options';
import { waitForCompletions } from '../completion-wait';
import type { HttpClient } from '../http-client';
import { scrape } from '../metrics';
import type { TreeSampler } from '../proc-sampler';
import type { Service } from '../service-process';
import { distribution } from '../stats';
import { fetchTasks, SubmitAck } from '../task-lag';

export async function scheduledScenario(client: HttpClient, svc: Service, opts: Options): Promise<Record<string, unknown>> {
  const count = opts.scheduledCount;
  const baseline = await scrape(client);
  const sampler = svc.sampler as TreeSampler;
  sampler.beginPhase();
  const target = Date.now() + opts.scheduledDelayMs;
  const scheduledAt = new Date(target).toISOString();
  const body = JSON.stringify({ tasks: Array.from({ length: count }, () => ({ task_type: 'noop', scheduled_at: scheduledAt })) });
  const res = await client.request('POST', '/api/v1/tasks/batch', body, 30_000);
  const ackAt = Date.now();
  if (res.status !== 202) throw new Error(`scheduled: POST /api/v1/tasks/batch: HTTP ${res.status} ${res.body.slice(0, 300)}`);
  const acks = (JSON.parse(res.body) as { tasks: SubmitAck[] }).tasks;
  const notScheduled = acks.filter((a) => a.status !== 'SCHEDULED').length;
  const origin = performance.now();
  const wait = await waitForCompletions(client, baseline, count, opts.pollMs, origin, opts.scheduledDelayMs + 30_000);
  const resources = sampler.endPhase();
  const tasks = await fetchTasks(
    client,
    acks.map((a) => a.task_id),
  );
  const late: number[] = [];
  let early = 0;
  let dueMismatch = 0;
  let notOk = 0;
  for (const t of tasks) {
    if (t.status !== 'SUCCEEDED') notOk++;
    if (t.due_at && Date.parse(t.due_at) !== target) dueMismatch++;
    if (!t.started_at) continue;
    const l = Date.parse(t.started_at) - target;
    if (l < 0) early++;
    late.push(l);
  }
  const d = distribution(late);
  return {
    tasks: count,
    scheduled_at: scheduledAt,
    delay_ms: opts.scheduledDelayMs,
    ack_before_scheduled_at_ms: target - ackAt,
    acks_not_scheduled: notScheduled,
    not_succeeded: notOk,
    due_at_mismatch: dueMismatch,
    lateness: d,
    started_early: early,
    none_started_early: early === 0,
    terminal_counts: wait.counts,
    resources,
  };
}
