/**
 * The soak's verdict: figures per window and the comparison of the last window with the
 * reference window (the one that starts when the warm-up ends), and of every later window with it.
 *
 * Per window [from, to) (ms since the soak started): RSS of the main process and the workers' sum
 * (the largest sample), the WAL file (largest sample), and tenant S's p99 dispatch lag over the
 * tasks read back whose due time falls in the window, leaving out those due while a flood was
 * being worked off (its first submission to its last task ended, plus 1 s) — the floods are
 * reported apart; every window of the default shape (window = flood period) holds one flood.
 * A figure holds when |window − reference| ≤ tolerance × reference.
 */
import { percentile, round } from '../stats';
import type { LagRecord } from './soak-samples';

/** One sample of the soak (sizes in MB; t_s since the soak started). */
export interface SoakSample {
  t_s: number;
  main_rss_mb: number | null;
  workers_rss_mb: number;
  event_loop_max_ms: number | null;
  wal_mb: number;
  db_mb: number;
  [k: string]: unknown;
}

/** A flood's span in Date ms. */
export interface FloodSpan {
  startWall: number;
  endWall: number | null;
}

/** The verdict figures of one window. */
export interface WindowFigures {
  from_min: number;
  to_min: number;
  samples: number;
  main_rss_mb: number | null;
  workers_rss_mb: number | null;
  wal_mb: number | null;
  steady_p99_lag_ms: number | null;
  steady_lag_tasks: number;
  steady_p99_lag_with_floods_ms: number | null;
  /** The same tasks (outside floods): p99 of started_at − the harness's send instant (the acknowledgement's wait included). */
  steady_p99_start_after_send_ms: number | null;
  event_loop_max_ms: number | null;
  /** The main process's V8 heap in use, largest sample (MB): a JS leak shows here, the SQLite page caches do not. */
  main_heap_used_mb: number | null;
  /** The main isolate's V8 heap committed, largest sample (MB): main RSS minus this is outside that heap. */
  main_heap_total_mb: number | null;
  db_mb_at_end: number | null;
}

export const VERDICT_FIGURES = ['main_rss_mb', 'workers_rss_mb', 'wal_mb', 'steady_p99_lag_ms'] as const;

const max = (xs: Array<number | null>): number | null => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? Math.max(...v) : null;
};

/** The figures of [fromMs, toMs) since `startWall`. */
export function windowFigures(
  samples: SoakSample[],
  lags: LagRecord[],
  floods: FloodSpan[],
  startWall: number,
  fromMs: number,
  toMs: number,
): WindowFigures {
  const ss = samples.filter((s) => s.t_s * 1000 >= fromMs && s.t_s * 1000 < toMs);
  const inWin = lags.filter((l) => l.dueMs - startWall >= fromMs && l.dueMs - startWall < toMs);
  const inFlood = (l: LagRecord) => floods.some((f) => l.dueMs >= f.startWall && l.dueMs <= (f.endWall ?? Infinity) + 1000);
  const quiet = inWin
    .filter((l) => !inFlood(l))
    .map((l) => l.lagMs)
    .sort((a, b) => a - b);
  const all = inWin.map((l) => l.lagMs).sort((a, b) => a - b);
  return {
    from_min: round(fromMs / 60_000, 2) as number,
    to_min: round(toMs / 60_000, 2) as number,
    samples: ss.length,
    main_rss_mb: max(ss.map((s) => s.main_rss_mb)),
    workers_rss_mb: max(ss.map((s) => s.workers_rss_mb)),
    wal_mb: max(ss.map((s) => s.wal_mb)),
    steady_p99_lag_ms: round(percentile(quiet, 0.99)),
    steady_lag_tasks: quiet.length,
    steady_p99_lag_with_floods_ms: round(percentile(all, 0.99)),
    steady_p99_start_after_send_ms: round(
      percentile(
        inWin
          .filter((l) => !inFlood(l))
          .map((l) => l.sendLagMs)
          .sort((a, b) => a - b),
        0.99,
      ),
    ),
    event_loop_max_ms: round(max(ss.map((s) => s.event_loop_max_ms))),
    main_heap_used_mb: max(ss.map((s) => (typeof s.main_heap_used_mb === 'number' ? s.main_heap_used_mb : null))),
    main_heap_total_mb: max(ss.map((s) => (typeof s.main_heap_total_mb === 'number' ? s.main_heap_total_mb : null))),
    db_mb_at_end: ss.length ? ss[ss.length - 1].db_mb : null,
  };
}

/** Relative change of `v` against `ref` (null when either is missing or ref is 0). */
const change = (v: number | null, ref: number | null): number | null => (v === null || ref === null || ref === 0 ? null : (v - ref) / ref);

/**
 * The verdict: the windows (reference, each later one, last), each verdict figure's change
 * against the reference, and whether it holds for the last window and for every window.
 */
export function verdict(
  samples: SoakSample[],
  lags: LagRecord[],
  floods: FloodSpan[],
  startWall: number,
  o: { warmupMs: number; windowMs: number; durationMs: number; tolerance: number },
): Record<string, unknown> {
  const ref = windowFigures(samples, lags, floods, startWall, o.warmupMs, o.warmupMs + o.windowMs);
  const windows: WindowFigures[] = [];
  // Tiled from the end of the warm-up; a window that reaches the end also holds the sample taken at the end.
  for (let from = o.warmupMs; from + o.windowMs <= o.durationMs + 1; from += o.windowMs) {
    const to = from + o.windowMs;
    windows.push(windowFigures(samples, lags, floods, startWall, from, to >= o.durationMs ? o.durationMs + 1 : to));
  }
  const last = windowFigures(samples, lags, floods, startWall, o.durationMs - o.windowMs, o.durationMs + 1);
  const figures: Record<string, unknown> = {};
  let pass = true;
  for (const f of VERDICT_FIGURES) {
    const lastChange = change(last[f], ref[f]);
    const changes = windows.map((w) => change(w[f], ref[f]));
    const holds = lastChange !== null && Math.abs(lastChange) <= o.tolerance;
    const every = changes.every((c) => c !== null && Math.abs(c) <= o.tolerance);
    if (!holds) pass = false;
    figures[f] = {
      reference: ref[f],
      last: last[f],
      change_pct: lastChange === null ? null : round(lastChange * 100, 1),
      within: holds,
      max_growth_pct_any_window: round(Math.max(...changes.map((c) => (c === null ? -Infinity : c))) * 100, 1),
      every_window_within: every,
    };
  }
  return {
    rule: `each figure of the last window within ±${o.tolerance * 100} % of the reference window (the first window after the warm-up)`,
    reference_window: ref,
    last_window: last,
    figures,
    figures_pass: pass,
    windows,
  };
}
