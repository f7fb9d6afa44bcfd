/**
 * `ctx.log` of one attempt: each line goes to the worker's local logger (with `task_id` and
 * `attempt`) and into the attempt's batch for the scheduler, which keeps it with the attempt.
 */
import type { AttemptLogBuffer } from './attempt-reports';
import { jsonProblem } from '../json-numbers';

/** Deepest nesting of a line's fields the scheduler takes (as for payloads). */
const MAX_FIELDS_DEPTH = 64;
import type { AttemptLog, LogLevel, WorkerClock, WorkerLogger } from './types';

/**
 * Builds the attempt's `ctx.log`: callable (an info line) and by level.
 * @param ids `task_id` and `attempt`, added to the local logger's fields
 */
export function attemptLog(
  ids: { task_id: string; attempt: number },
  buffer: AttemptLogBuffer,
  logger: WorkerLogger,
  clock: WorkerClock,
): AttemptLog {
  const line = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    const msg = String(message);
    const local = logger[level];
    if (local) local.call(logger, msg, { ...ids, ...(fields ?? {}) });
    buffer.add({ level, msg, at: new Date(clock.now()).toISOString(), ...(fields ? { fields: jsonFields(fields) } : {}) });
  };
  const info = line('info');
  return Object.assign((message: string, fields?: Record<string, unknown>) => info(message, fields), {
    debug: line('debug'),
    info,
    warn: line('warn'),
    error: line('error'),
  });
}

/**
 * `fields` as their JSON reads back, or a marker when JSON cannot carry them (a cycle, a BigInt) or
 * the scheduler would refuse them (nested deeper than 64 levels: the whole batch of lines would be).
 */
function jsonFields(fields: Record<string, unknown>): Record<string, unknown> {
  if (jsonProblem(fields, MAX_FIELDS_DEPTH)?.kind === 'depth') return { fields_dropped: `nested deeper than ${MAX_FIELDS_DEPTH} levels` };
  try {
    return JSON.parse(JSON.stringify(fields)) as Record<string, unknown>;
  } catch {
    return { fields_dropped: 'not JSON-serialisable' };
  }
}
