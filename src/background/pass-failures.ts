import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import { StoreUnavailableError } from '../domain/errors';
import { Periodic } from './periodic';

/** The longest a background pass's repeated failure goes unmentioned in the log (ms). */
export const PASS_FAILURE_REPEAT_LOG_MS = 60_000;

/**
 * The `onError` of a periodic background pass (a WAL checkpoint every second, the audit, the
 * waiting counts; `Periodic`): a store fault is skipped (the store's health logs it once,
 * OPERATIONS.md "Store faults"); any other failure is logged as a warning the first time, and a
 * failure that repeats is counted and logged at most once per {@link PASS_FAILURE_REPEAT_LOG_MS}
 * with the count, not at every pass (a checkpoint thread that cannot start at the open-files
 * limit fails every second). A pass that succeeds again starts the count over.
 * @param what names the pass in the log line (`WAL checkpoint failed`)
 * @returns `onError` for the failures, and `succeeded` for the pass to call when it worked
 */
export function passFailureLog(log: Pick<Logger, 'warn'>, clock: Clock, what: string): { onError(err: unknown): void; succeeded(): void } {
  let failing = false;
  let repeats = 0;
  let lastLogAt = 0;
  return {
    onError(err: unknown): void {
      if (err instanceof StoreUnavailableError) return;
      const now = clock.now();
      if (!failing) {
        failing = true;
        repeats = 0;
        lastLogAt = now;
        log.warn({ err }, what);
        return;
      }
      repeats += 1;
      if (now - lastLogAt < PASS_FAILURE_REPEAT_LOG_MS && now >= lastLogAt) return;
      log.warn({ err, repeats }, `${what} (again ${repeats} time(s) since the last line)`);
      repeats = 0;
      lastLogAt = now;
    },
    succeeded(): void {
      failing = false;
    },
  };
}

/**
 * A {@link Periodic} running `fn` every `intervalMs`, whose failures go to `failures` (from
 * {@link passFailureLog}), told of each success too.
 */
export function periodicPass(
  clock: Clock,
  intervalMs: number,
  fn: () => Promise<unknown>,
  failures: ReturnType<typeof passFailureLog>,
): Periodic {
  return new Periodic(
    clock,
    intervalMs,
    async () => {
      await fn();
      failures.succeeded();
    },
    (err) => failures.onError(err),
  );
}
