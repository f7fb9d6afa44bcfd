/**
 * Time for the pull worker: the system clock, pauses that a close ends early, the backoff after a
 * failed call, and the interval of automatic heartbeats.
 */
import type { WorkerClock } from './types';

/** Wall-clock time and Node's timers. */
export const systemClock: WorkerClock = Object.freeze({
  now: () => Date.now(),
  setTimeout: (fn: () => void, delayMs: number) => setTimeout(fn, Math.max(0, delayMs)),
  clearTimeout: (handle: unknown) => clearTimeout(handle as NodeJS.Timeout),
});

/** First pause after a failed call (ms); doubled per further failure up to {@link MAX_BACKOFF_MS}. */
export const FIRST_BACKOFF_MS = 250;

/** Longest pause between retries of a failing call (ms). */
export const MAX_BACKOFF_MS = 15_000;

/**
 * The pause before retry number `failures` (1 = first retry): 250 ms doubled per failure, at most
 * 15 s, with ±20 % jitter so that many workers that lost the service together do not return in step
 * (the "exponential backoff with jitter" of AWS's architecture blog and gRPC's connection backoff).
 * @param random a number in [0, 1) (default Math.random)
 */
export function backoffMs(failures: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, Math.min(failures - 1, 16)));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** Resolves after `ms` on `clock`, or as soon as `signal` aborts (never rejects). */
export function pause(clock: WorkerClock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clock.clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Shortest and longest automatic heartbeat interval (ms); `offClock`: the interval when the lease's
 * expiry is already past by this process's clock (a clock far off the scheduler's).
 * The shortest keeps three beats within the shortest lease a queue may have (`leaseMs` 100).
 */
export const HEARTBEAT_BOUNDS_MS = { min: 25, max: 60_000, offClock: 200 } as const;

/**
 * The interval of automatic heartbeats: a third of the time left on the lease (`leaseExpiresAt`
 * ISO-8601, by the scheduler's clock, read against `now`), so two beats may be lost before the lease
 * runs out; bounded to 25 ms–60 s. An expiry already past by this clock (a clock far off the
 * scheduler's) gives 200 ms; an unreadable expiry gives 10 s.
 */
export function heartbeatIntervalMs(leaseExpiresAt: string, now: number): number {
  const left = Date.parse(leaseExpiresAt) - now;
  if (!Number.isFinite(left)) return 10_000;
  if (left <= 0) return HEARTBEAT_BOUNDS_MS.offClock;
  return Math.min(HEARTBEAT_BOUNDS_MS.max, Math.max(HEARTBEAT_BOUNDS_MS.min, Math.floor(left / 3)));
}
