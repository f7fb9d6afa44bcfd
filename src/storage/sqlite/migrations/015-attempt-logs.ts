/**
 * 015: the `ctx.log` lines of each attempt (domain/attempt-log.ts): one row per line, numbered
 * from 1 within its attempt. The worker bounds an attempt's lines (the last 200, 64 KiB) and the
 * append deletes those before the first kept number; the retention pass and the dead-letter
 * delete remove a task's lines with it. Attempt errors need no change: `error` columns hold JSON.
 */
export const up = `
CREATE TABLE attempt_logs (
  task_id   TEXT    NOT NULL,
  attempt   INTEGER NOT NULL,
  n         INTEGER NOT NULL,
  at        INTEGER NOT NULL,
  message   TEXT    NOT NULL,
  fields    TEXT,
  truncated INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (task_id, attempt, n)
) WITHOUT ROWID;
`;
