import type { AttemptOutcome } from '../../domain/retry-policy';
import { stoppedOutcome } from '../../domain/lost-attempt';
import type { CompletionResult } from '../../storage/store';
import type { FinishedAttempt } from './attempt-watchdog';
import type { RunningMap } from './running-attempts';

/** The dispatcher as the end of a drain's grace sees it. */
export interface InterruptHost {
  running: RunningMap;
  /** Kills the worker process `workerId` (respawn is off during a drain). */
  kill(workerId: string): void;
  /** The outcome an aborted attempt reported while its handler still ran, if any (SettlingAttempts). */
  heldOutcome(taskId: string, attempt: number): AttemptOutcome | undefined;
  /** Applies the retry policy to `results` and writes them; null when the write did not happen. */
  record(results: FinishedAttempt[], now: number): Promise<CompletionResult[] | null>;
}

/**
 * Ends every attempt still running when a drain's grace is over as a free retry
 * ({@link stoppedOutcome}; one aborted earlier whose handler had not stopped, with its own
 * outcome), after killing the worker processes that run them: the free retry may start on another
 * node as soon as it is written, and the attempt it replaces must not still be running here then.
 * `now`: epoch ms; `mono`: the clock's monotonic reading now (the attempts' durations). Never throws.
 * @returns how many free retries were written: those the store applied (an attempt whose end the
 *   store already holds is not one); none when the write did not happen (the recorder keeps them
 *   as unwritten, and they are recovered as lost, charged)
 */
export async function interruptRunning(host: InterruptHost, now: number, mono: number): Promise<number> {
  if (host.running.size === 0) return 0;
  for (const workerId of new Set([...host.running.values()].map((r) => r.workerId))) host.kill(workerId);
  const aborted = new Set<string>();
  const results = [...host.running.values()].map((r) => {
    const held = host.heldOutcome(r.task.id, r.task.attempt);
    if (held) aborted.add(r.task.id);
    return { id: r.task.id, attempt: r.task.attempt, durationMs: Math.max(0, mono - r.startedMono), outcome: held ?? stoppedOutcome() };
  });
  const written = await host.record(results, now).catch(() => null);
  return written === null ? 0 : written.filter((r) => r.applied && !aborted.has(r.taskId)).length;
}
