/**
 * The REST client of the dashboard: same-origin fetch to `/api/v1/…` and `/metrics`, with the API
 * key (kept in sessionStorage for this tab only) as `Authorization: Bearer`. Errors are thrown as
 * {@link ApiError} carrying the API's `{error: {code, message, details}}`.
 */

const KEY_ITEM = 'scheduler.apiKey';

/** The key entered in this tab, or '' (no keys configured, or not entered yet). */
export function apiKey() {
  return sessionStorage.getItem(KEY_ITEM) ?? '';
}

/** Keeps `key` for this tab ('' forgets it). */
export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY_ITEM, key);
  else sessionStorage.removeItem(KEY_ITEM);
}

/** An answer other than 2xx: `status`, and `code`/`details` from the API's error envelope. */
export class ApiError extends Error {
  constructor(status, body) {
    const err = body?.error ?? {};
    super(err.message ? `${status} ${err.code}: ${err.message}` : `HTTP ${status}`);
    this.status = status;
    this.code = err.code;
    this.details = err.details;
  }
}

function headers(extra = {}) {
  const key = apiKey();
  return key ? { ...extra, authorization: `Bearer ${key}` } : extra;
}

/**
 * Calls the API. `path` starts with `/`; `query` is an object (empty values are left out).
 * @returns the parsed JSON body
 * @throws ApiError for a status other than 2xx
 */
export async function api(method, path, { query, body } = {}) {
  const qs = query ? new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== '')).toString() : '';
  const res = await fetch(qs ? `${path}?${qs}` : path, {
    method,
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) throw new ApiError(res.status, parsed);
  return parsed;
}

/**
 * The Prometheus text of `/metrics` (an admin key is needed when keys are configured).
 * @throws ApiError for a status other than 2xx
 */
export async function metricsText() {
  const res = await fetch('/metrics', { headers: headers() });
  const text = await res.text();
  if (!res.ok) {
    let body = null;
    try { body = JSON.parse(text); } catch { /* not JSON */ }
    throw new ApiError(res.status, body);
  }
  return text;
}

/** Path segment encoding for ids. */
export const seg = encodeURIComponent;
