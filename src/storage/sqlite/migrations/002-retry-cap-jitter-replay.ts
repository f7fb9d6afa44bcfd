/**
 * 002: retry delay cap and jitter per task, and the start of the current retry budget (a task
 * replayed from the dead-letter queue gets a fresh budget while its attempt numbers go on).
 * NULL means "the default of the task's backoff" for tasks stored before this migration.
 */
export const up = `
ALTER TABLE tasks ADD COLUMN max_retry_delay_seconds REAL;
ALTER TABLE tasks ADD COLUMN retry_jitter INTEGER;
ALTER TABLE tasks ADD COLUMN retry_base INTEGER NOT NULL DEFAULT 0;
`;
