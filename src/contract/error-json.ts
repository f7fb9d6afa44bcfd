import type { ErrorCause } from '../domain/attempt-error';
import type { TaskError } from '../domain/task';

/** The API's view of one cause of an attempt's error (snake_case). */
export interface ErrorCauseJson {
  message: string;
  type: string;
  code?: string;
  cause?: ErrorCauseJson;
  cause_omitted?: 'depth' | 'circular';
}

/**
 * The API's view of an attempt's error: `message`, `type`, `retryable` as always, then only the
 * fields known for this error: `code`, `http_status`, `exit_code` and `signal` (a lost worker
 * process), `cause` (nested, at most 5 deep; `cause_omitted` says why a chain stops early) and
 * `stack` (bounded). docs/API.md, "Attempt errors".
 */
export interface TaskErrorJson extends ErrorCauseJson {
  retryable: boolean;
  http_status?: number;
  exit_code?: number | null;
  signal?: string | null;
  stack?: string;
}

function causeJson(c: ErrorCause): ErrorCauseJson {
  return {
    message: c.message,
    type: c.type,
    ...(c.code !== undefined ? { code: c.code } : {}),
    ...(c.cause !== undefined ? { cause: causeJson(c.cause) } : {}),
    ...(c.causeOmitted !== undefined ? { cause_omitted: c.causeOmitted } : {}),
  };
}

/**
 * A stored attempt error → its API view (null stays null); fields never recorded are left out.
 * @param options `stack: false` leaves the stack out (list pages: up to 4 KiB per task)
 */
export function taskErrorJson(e: TaskError | null, options: { stack?: boolean } = {}): TaskErrorJson | null {
  if (e === null || e === undefined) return null;
  return {
    message: e.message,
    type: e.type,
    retryable: e.retryable,
    ...(e.code !== undefined ? { code: e.code } : {}),
    ...(e.httpStatus !== undefined ? { http_status: e.httpStatus } : {}),
    ...(e.exitCode !== undefined ? { exit_code: e.exitCode } : {}),
    ...(e.signal !== undefined ? { signal: e.signal } : {}),
    ...(e.cause !== undefined ? { cause: causeJson(e.cause) } : {}),
    ...(e.causeOmitted !== undefined ? { cause_omitted: e.causeOmitted } : {}),
    ...(e.stack !== undefined && options.stack !== false ? { stack: e.stack } : {}),
  };
}
