import { AttemptLog, MAX_LOG_BYTES, MAX_LOG_LINES } from '../domain/attempt-log';
import { iso } from './task-json';
import { WELL_FORMED_TEXT } from './well-formed-text';

/**
 * `GET /api/v1/tasks/{id}/attempts/{attempt}/logs`: the task id and a 1-based attempt number
 * (decimal digits: path parameters are text, and validation never coerces).
 */
export const attemptLogParamsSchema = {
  type: 'object',
  required: ['id', 'attempt'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 1000, pattern: WELL_FORMED_TEXT },
    attempt: { type: 'string', pattern: '^[1-9][0-9]{0,8}$', description: 'attempt number, 1-based' },
  },
} as const;

/** One line as the API shows it. */
export interface AttemptLogLineJson {
  /** 1-based number of the line in its attempt. */
  n: number;
  /** ISO-8601 UTC: when the handler logged it. */
  at: string;
  message: string;
  /** The fields given to `ctx.log`, or null. */
  fields: unknown;
  /** The message or fields were cut (over 4096 characters, or fields that were not JSON). */
  truncated: boolean;
}

/** An attempt's kept `ctx.log` lines as the API shows them (docs/API.md, "Attempt logs"). */
export interface AttemptLogJson {
  task_id: string;
  attempt: number;
  lines: AttemptLogLineJson[];
  /** Lines logged before the first one kept (the oldest are dropped past the bounds). */
  dropped_lines: number;
  /** The bounds per attempt: the last `max_lines` lines and `max_bytes` characters of text. */
  max_lines: number;
  max_bytes: number;
}

/** The API's view of an attempt's log; a line's fields, stored as JSON text, are parsed back. */
export function attemptLogJson(log: AttemptLog): AttemptLogJson {
  return {
    task_id: log.taskId,
    attempt: log.attempt,
    lines: log.lines.map((l) => ({
      n: l.n,
      at: iso(l.at) as string,
      message: l.message,
      fields: l.fields === null ? null : (JSON.parse(l.fields) as unknown),
      truncated: l.truncated,
    })),
    dropped_lines: log.droppedLines,
    max_lines: MAX_LOG_LINES,
    max_bytes: MAX_LOG_BYTES,
  };
}

/** The response schema of the logs route (for the OpenAPI document). */
export const attemptLogSchema = {
  type: 'object',
  required: ['task_id', 'attempt', 'lines', 'dropped_lines'],
  properties: {
    task_id: { type: 'string' },
    attempt: { type: 'integer' },
    lines: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          n: { type: 'integer', description: '1-based line number within the attempt' },
          at: { type: 'string', format: 'date-time' },
          message: { type: 'string' },
          fields: { description: 'the fields given to `ctx.log`, or null' },
          truncated: { type: 'boolean', description: 'message or fields cut (over 4096 characters, or fields not JSON)' },
        },
      },
    },
    dropped_lines: { type: 'integer', description: 'older lines dropped past the bounds' },
    max_lines: { type: 'integer' },
    max_bytes: { type: 'integer' },
  },
} as const;
