/**
 * Pure analysis of the fire records bench-cron read back: per cron, whether the measured window
 * holds exactly one record per fire time of the schedule (missing, duplicate and off-grid fire
 * times), the outcome counts, and the fire lag (`recorded_at − fire_time`) of the `created`
 * records. Also the instances created in the window (for the start-lag sample).
 */
import type { FireRun } from './cron-api';
import { Distribution, distribution } from '../stats';

/** What the bench knows of one cron after the read-back. */
export interface CronReadBack {
  cronId: string;
  /** next_fire_time in the create answer (epoch ms): the first fire time the cron owes. */
  firstFireTime: number;
  /** last_fire_time in the pause answer (epoch ms), null when it never fired. */
  lastFireAtPause: number | null;
  runs: FireRun[];
}

export interface Instance {
  taskId: string;
  fireTime: number;
}

export interface ExactnessReport {
  window: {
    /** Earliest / latest first fire time over the crons (ISO). Each cron's window starts at its own. */
    first_fire_time_min: string | null;
    first_fire_time_max: string | null;
    /** Exclusive end, the same for every cron (ISO). */
    end: string;
    period_ms: number;
    fire_times_per_cron_min: number;
    fire_times_per_cron_max: number;
  };
  expected_fire_records: number;
  fire_records_in_window: number;
  crons_exact: number;
  crons_not_exact: number;
  missing_fire_times: number;
  duplicate_fire_times: number;
  off_grid_fire_times: number;
  records_before_first_fire_time: number;
  records_after_window: number;
  /** Crons whose last firing at pause time was before the window's last fire time. */
  behind_at_pause: number;
  outcomes: { created: number; caught_up: number; skipped: number; skipped_by_reason: Record<string, number> };
  /** Up to 10 (cron_id, fire_time) pairs with no record, for inspection. */
  missing_examples: Array<{ cron_id: string; fire_time: string }>;
}

export interface Analysis {
  exactness: ExactnessReport;
  /** recorded_at − fire_time of the `created` records in the window (ms). */
  fireLag: Distribution & { recorded_before_fire_time: number };
  /**
   * The same from the first fire time at which every cron existed (`first_fire_time_max`) on:
   * without the seconds in which the creates competed with the firings.
   */
  fireLagSteady: Distribution & { from: string | null };
  /** Epoch ms of `first_fire_time_max`. */
  steadyFrom: number;
  /** The same for `caught_up` records (misfires made late), when there are any. */
  caughtUpLag: Distribution;
  /** Fire lag of the `created` records per fire time, in fire-time order: when the slow ones were. */
  fireLagByFireTime: Array<{ fire_time: string; records: number; p50_ms: number | null; p99_ms: number | null; max_ms: number | null }>;
  instances: Instance[];
}

const iso = (ms: number | null): string | null => (ms === null || !Number.isFinite(ms) ? null : new Date(ms).toISOString());

/**
 * Checks every cron's records in `[firstFireTime, windowEnd)` against the fire times of a
 * schedule with period `periodMs` (every second or every minute, UTC, so the fire times are the
 * multiples of the period).
 * @param windowEnd exclusive end (epoch ms, a multiple of periodMs)
 */
export function analyse(crons: CronReadBack[], windowEnd: number, periodMs: number): Analysis {
  const lags: number[] = [];
  const lagsByFireTime = new Map<number, number[]>();
  const caughtUpLags: number[] = [];
  const instances: Instance[] = [];
  const skippedByReason: Record<string, number> = {};
  const missingExamples: ExactnessReport['missing_examples'] = [];
  let expected = 0;
  let inWindow = 0;
  let exact = 0;
  let missing = 0;
  let duplicates = 0;
  let offGrid = 0;
  let beforeFirst = 0;
  let after = 0;
  let behind = 0;
  let created = 0;
  let caughtUp = 0;
  let skipped = 0;
  let early = 0;
  let perCronMin = Infinity;
  let perCronMax = 0;
  let firstMin = Infinity;
  let firstMax = -Infinity;
  for (const c of crons) {
    firstMin = Math.min(firstMin, c.firstFireTime);
    firstMax = Math.max(firstMax, c.firstFireTime);
  }
  for (const c of crons) {
    const owed = Math.max(0, Math.ceil((windowEnd - c.firstFireTime) / periodMs));
    perCronMin = Math.min(perCronMin, owed);
    perCronMax = Math.max(perCronMax, owed);
    expected += owed;
    if (owed > 0 && (c.lastFireAtPause ?? -Infinity) < windowEnd - periodMs) behind++;
    const seen = new Set<number>();
    let cronMissing = 0;
    let cronDup = 0;
    let cronOff = 0;
    for (const r of c.runs) {
      const ft = Date.parse(r.fire_time);
      if (ft < c.firstFireTime) {
        beforeFirst++;
        continue;
      }
      if (ft >= windowEnd) {
        after++;
        continue;
      }
      inWindow++;
      if (ft % periodMs !== 0) cronOff++;
      if (seen.has(ft)) cronDup++;
      seen.add(ft);
      const lag = Date.parse(r.recorded_at) - ft;
      if (r.outcome === 'created') {
        created++;
        lags.push(lag);
        const bucket = lagsByFireTime.get(ft);
        if (bucket) bucket.push(lag);
        else lagsByFireTime.set(ft, [lag]);
        if (lag < 0) early++;
        if (r.task_id) instances.push({ taskId: r.task_id, fireTime: ft });
      } else if (r.outcome === 'caught_up') {
        caughtUp++;
        caughtUpLags.push(lag);
        if (r.task_id) instances.push({ taskId: r.task_id, fireTime: ft });
      } else {
        skipped++;
        const reason = r.reason ?? 'none';
        skippedByReason[reason] = (skippedByReason[reason] ?? 0) + 1;
      }
    }
    for (let t = Math.ceil(c.firstFireTime / periodMs) * periodMs; t < windowEnd; t += periodMs) {
      if (seen.has(t)) continue;
      cronMissing++;
      if (missingExamples.length < 10) missingExamples.push({ cron_id: c.cronId, fire_time: iso(t) as string });
    }
    missing += cronMissing;
    duplicates += cronDup;
    offGrid += cronOff;
    if (cronMissing === 0 && cronDup === 0 && cronOff === 0) exact++;
  }
  return {
    exactness: {
      window: {
        first_fire_time_min: iso(firstMin),
        first_fire_time_max: iso(firstMax),
        end: iso(windowEnd) as string,
        period_ms: periodMs,
        fire_times_per_cron_min: Number.isFinite(perCronMin) ? perCronMin : 0,
        fire_times_per_cron_max: perCronMax,
      },
      expected_fire_records: expected,
      fire_records_in_window: inWindow,
      crons_exact: exact,
      crons_not_exact: crons.length - exact,
      missing_fire_times: missing,
      duplicate_fire_times: duplicates,
      off_grid_fire_times: offGrid,
      records_before_first_fire_time: beforeFirst,
      records_after_window: after,
      behind_at_pause: behind,
      outcomes: { created, caught_up: caughtUp, skipped, skipped_by_reason: skippedByReason },
      missing_examples: missingExamples,
    },
    fireLag: { ...distribution(lags), recorded_before_fire_time: early },
    fireLagSteady: {
      ...distribution([...lagsByFireTime.entries()].filter(([ft]) => ft >= firstMax).flatMap(([, l]) => l)),
      from: iso(firstMax),
    },
    steadyFrom: firstMax,
    caughtUpLag: distribution(caughtUpLags),
    fireLagByFireTime: [...lagsByFireTime.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([ft, l]) => {
        const d = distribution(l);
        return { fire_time: iso(ft) as string, records: d.count, p50_ms: d.p50_ms, p99_ms: d.p99_ms, max_ms: d.max_ms };
      }),
    instances,
  };
}
