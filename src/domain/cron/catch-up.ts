/**
 * Which firings a due cron makes (docs/DESIGN.md §7 "missed firings"). Pure: the caller passes `now`.
 *
 * A fire time `t <= now` is **on time** when `now - t <= misfireGraceMs` (the evaluator was merely
 * busy) and **missed** otherwise (downtime; Quartz calls this a misfire, with a 60 s threshold).
 * On-time firings always fire. Missed ones follow `catch_up`:
 * - `none`: none fires; each is recorded as skipped (`misfire`).
 * - `latest` (default): when no firing is on time, the most recent missed one fires (`caught_up`);
 *   the others are skipped.
 * - `all`: every missed firing fires, oldest first, at most `maxCatchUp` of them (the most recent).
 * Skipped records are bounded too (the most recent `maxCatchUp`): a year of downtime of an
 * every-second cron must not write 31 million records; `uncounted` says how many were dropped
 * without a record (a lower bound when the search stopped early).
 */
import type { CatchUpMode, FireOutcome, SkipReason } from './cron-definition';
import type { CronSchedule } from './cron-schedule';

export interface FiringPlanInput {
  /** The stored next fire time (the first firing not yet made). */
  due: number;
  now: number;
  misfireGraceMs: number;
  catchUp: CatchUpMode;
  /** ≥ 1 */
  maxCatchUp: number;
}

export interface PlannedFiring {
  fireTime: number;
  outcome: FireOutcome;
  reason: SkipReason | null;
}

export interface FiringPlan {
  /** In fire-time order. Empty when `due > now`. */
  firings: PlannedFiring[];
  /** The first fire time after everything planned (after `now`); null when it never fires again. */
  nextFireTime: number | null;
  /** Missed firings neither made nor recorded. */
  uncounted: number;
}

/** How much the search window grows each round (back from `now`). */
const SEARCH_STEP_FACTOR = 4;

/**
 * Plans the firings of a cron whose next fire time `input.due` has come.
 * @throws RangeError when `maxCatchUp < 1`
 */
export function planFirings(schedule: CronSchedule, input: FiringPlanInput): FiringPlan {
  const { due, now, misfireGraceMs, catchUp, maxCatchUp } = input;
  if (!(maxCatchUp >= 1)) throw new RangeError(`maxCatchUp must be ≥ 1, got ${maxCatchUp}`);
  if (due > now) return { firings: [], nextFireTime: due, uncounted: 0 };
  const onTimeFrom = now - misfireGraceMs;
  // The usual case, one fire time due: a single search for the next one.
  const following = schedule.nextFireTime(due);
  if (following === null || following > now) {
    const firing: PlannedFiring =
      due >= onTimeFrom
        ? { fireTime: due, outcome: 'created', reason: null }
        : catchUp === 'none'
          ? { fireTime: due, outcome: 'skipped', reason: 'misfire' }
          : { fireTime: due, outcome: 'caught_up', reason: null };
    return { firings: [firing], nextFireTime: following, uncounted: 0 };
  }
  // Enough of the latest fire times to hold every on-time one and maxCatchUp missed ones.
  const { times, before } = latestFireTimes(schedule, due, now, maxCatchUp, onTimeFrom);
  const onTime = times.filter((t) => t >= onTimeFrom);
  const missed = times.filter((t) => t < onTimeFrom);
  const keptMissed = missed.slice(-maxCatchUp);
  const uncounted = before + (missed.length - keptMissed.length);
  const firings: PlannedFiring[] = [];
  const last = keptMissed.length - 1;
  keptMissed.forEach((fireTime, i) => {
    const fires = catchUp === 'all' || (catchUp === 'latest' && i === last && onTime.length === 0);
    firings.push(fires ? { fireTime, outcome: 'caught_up', reason: null } : { fireTime, outcome: 'skipped', reason: 'misfire' });
  });
  for (const fireTime of onTime) firings.push({ fireTime, outcome: 'created', reason: null });
  return { firings, nextFireTime: schedule.nextFireTime(now), uncounted };
}

/**
 * The fire times in `[due, now]` that a plan needs: all those at or after `onTimeFrom` and the
 * last `maxMissed` before it, ascending, found by searching back from `now` in growing windows
 * so a long downtime costs time in proportion to what is kept, not to what was missed.
 * `before`: fire times in `[due, windowStart]` not looked at (estimated from the search: 0 when
 * the window reached `due`, else at least 1).
 */
function latestFireTimes(
  schedule: CronSchedule,
  due: number,
  now: number,
  maxMissed: number,
  onTimeFrom: number,
): { times: number[]; before: number } {
  let width = Math.max(1000, now - onTimeFrom);
  for (;;) {
    const start = Math.max(due - 1, now - width);
    const times = fireTimesIn(schedule, start, now);
    const missed = times.filter((t) => t < onTimeFrom).length;
    if (start === due - 1) return { times, before: 0 };
    if (missed > maxMissed) {
      return { times: times.slice(missed - maxMissed), before: missed - maxMissed + 1 };
    }
    width *= SEARCH_STEP_FACTOR;
  }
}

/** Fire times in `(afterMs, untilMs]`, ascending. */
function fireTimesIn(schedule: CronSchedule, afterMs: number, untilMs: number): number[] {
  const out: number[] = [];
  let from = afterMs;
  for (;;) {
    const batch = schedule.nextFireTimes(from, 256);
    for (const t of batch) {
      if (t > untilMs) return out;
      out.push(t);
    }
    if (batch.length < 256) return out;
    from = batch[batch.length - 1];
  }
}
