/**
 * An `attempt_logs` document: one `ctx.log` line of an attempt (domain/attempt-log.ts), found by
 * (task_id, attempt, n). Deleted with its task (retention, dead-letter delete).
 */
export interface AttemptLogDoc {
  /** `<task id>:<attempt>:<n>`: a repeated append of the same line finds it. */
  _id: string;
  task_id: string;
  attempt: number;
  /** 1-based line number within the attempt. */
  n: number;
  /** Epoch ms (the worker's clock). */
  at: number;
  message: string;
  /** The fields as JSON text, or null. */
  fields: string | null;
  truncated: boolean;
}

/** The `_id` of line `n` of an attempt. */
export function attemptLogLineId(taskId: string, attempt: number, n: number): string {
  return `${taskId}:${attempt}:${n}`;
}
