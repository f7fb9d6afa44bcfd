/**
 * Waits until N more noop tasks are terminal by polling /metrics, recording the completion
 * instant, the largest PENDING depth and a once-per-second timeline.
 */
import { performance } from 'node:perf_hooks';
import type { HttpClient } from './http-client';
import { diffCounts, MetricsSnapshot, scrape, sumCounts, TerminalCounts } from './metrics';
import { checkAborted, sleep } from './run-control';
import { round } from './stats';

export interface CompletionWait {
  done_at: number; // performance.now() of the scrape that saw every task terminal
  counts: TerminalCounts; // since the baseline
  polls: number;
  max_pending: number;
  max_scrape_ms: number;
  timeline: Array<{ t_s: number; terminal: number; pending: number }>;
  last: MetricsSnapshot;
}

/**
 * Polls /metrics every `pollMs` until `expected` more noop tasks than in `baseline` are terminal.
 * Fails when nothing moves for `stallMs`. The completion instant is the arrival of the scrape that
 * first saw them all (so it is late by at most one poll interval plus one scrape).
 */
export async function waitForCompletions(
  client: HttpClient,
  baseline: MetricsSnapshot,
  expected: number,
  pollMs: number,
  origin: number,
  stallMs = 30_000,
  cancel: { cancelled: boolean } = { cancelled: false },
): Promise<CompletionWait> {
  let polls = 0;
  let maxPending = 0;
  let maxScrape = 0;
  let lastProgress = performance.now();
  let lastTerminal = -1;
  let lastTimelineAt = -Infinity;
  const timeline: CompletionWait['timeline'] = [];
  for (;;) {
    checkAborted();
    if (cancel.cancelled) throw new Error('completion wait cancelled');
    const started = performance.now();
    const snap = await scrape(client);
    polls++;
    maxScrape = Math.max(maxScrape, snap.scrapeMs);
    const pending = snap.depth.PENDING ?? 0;
    maxPending = Math.max(maxPending, pending);
    const counts = diffCounts(snap.completed, baseline.completed);
    const terminal = sumCounts(counts);
    if (snap.at - lastTimelineAt >= 1000 || terminal >= expected) {
      timeline.push({ t_s: round((snap.at - origin) / 1000, 2) as number, terminal, pending });
      lastTimelineAt = snap.at;
    }
    if (terminal >= expected) {
      return { done_at: snap.at, counts, polls, max_pending: maxPending, max_scrape_ms: round(maxScrape) as number, timeline, last: snap };
    }
    if (terminal !== lastTerminal) {
      lastTerminal = terminal;
      lastProgress = snap.at;
    } else if (snap.at - lastProgress > stallMs) {
      throw new Error(
        `no completions for ${stallMs / 1000} s: ${terminal}/${expected} terminal (${JSON.stringify(counts)}), depth ${JSON.stringify(snap.depth)}`,
      );
    }
    await sleep(pollMs - (performance.now() - started));
  }
}
