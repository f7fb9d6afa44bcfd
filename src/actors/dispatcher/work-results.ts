import type { WorkResult } from '../protocol';

/**
 * The well-formed entries of a worker's `completed` message, and how many were not. A worker's
 * channel is open to its handlers' code (a handler may `process.send` anything), and an entry of
 * the wrong shape used to throw after the dispatcher had taken its attempt out of the running
 * set: the attempt's real result was then dropped and it ran again at its lease's end. An entry is
 * kept when it names an attempt (`id` a string, `attempt` a positive integer), a finite
 * `durationMs` and an outcome of one of the three kinds with its fields' types
 * (`domain/retry-policy.ts` `AttemptOutcome`).
 */
export function wellFormedResults(results: unknown): { results: WorkResult[]; refused: number } {
  if (!Array.isArray(results)) return { results: [], refused: 1 };
  const kept: WorkResult[] = [];
  for (const r of results as unknown[]) if (isWorkResult(r)) kept.push(r);
  return { results: kept.length === results.length ? (results as WorkResult[]) : kept, refused: results.length - kept.length };
}

function isWorkResult(r: unknown): r is WorkResult {
  if (typeof r !== 'object' || r === null) return false;
  const w = r as Partial<Record<keyof WorkResult, unknown>>;
  if (typeof w.id !== 'string' || !Number.isInteger(w.attempt) || (w.attempt as number) < 1) return false;
  if (typeof w.durationMs !== 'number' || !Number.isFinite(w.durationMs)) return false;
  if (w.handlerRunning !== undefined && w.handlerRunning !== true) return false;
  const o = w.outcome as Record<string, unknown> | null | undefined;
  if (typeof o !== 'object' || o === null) return false;
  switch (o.kind) {
    case 'succeeded':
      return 'result' in o;
    case 'failed':
      return typeof o.message === 'string' && typeof o.errorType === 'string' && typeof o.permanent === 'boolean';
    case 'cancelled':
      return true;
    default:
      return false;
  }
}
