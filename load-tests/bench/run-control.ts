/**
 * The run-wide abort signal (overall timeout, service death or a signal) and the waits that
 * observe it: checkAborted, an abortable sleep, and mapLimit for bounded concurrency.
 */
import { setMaxListeners } from 'node:events';

/** Aborted on overall timeout, service death or a signal; every wait and request observes it. */
export const run = new AbortController();
setMaxListeners(1_000_000, run.signal); // one listener per in-flight request

export function abortReason(): Error {
  const r: unknown = run.signal.reason;
  return r instanceof Error ? r : new Error(String(r ?? 'aborted'));
}

export function checkAborted(): void {
  if (run.signal.aborted) throw abortReason();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (run.signal.aborted) return reject(abortReason());
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason());
    };
    const timer = setTimeout(
      () => {
        run.signal.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    run.signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs `fn` over `items` with at most `limit` calls in flight. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i]);
    }
  });
  await Promise.all(lanes);
  return out;
}
