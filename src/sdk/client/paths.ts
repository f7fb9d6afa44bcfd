/**
 * `/api/v1/<segments>` with each segment URL-encoded (ids may hold any character). A segment that
 * is `.` or `..` (a concurrency key may be one) is written `%2E` / `%2E%2E`, and the transport
 * sends the path as written: URL parsing removes dot segments, `%2E` ones too (WHATWG URL, RFC 3986
 * §5.2.4), so `concurrency-limits/..` reached `/api/v1/`.
 * @throws TypeError for a segment that is undefined, null or empty (the client methods are async:
 *   their callers see a rejection)
 */
export function apiPath(...segments: Array<string | number>): string {
  // From plain JavaScript an id may be missing: `tasks.get(undefined)` asked for the task "undefined".
  const missing = segments.findIndex((s) => s === undefined || s === null || s === '');
  if (missing >= 0) {
    const shown = segments.slice(0, missing).join('/');
    const got = segments[missing] === '' ? 'an empty string' : String(segments[missing]);
    throw new TypeError(`an id is required after /api/v1/${shown}; got ${got}`);
  }
  return `/api/v1/${segments.map((s) => dotSafe(encodeURIComponent(String(s)))).join('/')}`;
}

/** `encoded` with a lone `.` or `..` written as percent escapes (encodeURIComponent leaves dots). */
function dotSafe(encoded: string): string {
  return encoded === '.' ? '%2E' : encoded === '..' ? '%2E%2E' : encoded;
}
