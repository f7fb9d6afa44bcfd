/**
 * Scenario a, throughput: N noop tasks in batch requests with a few in flight; submit rate,
 * end-to-end completion rate (read from /metrics), dispatch lag of a sample, resources.
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

/** The options the scenario reads (bench-throughput's, or bench-scale's). */
export type ThroughputOptions = Pick<Options, 'tasks' | 'batchSize' | 'concurrency' | 'pollMs' | 'lagSample'>;

export async function throughputScenario(client: HttpClient, svc: Service, opts: ThroughputOptions): Promise<Record<string, unknown>> {
  const n = opts.tasks;
  const nBatches = Math.ceil(n / opts.batchSize);
  const bodyOf = (size: number) => JSON.stringify({ tasks: Array.from({ length: size }, () => ({ task_type: 'noop' })) });
  const fullBody = bodyOf(opts.batchSize);
  const lastSize = n - (nBatches - 1) * opts.batchSize;
  const lastBody = lastSize === opts.batchSize ? fullBody : bodyOf(lastSize);

  const baseline = await scrape(client);
  const sampler = svc.sampler as TreeSampler;
  sampler.beginPhase();

  const ids: string[] = [];
  const reqLat: number[] = [];
  let throttled = 0;
  let next = 0;
  const t0 = performance.now();
  let lastAck = t0;

  // Completion poller runs from the first submit (its cost is part of what is measured).
  const cancel = { cancelled: false };
  const waiting = waitForCompletions(client, baseline, n, opts.pollMs, t0, 30_000, cancel);
  waiting.catch(() => undefined); // observed below

  const lanes = Array.from({ length: Math.min(opts.concurrency, nBatches) }, async () => {
    for (;;) {
      checkAborted();
      if (cancel.cancelled) return;
      const i = next++;
      if (i >= nBatches) return;
      const body = i === nBatches - 1 ? lastBody : fullBody;
      for (let tries = 0; ; tries++) {
        const s = performance.now();
        const res = await client.request('POST', '/api/v1/tasks/batch', body, 60_000);
        if (res.status === 202) {
          const e = performance.now();
          reqLat.push(e - s);
          lastAck = Math.max(lastAck, e);
          for (const t of (JSON.parse(res.body) as { tasks: SubmitAck[] }).tasks) ids.push(t.task_id);
          break;
        }
        if ((res.status === 429 || res.status === 503) && tries < 100) {
          throttled++;
          await sleep(retryAfterMs(res));
          continue;
        }
        cancel.cancelled = true;
        throw new Error(`POST /api/v1/tasks/batch: HTTP ${res.status} ${res.body.slice(0, 300)}`);
      }
    }
  });
  try {
    await Promise.all(lanes);
  } catch (err) {
    cancel.cancelled = true;
    throw err;
  }
  const submitS = (lastAck - t0) / 1000;
  if (ids.length !== n) throw new Error(`acknowledged ${ids.length} task ids, expected ${n}`);

  const wait = await waiting;
  const e2eS = (wait.done_at - t0) / 1000;
  const resources = sampler.endPhase();

  const lagStart = performance.now();
  const fetched = await fetchTasks(client, sample(ids, opts.lagSample));
  const lag = lagReport(fetched, n);
  const end = await scrape(client);

  return {
    tasks: n,
    batch_size: opts.batchSize,
    concurrency: opts.concurrency,
    submit: {
      seconds: round(submitS, 3),
      tasks_per_s: round(n / submitS, 0),
      batch_requests: nBatches,
      throttled_responses: throttled,
      batch_latency: distribution(reqLat),
    },
    end_to_end: {
      seconds: round(e2eS, 3),
      tasks_per_s: round(n / e2eS, 0),
      drain_after_last_ack_s: round((wait.done_at - lastAck) / 1000, 3),
      terminal_counts: wait.counts,
      poll_ms: opts.pollMs,
      polls: wait.polls,
      max_scrape_ms: wait.max_scrape_ms,
      max_pending_depth: wait.max_pending,
      timeline: wait.timeline,
    },
    dispatch_lag: lag,
    dispatch_lag_server_histogram: histogramDelta(baseline, end),
    lag_fetch_s: round((performance.now() - lagStart) / 1000, 2),
    resources,
  };
}
