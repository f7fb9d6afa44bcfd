/**
 * Cron schedules: when a cron definition fires, as epoch milliseconds (UTC), in its IANA time zone.
 * Pure: no I/O, no clock (the caller passes "now"), deterministic.
 *
 * ## The rules (docs/DESIGN.md §7), for users
 *
 * - **Syntax.** Five fields `minute hour day-of-month month day-of-week`, or six with `second`
 *   first. Values, `a-b` ranges, `/step` (`*` + step counts from the field's minimum, so
 *   `*\/3` in day-of-month is 1, 4, 7, …; `a/step` runs from `a` to the maximum), lists, month and
 *   weekday names (`JAN`, `mon`), `?` as `*`, day-of-week 0–7 (0 and 7 are Sunday), `L` (last day
 *   of the month; `5L` last Friday) and `1#2` (second Monday). Aliases: `@yearly` = `@annually`
 *   (`0 0 1 1 *`), `@monthly` (`0 0 1 * *`), `@weekly` (`0 0 * * 0`), `@daily` = `@midnight`
 *   (`0 0 * * *`), `@hourly` (`0 * * * *`). Jenkins' `H` (hash) is refused: it is random.
 * - **Day of month and day of week.** When both are restricted, a day matches if *either* matches
 *   (`0 0 13 * 5`: every 13th and every Friday). A field that starts with `*` (including `*\/3`)
 *   or `?` counts as unrestricted: the day must then match both fields (for a plain `*` that is
 *   just the other one), as in Vixie cron and cronie.
 * - **Spring forward (a gap).** A matching wall time that the clock skips is read with the offset
 *   before the transition, i.e. shifted forward by the length of the gap (RFC 5545, TC39
 *   Temporal's `compatible`): `30 2 * * *` in New York fires at 03:30 EDT on the day 02:30 does not
 *   exist. Instants that coincide fire once.
 * - **Fall back (an overlap).** A matching wall time that the clock shows twice fires at its first
 *   occurrence only, except for a job whose minute or hour field starts with `*`: that job
 *   follows real time and also fires during the repeated hour (Vixie cron).
 * - **Never-firing expressions** (`0 0 30 2 *`: no listed month has the day) are refused when a
 *   definition is saved or previewed (never-fires.ts, decided from the fields). This module still
 *   takes them, for definitions stored before that check: the search looks
 *   {@link CRON_SEARCH_HORIZON_YEARS} years ahead and returns what it found (nothing).
 * - **Rare expressions** fire however far apart their fire times are (at most 40 years: a
 *   29 February on a given weekday across 2100); see {@link CRON_SEARCH_HORIZON_YEARS}.
 *
 * The same text is available at run time from {@link describeCronRules}.
 *
 * ## How
 *
 * cron-parser parses and validates the expression (field values, names, ranges, steps, `L`, `#`).
 * The fire times are NOT taken from cron-parser's iterator, because against the rule above it:
 * (1) treats `*\/3` in day-of-month or day-of-week as restricted and ORs it with the other field
 * (`0 0 *\/3 * 1` fires every third day and every Monday instead of on Mondays that are the 1st,
 * 4th, 7th, … day); (2) fires a `*`-minute job with a fixed hour (`*\/30 1 * * *`) only in the
 * first pass of a repeated hour; (3) handles transitions per whole hour, so 30-minute DST
 * (Australia/Lord_Howe) and other non-hour gaps are not shifted as the rule says; (4) refuses
 * `0 0 30 2 *` instead of never firing. Patching its answers case by case would leave the next
 * odd zone wrong, so this module walks real time in intervals of constant UTC offset (found with
 * `Intl`, see zone-offset.ts) and matches wall-clock times itself; each adjustment is marked
 * "Adjustment" below and in cron-fields.ts (the parsing).
 */
import { ValidationError } from '../errors';
import { CronFields, parseCronFields } from './cron-fields';
import { dayFieldsMatch, daysInMonth } from './day-match';
import { findOffsetChange, isKnownTimeZone, zoneOffsetAt } from './zone-offset';

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/**
 * How far past `fromMs`, and past each fire time found, {@link CronSchedule.nextFireTimes} looks
 * for the next one before it gives up. The longest wait between two fire times of an expression
 * that fires at all is 40 years: a 29 February on a given weekday (`0 0 * 2 1#5`, the fifth Monday
 * of February) across 2100, which is not a leap year (2072, then 2112; the Gregorian calendar
 * repeats every 400 years, so no other span is longer). Ten years, before, left such an expression
 * saved with no next fire time, never fired.
 */
export const CRON_SEARCH_HORIZON_YEARS = 50;
/** {@link CRON_SEARCH_HORIZON_YEARS} in milliseconds (years of 366 days). */
export const CRON_SEARCH_HORIZON_MS = CRON_SEARCH_HORIZON_YEARS * 366 * DAY_MS;

/**
 * How far before "from" the search starts. A transition's effects (gap-shifted firings, the
 * repeated wall times of an overlap) last at most a day after it, so starting two days early
 * always knows the transition that "from" may sit just after.
 */
const LOOKBACK_MS = 2 * DAY_MS;

/** A parsed cron definition: expression + IANA time zone. Immutable. */
export interface CronSchedule {
  /** The expression as given (trimmed), aliases not expanded. */
  readonly expression: string;
  /** The time zone as given. */
  readonly timezone: string;
  /**
   * The next `count` fire instants strictly after `fromMs`, ascending, as epoch milliseconds
   * (whole seconds). Fewer (possibly none) only for an expression that never fires: the search
   * gives up {@link CRON_SEARCH_HORIZON_YEARS} years after `fromMs` or after the last fire found.
   */
  nextFireTimes(fromMs: number, count: number): number[];
  /** The first fire instant strictly after `fromMs`, or null when none within the horizon. */
  nextFireTime(fromMs: number): number | null;
}

/**
 * Parses and validates a cron expression (5 or 6 fields, or an alias) for an IANA time zone.
 *
 * @throws ValidationError with `details.field` `cron_expression` (bad syntax, out-of-range value,
 *   wrong field count, unknown alias) or `timezone` (not a zone the runtime's tz database knows).
 */
export function parseCronSchedule(expression: string, timezone: string): CronSchedule {
  const fields = parseCronFields(expression);
  if (typeof timezone !== 'string' || !isKnownTimeZone(timezone)) {
    throw new ValidationError('timezone', `"${String(timezone)}" is not a known IANA time zone (e.g. "Europe/Berlin", "UTC")`);
  }
  return new ZonedCronSchedule(expression.trim(), timezone, fields);
}

/** The user-facing statement of the DST and day-matching rules (the doc comment at the top). */
export function describeCronRules(): string {
  return [
    'Cron expressions have 5 fields (minute hour day-of-month month day-of-week) or 6 (second first), ' +
      'or are one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly; they are evaluated in the ' +
      "definition's IANA time zone.",
    'When both day-of-month and day-of-week are restricted, a day matches if either matches; a field that ' +
      'starts with * (including */3) counts as unrestricted, and the day must then match both (Vixie cron).',
    'Spring forward: a matching wall time skipped by the gap fires at that wall time read with the offset before ' +
      'the transition (shifted forward by the gap); instants that coincide fire once.',
    'Fall back: a matching wall time that occurs twice fires at its first occurrence only, unless the minute or ' +
      'hour field starts with *, in which case the job follows real time and fires at both.',
    'An expression that can never fire (a day-of-month that none of its months has, e.g. 0 0 30 2 *, unless a ' +
      'restricted day-of-week rescues it) is refused with CRON_NEVER_FIRES.',
    `Each fire time is searched up to ${CRON_SEARCH_HORIZON_YEARS} years after the one before it (the longest wait of an ` +
      'expression that fires at all is 40 years: a 29 February on a given weekday, across 2100).',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Calendar matching (wall-clock, no time zone)

/** Does the wall-clock date of day number `dayIndex` (days since 1970-01-01) match the day fields? */
function dayMatches(fields: CronFields, dayIndex: number): boolean {
  const date = new Date(dayIndex * DAY_MS);
  const month = date.getUTCMonth() + 1;
  if (!fields.months[month]) return false;
  return dayFieldsMatch(fields, month, date.getUTCDate(), date.getUTCDay(), daysInMonth(date.getUTCFullYear(), month));
}

/** The first day number in `[fromDay, toDay]` that matches, or -1. */
function nextMatchingDay(fields: CronFields, fromDay: number, toDay: number): number {
  for (let day = fromDay; day <= toDay; day++) if (dayMatches(fields, day)) return day;
  return -1;
}

/**
 * Calls `visit` with every matching wall time (wall ms) in `[fromWall, toWall)`, ascending, until
 * `visit` returns false.
 */
function forEachMatchingWall(fields: CronFields, fromWall: number, toWall: number, visit: (wall: number) => boolean): void {
  if (fromWall >= toWall) return;
  const lastDay = Math.floor((toWall - 1) / DAY_MS);
  for (let day = Math.floor(fromWall / DAY_MS); day <= lastDay; day++) {
    if (!dayMatches(fields, day)) continue;
    const dayStart = day * DAY_MS;
    for (const hour of fields.hours) {
      const hourStart = dayStart + hour * HOUR_MS;
      if (hourStart + HOUR_MS <= fromWall) continue;
      if (hourStart >= toWall) return;
      for (const minute of fields.minutes) {
        const minuteStart = hourStart + minute * MINUTE_MS;
        if (minuteStart + MINUTE_MS <= fromWall) continue;
        if (minuteStart >= toWall) return;
        for (const second of fields.seconds) {
          const wall = minuteStart + second * SECOND_MS;
          if (wall < fromWall) continue;
          if (wall >= toWall) return;
          if (!visit(wall)) return;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The search in real time

class ZonedCronSchedule implements CronSchedule {
  constructor(
    readonly expression: string,
    readonly timezone: string,
    private readonly fields: CronFields,
  ) {}

  nextFireTime(fromMs: number): number | null {
    return this.nextFireTimes(fromMs, 1)[0] ?? null;
  }

  /**
   * Walks real time from a little before `fromMs` in intervals of constant UTC offset, at most a
   * day long (the offset is sampled at each interval's end and a change is bisected to the
   * second). In an interval `[start, end)` with offset `o` the candidates are the matching wall
   * times in `[start + o, end + o)`, each firing at `wall − o`, plus, right after a spring-forward
   * transition, the wall times its gap skipped. Every candidate of an interval lies inside it, so
   * intervals produce their instants in order.
   */
  nextFireTimes(fromMs: number, count: number): number[] {
    if (typeof fromMs !== 'number' || !Number.isFinite(fromMs)) {
      throw new TypeError(`fromMs must be a finite number, got ${String(fromMs)}`);
    }
    if (!Number.isInteger(count) || count < 0) {
      throw new RangeError(`count must be a non-negative integer, got ${String(count)}`);
    }
    const fires: number[] = [];
    if (count === 0) return fires;

    const tz = this.timezone;
    const earliest = Math.floor(fromMs / SECOND_MS) * SECOND_MS + SECOND_MS; // strictly after fromMs
    let limit = earliest + CRON_SEARCH_HORIZON_MS; // moves on with each fire found
    let start = earliest - LOOKBACK_MS;
    let offset = zoneOffsetAt(tz, start);
    /** The offset before a spring-forward transition at `start`, or null. */
    let gapOffsetBefore: number | null = null;
    /** After a fall-back: wall times below this one are second occurrences. */
    let repeatedWallEnd = -Infinity;
    /** Gap-shifted firings beyond the interval that produced them (not seen in real zones). */
    let carried: number[] = [];

    while (fires.length < count && start < limit) {
      // Skip stretches with no matching day (monthly, yearly and never-firing schedules). Landing
      // two days before the matching day keeps the transition state exact (see LOOKBACK_MS).
      const lastDay = Math.floor((limit + offset) / DAY_MS) + 1;
      const day = nextMatchingDay(this.fields, Math.floor((start + offset) / DAY_MS), lastDay);
      if (day === -1 && carried.length === 0) break;
      if (day !== -1 && carried.length === 0) {
        const landing = Math.floor((day * DAY_MS - LOOKBACK_MS - offset) / SECOND_MS) * SECOND_MS;
        if (landing > start + DAY_MS) {
          start = landing;
          offset = zoneOffsetAt(tz, start);
          gapOffsetBefore = null;
          repeatedWallEnd = -Infinity;
          continue;
        }
      }

      let end = Math.min(start + DAY_MS, limit);
      const changes = zoneOffsetAt(tz, end) !== offset;
      if (changes) end = findOffsetChange(tz, start, end);

      const need = count - fires.length;
      const found: number[] = [];
      const stillCarried: number[] = [];
      for (const instant of carried) (instant < end ? found : stillCarried).push(instant);
      carried = stillCarried;

      // Wall times in this interval, each once, at wall − offset (ascending: the first `need` suffice).
      let taken = 0;
      forEachMatchingWall(this.fields, Math.max(start, earliest) + offset, end + offset, (wall) => {
        // Adjustment (2): a wall time below `repeatedWallEnd` already happened before the fall-back
        // transition. It fires again only for a job whose minute or hour field starts with `*`
        // (Vixie cron follows real time); cron-parser never fires the repeated pass of a wall time
        // whose hour it already fired (`*/30 1 * * *` loses 01:00 and 01:30 standard time).
        if (wall < repeatedWallEnd && !this.fields.followsRealTime) return true;
        found.push(wall - offset);
        return ++taken < need;
      });

      // Adjustment (3): wall times skipped by a spring-forward gap at `start` fire at
      // wall − (offset before the transition), i.e. shifted forward by the gap, whatever the gap's
      // length or position in the hour; cron-parser reasons in whole hours (Lord Howe's 30-minute
      // gap, for one, comes out wrong). They land in [start, start + gap), inside this interval
      // unless another transition follows within the gap (none does in the tz database; kept
      // correct anyway by carrying them to the interval they belong to).
      if (gapOffsetBefore !== null) {
        const before = gapOffsetBefore;
        let shifted = 0;
        forEachMatchingWall(this.fields, start + before, start + offset, (wall) => {
          const instant = wall - before;
          if (instant < earliest) return true;
          (instant < end ? found : carried).push(instant);
          return ++shifted < need;
        });
      }

      found.sort((a, b) => a - b);
      for (const instant of found) {
        if (fires.length === count) break;
        // Instants that coincide (a shifted gap time and a real one) fire once.
        if (fires[fires.length - 1] !== instant) fires.push(instant);
      }
      if (fires.length > 0) limit = Math.max(limit, fires[fires.length - 1] + CRON_SEARCH_HORIZON_MS);

      if (changes) {
        const after = zoneOffsetAt(tz, end);
        if (after > offset) {
          gapOffsetBefore = offset;
        } else {
          gapOffsetBefore = null;
          repeatedWallEnd = end + offset;
        }
        offset = after;
      } else {
        gapOffsetBefore = null;
      }
      start = end;
    }
    return fires;
  }
}
