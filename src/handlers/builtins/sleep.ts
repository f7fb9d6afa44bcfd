import { PermanentError, TaskHandler } from '../types';

/**
 * Waits `payload.ms` milliseconds (0 ≤ ms ≤ 24 h), then returns `{slept_ms}`. Stops early when the
 * task's signal aborts (cancel or timeout), rejecting with the abort reason.
 */
export const sleep: TaskHandler = (payload, ctx) => {
  const ms = (payload as { ms?: unknown } | null)?.ms ?? 0;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > 86_400_000) {
    throw new PermanentError('payload.ms must be a number of milliseconds between 0 and 86400000');
  }
  return new Promise((resolve, reject) => {
    if (ctx.signal.aborted) return reject(ctx.signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(ctx.signal.reason);
    };
    // A worker process runs handlers against real time; the scheduler core never sleeps.
    const timer = setTimeout(() => {
      ctx.signal.removeEventListener('abort', onAbort);
      resolve({ slept_ms: ms });
    }, ms);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
};
