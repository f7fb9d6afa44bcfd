import type { ManualClock } from '../../src/domain/clock';

/**
 * Settles `pending` (a request holding a `?wait=` long poll on a service with a manual clock) by
 * moving that clock on by `stepMs` whenever a long poll is held, until `pending` settles.
 * @returns what `pending` settled with (a rejection is rethrown)
 */
export async function moveClockWhileWaiting<T>(
  f: { clock: ManualClock; waiters: { size: number } },
  pending: Promise<T>,
  stepMs = 1000,
): Promise<T> {
  let settled = false;
  const done = pending.finally(() => (settled = true));
  done.catch(() => undefined);
  while (!settled) {
    if (f.waiters.size > 0) f.clock.advance(stepMs);
    await new Promise((r) => setTimeout(r, 20));
  }
  return done;
}
