/** `/api/v1/<segments>` with each segment URL-encoded (ids may hold any character). */
export function apiPath(...segments: Array<string | number>): string {
  return `/api/v1/${segments.map((s) => encodeURIComponent(String(s))).join('/')}`;
}
