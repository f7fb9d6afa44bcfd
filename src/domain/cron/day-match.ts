/**
 * Calendar matching of a cron expression's day fields (month, day-of-month, day-of-week), on
 * wall-clock dates with no time zone. Shared by the fire-time search (cron-schedule.ts) and the
 * check that an expression can fire at all (never-fires.ts), so both read the fields alike.
 */
import { CronFields } from './cron-fields';

/** Gregorian leap year (every 4th year, except centuries not divisible by 400). */
export const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

const MONTH_DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in `month` (1–12) of `year`. */
export const daysInMonth = (year: number, month: number): number => (month === 2 && isLeapYear(year) ? 29 : MONTH_DAYS[month]!);

/** The days a month can have: February 28 or 29, the others their fixed number. */
export const monthLengths = (month: number): number[] => (month === 2 ? [28, 29] : [MONTH_DAYS[month]!]);

/**
 * Does one wall-clock date match the day fields?
 * @param month 1–12
 * @param day day of the month, 1–31
 * @param weekday 0–6, Sunday 0
 * @param lastDay the number of days in that month (for `L`, `5L` and the n-th weekday)
 *
 * When both day-of-month and day-of-week are restricted, either may match (the standard OR);
 * otherwise both must, which for a plain `*` field is just the other one (Vixie cron: `*\/3`
 * still filters, it only switches the OR off).
 */
export function dayFieldsMatch(fields: CronFields, month: number, day: number, weekday: number, lastDay: number): boolean {
  if (!fields.months[month]) return false;
  const domMatch = fields.daysOfMonth[day] === true || (fields.lastDayOfMonth && day === lastDay);
  const dowMatch =
    (fields.daysOfWeek[weekday] === true && (fields.nthWeekday === 0 || Math.ceil(day / 7) === fields.nthWeekday)) ||
    (fields.lastWeekdayOfMonth[weekday] === true && day + 7 > lastDay);
  return fields.dayOfMonthRestricted && fields.dayOfWeekRestricted ? domMatch || dowMatch : domMatch && dowMatch;
}
