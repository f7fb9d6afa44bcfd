/**
 * An independent brute-force oracle for DESIGN §7, for the cron tests. It shares no code with
 * src/domain/cron: it has its own field parser (numbers, names, `*`, `?`, ranges, steps, lists;
 * no `L`, `#`) and walks REAL time step by step (a minute, or a second for six-field
 * expressions), reading each instant's UTC offset from `Intl`'s `longOffset` time-zone name
 * (src reads calendar fields instead), and applies the rule literally:
 *
 * - an instant whose wall time matches fires if that wall time has not been seen before, or, when
 *   it has (a fall-back overlap), if the minute or hour field starts with `*`;
 * - when the wall clock jumps forward (a spring-forward gap), each skipped matching wall time fires
 *   at wall − (offset before the jump);
 * - day-of-month and day-of-week both restricted → either; a field starting with `*` or `?` is
 *   unrestricted and the day must match both;
 * - the answers are sorted and de-duplicated.
 *
 * It is slow (one `Intl` call per step), so callers keep the window to a few days.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const DAY = 24 * 60 * MINUTE;

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

const ORACLE_ALIASES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** Expands one cron field into the set of values it allows. */
function expandField(text: string, min: number, max: number, names: string[] = [], nameBase = 0): Set<number> {
  const value = (token: string): number => {
    const index = names.indexOf(token.toLowerCase());
    const n = index >= 0 ? index + nameBase : Number(token);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`oracle: bad value ${token} in ${text}`);
    return n;
  };
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    let low: number;
    let high: number;
    if (range === '*' || range === '?') {
      low = min;
      high = max;
    } else if (range.includes('-')) {
      const [a, b] = range.split('-') as [string, string];
      low = value(a);
      high = value(b);
    } else {
      low = value(range);
      high = stepText === undefined ? low : max;
    }
    for (let v = low; v <= high; v += step) out.add(v);
  }
  return out;
}

interface OracleCron {
  seconds: Set<number>;
  minutes: Set<number>;
  hours: Set<number>;
  doms: Set<number>;
  months: Set<number>;
  dows: Set<number>;
  domStar: boolean;
  dowStar: boolean;
  realTime: boolean;
  sixFields: boolean;
}

function parseOracleCron(expression: string): OracleCron {
  const text = ORACLE_ALIASES[expression.trim().toLowerCase()] ?? expression.trim();
  const parts = text.split(/\s+/);
  const sixFields = parts.length === 6;
  const [s, mi, h, dom, mon, dow] = (sixFields ? parts : ['0', ...parts]) as [string, string, string, string, string, string];
  const dows = expandField(dow, 0, 7, DAY_NAMES);
  if (dows.has(7)) dows.add(0);
  const star = (f: string) => f.startsWith('*') || f.startsWith('?');
  return {
    seconds: expandField(s, 0, 59),
    minutes: expandField(mi, 0, 59),
    hours: expandField(h, 0, 23),
    doms: expandField(dom, 1, 31),
    months: expandField(mon, 1, 12, MONTH_NAMES, 1),
    dows,
    domStar: star(dom),
    dowStar: star(dow),
    realTime: star(mi) || star(h),
    sixFields,
  };
}

function wallMatches(cron: OracleCron, wall: number): boolean {
  const d = new Date(wall);
  if (!cron.seconds.has(d.getUTCSeconds()) || !cron.minutes.has(d.getUTCMinutes()) || !cron.hours.has(d.getUTCHours())) return false;
  if (!cron.months.has(d.getUTCMonth() + 1)) return false;
  const domOk = cron.doms.has(d.getUTCDate());
  const dowOk = cron.dows.has(d.getUTCDay());
  return !cron.domStar && !cron.dowStar ? domOk || dowOk : domOk && dowOk;
}

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/** UTC offset (ms) of `timeZone` at `instant`, parsed from the `GMT+05:30` style zone name. */
export function oracleOffset(timeZone: string, instant: number): number {
  if (timeZone === 'UTC') return 0;
  let f = offsetFormatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
    offsetFormatters.set(timeZone, f);
  }
  const name = f.formatToParts(instant).find((p) => p.type === 'timeZoneName')!.value;
  if (name === 'GMT') return 0;
  const m = /^GMT([+-])(\d{1,2}):?(\d{2})?(?::(\d{2}))?$/.exec(name);
  if (!m) throw new Error(`oracle: cannot read offset ${name}`);
  const sign = m[1] === '-' ? -1 : 1;
  return sign * ((Number(m[2]) * 60 + Number(m[3] ?? 0)) * MINUTE + Number(m[4] ?? 0) * SECOND);
}

/**
 * The fire instants of `expression` in `timeZone` strictly after `fromMs` and at most
 * `fromMs + windowMs`, first `count` of them. The walk starts `lookbackMs` before `fromMs` so
 * that a transition just before it is known (at least the longest gap or overlap of the zone).
 */
export function oracleNextFires(
  expression: string,
  timeZone: string,
  fromMs: number,
  count: number,
  windowMs: number,
  lookbackMs = 1.5 * DAY,
): number[] {
  const cron = parseOracleCron(expression);
  const step = cron.sixFields ? SECOND : MINUTE;
  const end = fromMs + windowMs;
  const fires = new Set<number>();
  const seen = new Set<number>();
  let previous: { wall: number; offset: number } | null = null;
  for (let t = Math.floor((fromMs - lookbackMs) / step) * step; t <= end + step; t += step) {
    const offset = oracleOffset(timeZone, t);
    const wall = t + offset;
    if (previous !== null && wall - previous.wall > step) {
      for (let skipped = previous.wall + step; skipped < wall; skipped += step) {
        if (wallMatches(cron, skipped)) fires.add(skipped - previous.offset);
      }
    }
    if (wallMatches(cron, wall) && (!seen.has(wall) || cron.realTime)) fires.add(t);
    seen.add(wall);
    previous = { wall, offset };
  }
  return [...fires]
    .filter((t) => t > fromMs && t <= end)
    .sort((a, b) => a - b)
    .slice(0, count);
}

/**
 * Whether `expression` ever fires: walks every date of one 400-year Gregorian cycle (the calendar,
 * weekdays included, repeats after it) and applies the oracle's day rule. The time of day plays
 * no part: the hour, minute and second fields always allow some value.
 */
export function oracleEverFires(expression: string): boolean {
  const cron = parseOracleCron(expression);
  let weekday = 6; // 2000-01-01 was a Saturday
  for (let year = 2000; year < 2400; year++) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    for (let month = 1; month <= 12; month++) {
      const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
      for (let day = 1; day <= days; day++) {
        const domOk = cron.doms.has(day);
        const dowOk = cron.dows.has((weekday + day - 1) % 7);
        const dayOk = !cron.domStar && !cron.dowStar ? domOk || dowOk : domOk && dowOk;
        if (cron.months.has(month) && dayOk) return true;
      }
      weekday = (weekday + days) % 7;
    }
  }
  return false;
}
