/**
 * When and how long the SDK's transport waits before repeating a request. 429 and 503 answers
 * mean the service did nothing with the request (docs/API.md), so any method may be repeated after
 * the answer's `Retry-After` (RFC 9110 §10.2.3: seconds or an HTTP date). A connection that fails
 * mid-request may have delivered it: only GET/HEAD and requests marked idempotent are repeated then
 * (and any request whose connection was never made).
 */

/** How often and how long to retry. */
export interface RetryOptions {
  /** Tries of one request, the first included (default 3; 1: no retry). */
  maxAttempts?: number;
  /** Longest wait between two tries in ms, `Retry-After` included (default 30,000). */
  maxDelayMs?: number;
  /** First backoff delay in ms when the answer gives no `Retry-After` (default 250; doubled each try). */
  baseDelayMs?: number;
}

/** Statuses retried: the API's "nothing was done, try later" answers. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 503]);

const DEFAULT_MAX_DELAY_MS = 30_000;
const DEFAULT_BASE_DELAY_MS = 250;

/** Node's codes of a connection that was never made: the request cannot have reached the service. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * The wait an answer's `Retry-After` asks for, in ms: delay-seconds (decimals accepted) or an HTTP
 * date (minus `nowMs`, at least 0). @returns undefined when absent or unreadable
 */
export function retryAfterMs(header: string | string[] | undefined, nowMs: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  // An HTTP date (RFC 9110 §10.2.3: IMF-fixdate, with a weekday and a time), not any string that
  // Date.parse reads: "-5" would be a date in the year −5, a wait of 0.
  if (!/^[A-Za-z]{3},? /.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/**
 * Exponential backoff with jitter for try `attempt` (1: the wait after the first try):
 * `base · 2^(attempt−1)`, capped by `maxDelayMs`, of which a random half ("equal jitter") so that
 * clients that failed together do not retry together. @returns ms
 */
export function backoffDelayMs(attempt: number, options: RetryOptions = {}, random: () => number = Math.random): number {
  const cap = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  const full = Math.min(cap, (options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS) * 2 ** (attempt - 1));
  return Math.round(full / 2 + (random() * full) / 2);
}

/**
 * The wait before try `attempt + 1` after a 429/503 answer: its `Retry-After` (`afterMs`) when it
 * gave one, else {@link backoffDelayMs}; never more than `maxDelayMs`. @returns ms
 */
export function retryDelayMs(
  afterMs: number | undefined,
  attempt: number,
  options: RetryOptions = {},
  random: () => number = Math.random,
): number {
  return Math.min(afterMs ?? backoffDelayMs(attempt, options, random), options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
}

/**
 * Whether a request whose exchange failed with `err` may be sent again: always when the connection
 * was never made; otherwise only for GET and HEAD and for requests marked `idempotent`.
 */
export function mayRetryAfterConnectionError(method: string, idempotent: boolean, err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  if (code && NOT_CONNECTED.has(code)) return true;
  return idempotent || method === 'GET' || method === 'HEAD';
}
