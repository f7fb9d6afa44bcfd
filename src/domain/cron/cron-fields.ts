/**
 * Cron expression fields: an expression (5 or 6 fields, or a Vixie alias) parsed and validated by
 * cron-parser, expanded into the sets that cron-schedule.ts matches wall-clock times against.
 * Where cron-parser's reading differs from cron's, this module adjusts; each place is marked
 * "Adjustment (n)": (1) to (4) are the differences listed in cron-schedule.ts's header, (5) and
 * (6) are explained where they are made.
 */
import { CronExpressionParser } from 'cron-parser';
import { ValidationError } from '../errors';

/** The aliases of Vixie cron (minus `@reboot`, which is not a schedule). */
const ALIASES: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** The expanded fields, ready for matching wall-clock times. */
export interface CronFields {
  /** Ascending. */
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  /** Index 1–12. */
  readonly months: readonly boolean[];
  /** Index 1–31. */
  readonly daysOfMonth: readonly boolean[];
  /** `L` in day-of-month. */
  readonly lastDayOfMonth: boolean;
  /** Index 0–6 (Sunday 0). */
  readonly daysOfWeek: readonly boolean[];
  /** `5L`: the last Friday of the month. Index 0–6. */
  readonly lastWeekdayOfMonth: readonly boolean[];
  /** `1#2` → 2: the weekday must be the n-th of its month (0: no constraint). */
  readonly nthWeekday: number;
  readonly dayOfMonthRestricted: boolean;
  readonly dayOfWeekRestricted: boolean;
  /** The minute or hour field starts with `*`: the job also fires in a repeated (fall-back) hour. */
  readonly followsRealTime: boolean;
}

/** Starts with `*` or `?` (cron-parser's alias of `*`). */
const isStarField = (raw: string): boolean => raw.startsWith('*') || raw.startsWith('?');

function invalidExpression(reason: string): ValidationError {
  return new ValidationError('cron_expression', reason);
}

/**
 * Parses and validates the fields of a cron expression (5 or 6 fields, or an alias) with
 * cron-parser, then expands them for matching (the rules are in cron-schedule.ts).
 * @throws ValidationError with `details.field` `cron_expression`: empty, unknown alias, wrong
 *   field count, `H`, or what cron-parser refuses (value out of range, bad name, range or step)
 */
export function parseCronFields(expression: string): CronFields {
  if (typeof expression !== 'string' || expression.trim() === '') {
    throw invalidExpression(
      'is empty; expected 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, or an alias such as @daily',
    );
  }
  let text = expression.trim();
  if (text.startsWith('@')) {
    const expanded = ALIASES[text.toLowerCase()];
    if (expanded === undefined) {
      throw invalidExpression(`unknown alias "${text}"; use one of ${Object.keys(ALIASES).join(', ')}`);
    }
    text = expanded;
  }
  const atoms = text.split(/\s+/);
  if (atoms.length !== 5 && atoms.length !== 6) {
    // cron-parser would pad a shorter expression with `*` fields; a typo must not run every minute.
    const plural = atoms.length === 1 ? '' : 's';
    throw invalidExpression(
      `"${expression.trim()}" has ${atoms.length} field${plural}; ` +
        'expected 5 (minute hour day-of-month month day-of-week) or 6 (second first)',
    );
  }
  // Adjustment (5): cron-parser refuses a list that repeats a value (`1,1`); cron accepts it and
  // the repeat changes nothing, so each list keeps its first occurrence of every item.
  const raw = (atoms.length === 5 ? ['0', ...atoms] : atoms).map((field) => [...new Set(field.split(','))].join(','));
  if (raw.some((field) => /(^|[^a-z])h/i.test(field))) {
    // cron-parser's Jenkins-style hash: a random value per parse unless seeded. A schedule must be
    // the same in every evaluator (instance ids are derived from the fire time).
    throw invalidExpression(`"${expression.trim()}" uses H (hash), which is not supported; write the value`);
  }
  type SixFields = [string, string, string, string, string, string];
  const [rawSecond, rawMinute, rawHour, rawDayOfMonth, rawMonth, dayOfWeekAsWritten] = raw as SixFields;
  // Adjustment (6): a day-of-week range ending on SUN (`MON-SUN`, `FRI-SUN`) reads SUN as 0, so
  // cron-parser refuses it as a backward range ("1-0"); cron reads it as the end of the week, as
  // `1-7` (which it accepts) says.
  const rawDayOfWeek = dayOfWeekAsWritten.replace(/-sun\b/gi, '-7');

  const parse = (dayOfWeek: string) =>
    CronExpressionParser.parse([rawSecond, rawMinute, rawHour, rawDayOfMonth, rawMonth, dayOfWeek].join(' ')).fields;
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(rawDayOfWeek);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (message === 'Invalid explicit day of month definition' && isStarField(rawDayOfWeek)) {
      // Adjustment (4): cron-parser refuses a day of month that no selected month has
      // (`0 0 30 2 *`). Parsing accepts it, so that a definition stored before never-fires.ts
      // refused such expressions still loads (and never fires); a new one is refused there with
      // its own code. Every field was already validated when this is thrown; parse again with an
      // equivalent unrestricted day-of-week spelled so the check does not apply.
      parsed = parse('0-6');
    } else {
      throw invalidExpression(`"${expression.trim()}" is not a valid cron expression: ${message}`);
    }
  }

  const numbers = (values: readonly (number | string)[]): number[] =>
    values.filter((v): v is number => typeof v === 'number').sort((a, b) => a - b);
  const flags = (size: number, values: readonly number[]): boolean[] => {
    const out = new Array<boolean>(size).fill(false);
    for (const v of values) out[v] = true;
    return out;
  };

  const daysOfWeek = new Array<boolean>(7).fill(false);
  const lastWeekdayOfMonth = new Array<boolean>(7).fill(false);
  for (const value of parsed.dayOfWeek.values) {
    if (typeof value === 'number') daysOfWeek[value % 7] = true;
    else if (/^[0-7]L$/.test(value)) lastWeekdayOfMonth[Number(value[0]) % 7] = true;
    else if (value === 'L') lastWeekdayOfMonth[6] = true; // cron-parser: a bare L in day-of-week is Saturday
  }

  return {
    seconds: numbers(parsed.second.values),
    minutes: numbers(parsed.minute.values),
    hours: numbers(parsed.hour.values),
    months: flags(13, numbers(parsed.month.values)),
    daysOfMonth: flags(32, numbers(parsed.dayOfMonth.values)),
    lastDayOfMonth: parsed.dayOfMonth.values.includes('L'),
    daysOfWeek,
    lastWeekdayOfMonth,
    nthWeekday: parsed.dayOfWeek.nthDay > 0 ? parsed.dayOfWeek.nthDay : 0,
    // Adjustment (1): restriction is decided on the raw text, Vixie's DOM_STAR / DOW_STAR. cron-parser
    // calls a field unrestricted only when it is exactly `*` or `?`, so it ORs `*/3` with the other field.
    dayOfMonthRestricted: !isStarField(rawDayOfMonth),
    dayOfWeekRestricted: !isStarField(rawDayOfWeek),
    followsRealTime: isStarField(rawMinute) || isStarField(rawHour),
  };
}
