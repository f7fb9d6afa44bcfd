/**
 * UTC offsets of an IANA time zone, read from the runtime's tz database through
 * `Intl.DateTimeFormat` (no dependency, no I/O, no clock). The cron search uses them to map wall
 * clock times of the zone to instants and to find the instants where the offset changes (DST
 * transitions, zone redefinitions).
 *
 * Offsets are in milliseconds, whole seconds, positive east of Greenwich (`+05:30` → 19 800 000).
 */

const SECOND_MS = 1000;

/** One formatter per zone: building an `Intl.DateTimeFormat` is far dearer than using one. */
const formatters = new Map<string, Intl.DateTimeFormat>();
/**
 * Zone names come from requests and `Intl` accepts any letter case, so the number of distinct
 * spellings is unbounded; past this many the cache starts over.
 */
const MAX_CACHED_FORMATTERS = 512;

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    if (formatters.size >= MAX_CACHED_FORMATTERS) formatters.clear();
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/**
 * True when the runtime knows `timeZone` as a tz database zone name (`Europe/Berlin`, `UTC`,
 * `US/Eastern`, any letter case). Offset strings such as `+05:30` are refused even where a newer
 * runtime would accept them: they are not zone names and carry no daylight-saving rules.
 */
export function isKnownTimeZone(timeZone: string): boolean {
  if (timeZone.trim() === '' || /^[+-]/.test(timeZone.trim())) return false;
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/**
 * Epoch milliseconds of a wall-clock date and time read as if it were UTC ("wall ms"). Unlike
 * `Date.UTC` it does not map years 0–99 to 1900–1999.
 */
export function wallMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second));
  date.setUTCFullYear(year);
  return date.getTime();
}

/** The offset of `timeZone` at instant `epochMs` (milliseconds, whole seconds). */
export function zoneOffsetAt(timeZone: string, epochMs: number): number {
  const instant = Math.floor(epochMs / SECOND_MS) * SECOND_MS;
  const fields: Record<string, string> = {};
  for (const part of formatterFor(timeZone).formatToParts(instant)) fields[part.type] = part.value;
  let year = Number(fields.year);
  if (fields.era === 'BC' || fields.era === 'B') year = 1 - year;
  const hour = Number(fields.hour) % 24; // some ICU versions print midnight as 24 even with h23
  const local = wallMs(year, Number(fields.month), Number(fields.day), hour, Number(fields.minute), Number(fields.second));
  return local - instant;
}

/**
 * The first instant in `(fromMs, toMs]` whose offset differs from the offset at `fromMs`, found by
 * bisection to the second. The caller has seen the offsets at the two ends differ. It assumes one
 * change in the interval (the caller keeps intervals to a day; zones do not change offset twice in
 * a day and come back).
 */
export function findOffsetChange(timeZone: string, fromMs: number, toMs: number): number {
  const before = zoneOffsetAt(timeZone, fromMs);
  let low = fromMs; // offset here is `before`
  let high = toMs; // offset here is not `before`
  while (high - low > SECOND_MS) {
    const mid = low + Math.floor((high - low) / 2 / SECOND_MS) * SECOND_MS;
    if (zoneOffsetAt(timeZone, mid) === before) low = mid;
    else high = mid;
  }
  return high;
}

/**
 * `timeZone` in the tz database's own letter case (`utc` → `UTC`, `america/new_york` →
 * `America/New_York`), so a definition stores and shows one spelling. Only the case changes: a
 * link such as `US/Eastern` is kept, and so is a name the runtime's ICU would map to an older one
 * (it reads `Europe/Kyiv` as `Europe/Kiev`). An unknown name is returned as given.
 */
export function canonicalTimeZone(timeZone: string): string {
  try {
    const resolved = formatterFor(timeZone).resolvedOptions().timeZone;
    return resolved.toLowerCase() === timeZone.toLowerCase() ? resolved : timeZone;
  } catch {
    return timeZone;
  }
}
