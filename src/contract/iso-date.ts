/**
 * RFC 3339 date-time with an offset: `T` and `Z` in either case (RFC 3339 §5.6), seconds optional
 * as in ISO 8601, any number of fraction digits (milliseconds are kept). Its source is also the
 * JSON Schema pattern of every date field (task-schemas.ts).
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** {@link ISO} as a pattern string, for JSON Schemas. */
export const ISO_WITH_OFFSET = ISO.source;

/**
 * Parses an RFC 3339 date-time with a mandatory offset (`Z` or `±hh:mm`) into epoch ms, or returns
 * null when it is not one or names a day or time that does not exist (Feb 30, hour 24, minute 60,
 * offset beyond ±23:59), or whose instant in UTC falls outside years 0000–9999
 * (`9999-12-31T23:59:59-01:00`). `Date.parse` would roll such values over into another day
 * silently. `T` and `Z` may be lowercase (RFC 3339 §5.6, NOTE); seconds may be left out (ISO
 * 8601's reduced precision: `10:00Z` is `10:00:00Z`).
 */
export function parseIsoWithOffset(text: string): number | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number);
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 59) return null;
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (d < 1 || d > daysInMonth) return null;
  let offsetMin = 0;
  if (m[8] !== 'Z' && m[8] !== 'z') {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const ms = m[7] ? Math.floor(Number(`0.${m[7]}`) * 1000) : 0;
  const utc = new Date(0);
  utc.setUTCFullYear(y, mo - 1, d); // setUTCFullYear keeps years 0–99 as written
  utc.setUTCHours(h, mi, s, ms);
  const at = utc.getTime() - offsetMin * 60_000;
  // An offset can carry it out of years 0000–9999 in UTC, which the API's answers could not write.
  return at < FIRST_RFC3339_MS || at > LAST_RFC3339_MS ? null : at;
}

/** The reason given for a date-time {@link parseIsoWithOffset} refused (after the schema's pattern passed). */
export const NOT_A_DATE_TIME = 'is not a date-time that exists in years 0000–9999 UTC (check day, hour and offset)';

/** The first instant RFC 3339 can write, `0000-01-01T00:00:00.000Z`. */
export const FIRST_RFC3339_MS = -62_167_219_200_000;

/** The last instant RFC 3339 can write (`9999-12-31T23:59:59.999Z`; later years need 5 digits). */
export const LAST_RFC3339_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
