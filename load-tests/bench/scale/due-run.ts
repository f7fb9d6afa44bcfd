/**
 * bench-scale's due run (`--due-tasks N`): N SCHEDULED noop tasks written into a phase's store
 * before its service starts, all due at one instant `--due-after-s` after they were written, so
 * they come due while the service runs and go through the due path (the owners' horizon reads on
 * the waiting indexes, promotion, claim), beside the big store's millions of tasks due later (or
 * in an otherwise empty store). The measure is the rate at which the burst of due tasks runs:
 * N ÷ (the service's last finish − the due instant).
 */
import { performance } from 'node:perf_hooks';
import { waitForCompletions } from '../completion-wait';
import type { HttpClient } from '../http-client';
import { histogramDelta, scrape } from '../metrics';
import { sleep } from '../run-control';
import { round } from '../stats';
import { fillStore } from './fill-store';

/** The due tasks written into one phase's store, and when they come due. */
export interface DueBatch {
  count: number;
  /** Epoch ms at which every one of them is due. */
  dueAtMs: number;
  /** The same instant on this process's `performance.now()` clock. */
  duePerf: number;
  /** How long writing them into the store took (ms). */
  write_ms: number;
}

/**
 * Writes `count` SCHEDULED noop tasks due `dueAfterS` from now into `file` (created and migrated
 * if missing), with the store's own insert operation (fill-store.ts).
 * @returns the batch, for {@link dueRun}
 */
export async function writeDueBatch(file: string, count: number, partitions: number, dueAfterS: number): Promise<DueBatch> {
  const dueAtMs = Date.now() + dueAfterS * 1000;
  const duePerf = performance.now() + (dueAtMs - Date.now());
  const writeMs = await fillStore({ file, count, partitions, spreadHours: 0, startAfterMs: 0, firstDueAt: dueAtMs });
  return { count, dueAtMs, duePerf, write_ms: round(writeMs, 0) as number };
}

/**
 * Waits, on a service that is ready, for the batch's tasks to come due and finish.
 * @returns rates and lags: `tasks_per_s` = count ÷ (last finish − due instant), the finish taken from
 *   the service's `scheduler_last_task_finished_timestamp_seconds` (else from the scrape that saw
 *   them all), and the server's dispatch-lag histogram over the run
 * @throws Error when the service was ready only after the tasks came due (raise `--due-after-s`),
 *   or when the tasks stall (waitForCompletions)
 */
export async function dueRun(client: HttpClient, batch: DueBatch, pollMs: number): Promise<Record<string, unknown>> {
  const baseline = await scrape(client);
  const slackMs = batch.duePerf - baseline.at;
  // (The depth gauge may have no samples yet: the service's first count of a big store can take
  // seconds, and a scrape does not wait for it; so the check is on time, not on SCHEDULED.)
  if (slackMs <= 0) {
    throw new Error(`the service was ready ${round(-slackMs, 0)} ms after the due tasks came due: raise --due-after-s`);
  }
  await sleep(Math.max(0, batch.duePerf - performance.now())); // the stall bound counts from the due instant
  const wait = await waitForCompletions(client, baseline, batch.count, pollMs, batch.duePerf);
  const end = await scrape(client);
  const serverDone = end.lastFinishedMs;
  const spanMs = serverDone !== null ? serverDone - batch.dueAtMs : wait.done_at - batch.duePerf;
  return {
    tasks: batch.count,
    write_ms: batch.write_ms,
    ready_before_due_ms: round(slackMs, 0),
    seconds: round(spanMs / 1000, 3),
    tasks_per_s: round(batch.count / (spanMs / 1000), 0),
    finish_from: serverDone !== null ? 'service last-finished gauge' : 'completion scrape',
    scrape_seconds: round((wait.done_at - batch.duePerf) / 1000, 3),
    terminal_counts: wait.counts,
    max_pending_depth: wait.max_pending,
    dispatch_lag_server_histogram: histogramDelta(baseline, end),
  };
}
