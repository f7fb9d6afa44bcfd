import { BadRequestError, WaitTimeoutError } from '../errors';
import type { ApiClient } from '../transport';
import type { WaitOptions } from './types';

/** Longest `?wait=` the API takes, in seconds. */
export const MAX_WAIT_SECONDS = 60;
const DEFAULT_POLL_INTERVAL_MS = 500;

/** Task statuses after which nothing changes without a replay. */
export const TERMINAL_TASK_STATUSES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED']);
/** Workflow statuses after which nothing changes. */
export const TERMINAL_WORKFLOW_STATUSES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/**
 * Reads `path` until its `status` is in `terminal` or `options.timeoutMs` has passed: a loop of long
 * polls `GET path?wait=S` with S the time left in seconds (at most 60, ms precision), which the
 * service answers as soon as the status is terminal, else at S with the current state. A server
 * that ignores `wait` (answers at once) is polled every `pollIntervalMs`; one that refuses it (400
 * naming `wait`) is polled without it.
 * @returns the terminal view
 * @throws TypeError, before any request, when `timeoutMs` is not a number ≥ 0 (Infinity: no end)
 *   or `pollIntervalMs` is not a finite number > 0 (NaN or a missing timeout polled without end,
 *   hundreds of reads a second); WaitTimeoutError with the last view read when the timeout passes
 *   first; the transport's errors (NotFoundError, ConnectionError, …) as they come, except that a
 *   request the transport may retry (a refused connection, 503, 429) is retried until the deadline,
 *   not only the client's `retry.maxAttempts` times (a service restarting during the wait). Each long poll's
 *   answer may take its wait plus the client's `fetchTimeoutMs`, and no request is retried after
 *   the deadline, so a service that stops answering is a ConnectionError soon after `timeoutMs` (at
 *   most the last long poll's wait plus `fetchTimeoutMs` after it)
 */
export async function waitForStatus<V extends { status: string }>(
  transport: ApiClient,
  id: string,
  path: string,
  terminal: ReadonlySet<string>,
  options: WaitOptions,
): Promise<V> {
  const timeoutMs = options?.timeoutMs;
  if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0)
    throw new TypeError(`timeoutMs must be a number of ms, 0 or more (Infinity: no end); got ${String(timeoutMs)}`);
  const pollIntervalMs = options.pollIntervalMs;
  if (pollIntervalMs !== undefined && !(typeof pollIntervalMs === 'number' && Number.isFinite(pollIntervalMs) && pollIntervalMs > 0))
    throw new TypeError(`pollIntervalMs must be a finite number of ms above 0; got ${String(pollIntervalMs)}`);
  const deadline = transport.now() + timeoutMs;
  const pollMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  let longPoll = true;
  for (;;) {
    const remainingMs = deadline - transport.now();
    const waitS = Math.min(Math.max(remainingMs, 1) / 1000, MAX_WAIT_SECONDS);
    const wait = longPoll && remainingMs > 0 ? Math.round(waitS * 1000) / 1000 : undefined;
    const started = transport.now();
    let view: V;
    try {
      view = (
        await transport.request<V>('GET', path, {
          query: { wait },
          timeoutMs: wait === undefined ? undefined : wait * 1000 + transport.fetchTimeoutMs,
          retryUntil: deadline,
          // A service restarting (refused connections, 503) is tried again until the deadline.
          maxAttempts: Infinity,
        })
      ).body;
    } catch (err) {
      if (wait !== undefined && err instanceof BadRequestError && /wait/.test(`${err.field ?? ''} ${err.message}`)) {
        longPoll = false;
        continue;
      }
      throw err;
    }
    if (terminal.has(view.status)) return view;
    const left = deadline - transport.now();
    if (left <= 0) throw new WaitTimeoutError(id, options.timeoutMs, view);
    // Answered well before its wait without the end: the server does not long-poll; poll instead.
    const answeredEarly = wait === undefined || transport.now() - started < wait * 1000 * 0.9;
    if (answeredEarly) await transport.pause(Math.min(pollMs, left));
  }
}
