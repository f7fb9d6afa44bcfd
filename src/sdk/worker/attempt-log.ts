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
    const kept = fields === undefined || fields === null ? undefined : jsonFields(fields);
    const local = logger[level];
    if (local) {
      try {
        local.call(logger, msg, { ...ids, ...(kept ?? {}) });
      } catch {
        /* a local logger that throws does not fail the attempt: the line is still kept with it */
      }
    }
    buffer.add({ level, msg, at: new Date(clock.now()).toISOString(), ...(kept ? { fields: kept } : {}) });
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
 * `fields` as their JSON reads back, or a marker when JSON cannot carry them (a cycle, a BigInt), they
 * are not an object (an array, a string: from plain JavaScript), or the scheduler would refuse them
 * (nested deeper than 64 levels). The scheduler refuses a whole batch of lines for one such line.
 */
function jsonFields(fields: unknown): Record<string, unknown> {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    return { fields_dropped: `not an object (${Array.isArray(fields) ? 'an array' : typeof fields})` };
  if (jsonProblem(fields, MAX_FIELDS_DEPTH)?.kind === 'depth') return { fields_dropped: `nested deeper than ${MAX_FIELDS_DEPTH} levels` };
  try {
    const read = JSON.parse(JSON.stringify(fields)) as unknown;
    return typeof read === 'object' && read !== null && !Array.isArray(read)
      ? (read as Record<string, unknown>)
      : { fields_dropped: 'not an object once serialised' };
  } catch {
    return { fields_dropped: 'not JSON-serialisable' };
  }
}
