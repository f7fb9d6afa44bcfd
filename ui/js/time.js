import { h } from './dom.js';

/**
 * Times as the dashboard shows them: every instant says its zone. The API speaks ISO-8601 UTC;
 * the page shows UTC ("2026-12-02 06:30:00 UTC") with the browser's own zone in the tooltip, and a
 * cron's times in the cron's IANA zone beside UTC, whatever zone the browser is in.
 */

const formats = new Map();

/** The browser's IANA zone (e.g. "Europe/Paris"), as Intl resolves it. */
export function browserZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
}

/**
 * "YYYY-MM-DD HH:mm:ss" of `date` in the IANA zone `zone` (24-hour clock, no zone suffix).
 * @throws RangeError for an unknown zone
 */
export function wallClock(date, zone) {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formats.set(zone, f);
  }
  const p = Object.fromEntries(f.formatToParts(date).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/** An ISO instant as text in UTC with its zone: "2026-12-02 06:30:00 UTC"; '' for null. */
export function utcText(iso) {
  return iso ? `${wallClock(new Date(iso), 'UTC')} UTC` : '';
}

/** An ISO instant as a <time> in UTC ("… UTC"), the browser's zone in the tooltip; '' for null. */
export function time(iso) {
  if (!iso) return '';
  const zone = browserZone();
  return h('time', { datetime: iso, title: `${wallClock(new Date(iso), zone)} ${zone} (browser)` }, utcText(iso));
}

/**
 * An ISO instant in the IANA zone `zone` beside UTC, as a <time>:
 * "2026-12-02 02:30:00 America/New_York · 07:30:00 UTC" (the UTC date is given when it differs).
 * With `zone` UTC, just the UTC text. '' for null.
 */
export function zonedTime(iso, zone) {
  if (!iso) return '';
  if (!zone || zone === 'UTC' || zone === 'Etc/UTC') return time(iso);
  const d = new Date(iso);
  const local = wallClock(d, zone);
  const utc = wallClock(d, 'UTC');
  const utcPart = utc.slice(0, 10) === local.slice(0, 10) ? utc.slice(11) : utc;
  return h('time', { datetime: iso, class: 'zoned', title: `${utcText(iso)}` },
    `${local} ${zone}`, h('span', { class: 'muted' }, ` · ${utcPart} UTC`));
}

/**
 * The instant a `<input type="datetime-local">` value ("YYYY-MM-DDTHH:mm[:ss]") means when read
 * as UTC, as ISO-8601; null when empty or not a valid time.
 */
export function utcInputToIso(value) {
  if (!value) return null;
  const d = new Date(`${value}Z`);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}
