/**
 * Scenario b, paced: single-task submissions at a fixed rate, sent at their slot times (one burst
 * per 10 ms tick); ack latency and the dispatch-lag distribution of those tasks.
 */
import { performance } from 'node:perf_hooks';
import type { Options } from '../cli-options';
import { waitForCompletions } from '../completion-wait';
import { HttpClient, retryAfterMs } from '../http-client';
import { histogramDelta, scrape } from '../metrics';
import type { TreeSampler } from '../proc-sampler';
import { checkAborted, sleep } from '../run-control';
import type { Service } from '../service-process';
import { distribution, round, sample } from '../stats';
import { fetchTasks, lagReport, SubmitAck } from '../task-lag';

export async function pacedScenario(client: HttpClient, svc: Service, opts: Options): Promise<Record<string, unknown>> {
  const rate = opts.rate;
  const total = Math.max(1, Math.round(rate * opts.pacedSeconds));
  const interval = 1000 / rate;
  const tickMs = 10;
  const body = JSON.stringify({ task_type: 'noop' });

  const baseline = await scrape(client);
  const sampler = svc.sampler as TreeSampler;
  sampler.beginPhase();

  const ids: string[] = [];
  const ackLat: number[] = [];
  const sendLate: number[] = [];
  const errors: string[] = [];
  let throttled = 0;
  let sent = 0;
  let inflight = 0;
  let maxInflight = 0;
  let ticks = 0;
  const pending: Array<Promise<void>> = [];

  const sendOne = async (slot: number): Promise<void> => {
    inflight++;
    maxInflight = Math.max(maxInflight, inflight);
    try {
      for (let tries = 0; ; tries++) {
        const s = performance.now();
        const res = await client.request('POST', '/api/v1/tasks', body, 30_000);
        if (res.status === 202) {
          ackLat.push(performance.now() - s);
          ids.push((JSON.parse(res.body) as SubmitAck).task_id);
          return;
        }
        if ((res.status === 429 || res.status === 503) && tries < 20) {
          throttled++;
          await sleep(retryAfterMs(res));
          continue;
        }
        errors.push(`slot ${slot}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
        return;
      }
    } catch (err) {
      errors.push(`slot ${slot}: ${(err as Error).message}`);
    } finally {
      inflight--;
    }
  };

  const t0 = performance.now();
  while (sent < total) {
    checkAborted();
    const now = performance.now();
    const due = Math.min(total, Math.floor((now - t0) / interval) + 1);
    for (; sent < due; sent++) {
      sendLate.push(now - (t0 + sent * interval));
      pending.push(sendOne(sent));
    }
    ticks++;
    if (sent >= total) break;
    const nextTick = t0 + ticks * tickMs;
    await sleep(nextTick - performance.now());
    if (errors.length > 100) throw new Error(`paced: too many failed submissions, e.g. ${errors[0]}`);
  }
  const lastSend = performance.now();
  await Promise.all(pending);
  const lastAck = performance.now();
  checkAborted();
  if (ids.length === 0) throw new Error(`paced: no submission acknowledged, e.g. ${errors[0]}`);

  const wait = await waitForCompletions(client, baseline, ids.length, opts.pollMs, t0, 30_000);
  const resources = sampler.endPhase();
  const fetched = await fetchTasks(client, sample(ids, opts.pacedLagSample));
  const lag = lagReport(fetched, ids.length);
  const end = await scrape(client);
  const sendSpanS = (lastSend - t0) / 1000;

  return {
    target_rate_per_s: rate,
    seconds: opts.pacedSeconds,
    tick_ms: tickMs,
    planned: total,
    acknowledged: ids.length,
    failed_submissions: errors.length,
    first_errors: errors.slice(0, 5),
    throttled_responses: throttled,
    achieved_send_rate_per_s: round(sendSpanS > 0 ? (total - 1) / sendSpanS : total, 0),
    send_lateness_vs_slot: distribution(sendLate),
    ack_latency: distribution(ackLat),
    max_inflight: maxInflight,
    drain_after_last_ack_s: round((wait.done_at - lastAck) / 1000, 3),
    terminal_counts: wait.counts,
    dispatch_lag: lag,
    dispatch_lag_server_histogram: histogramDelta(baseline, end),
    target: { p99_ms: 50, met: lag.p99_ms !== null && lag.p99_ms <= 50 },
    resources,
  };
}
