/**
 * Refuses a cron expression that can never fire (`0 0 30 2 *`, `0 0 31 4 *`), decided exactly from
 * its day fields, not by searching a bounded stretch of time.
 *
 * Why the fields suffice: the hour, minute and second fields always list at least one value, and
 * a matching wall time always fires (one skipped by a daylight-saving gap fires shifted forward,
 * one shown twice fires at least once: cron-schedule.ts). So an expression fires iff some date
 * matches its day fields. Whether a date matches depends only on its month, its day, its weekday
 * and its month's length (`dayFieldsMatch`). In the Gregorian calendar every month starts on each
 * of the seven weekdays in some year, and February does so both in common years (28 days) and in
 * leap years (29: leap years four years apart start February five weekdays later, which runs
 * through all seven). So trying each listed month, each length it can have and each weekday of
 * its first day covers every date that can occur: at most 12 × 2 × 7 months of ≤ 31 days.
 *
 * Under the OR rule (both day fields restricted) a day-of-week always rescues the expression
 * (`0 0 30 2 MON` fires on February's Mondays); with `*` in day-of-week (AND) it does not.
 */
import { CronNeverFiresError } from '../errors';
import { CronFields, parseCronFields } from './cron-fields';
import { dayFieldsMatch, monthLengths } from './day-match';

/** Whether any date that can occur matches the expression's month and day fields (see the header). */
export function dayFieldsCanMatch(fields: CronFields): boolean {
  for (let month = 1; month <= 12; month++) {
    if (!fields.months[month]) continue;
    for (const lastDay of monthLengths(month)) {
      for (let firstWeekday = 0; firstWeekday < 7; firstWeekday++) {
        for (let day = 1; day <= lastDay; day++) {
          if (dayFieldsMatch(fields, month, day, (firstWeekday + day - 1) % 7, lastDay)) return true;
        }
      }
    }
  }
  return false;
}

/**
 * Refuses, naming `cron_expression`, a new expression that can never fire. Call it after the
 * expression has been parsed once (a syntax error is reported as such, not as this). Applied when
 * an expression is saved or previewed, never to one already stored.
 * @throws CronNeverFiresError (400, `CRON_NEVER_FIRES`)
 * @throws ValidationError when the expression does not parse
 */
export function assertCronCanFire(expression: string): void {
  if (dayFieldsCanMatch(parseCronFields(expression))) return;
  const text = expression.trim();
  const atoms = text.split(/\s+/);
  const [dayOfMonth, month, dayOfWeek] = atoms.slice(-3);
  throw new CronNeverFiresError(text, `day-of-month "${dayOfMonth}", month "${month}" and day-of-week "${dayOfWeek}"`);
}
