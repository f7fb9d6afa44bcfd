/**
 * 001: tasks, attempts, meta. Append-only: never edit a released migration; add 002, 003, ….
 * Times are epoch milliseconds (INTEGER); JSON values are TEXT.
 */
export const up = `
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE tasks (
  seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
  id                  TEXT    NOT NULL UNIQUE,
  partition           INTEGER NOT NULL,
  task_type           TEXT    NOT NULL,
  payload             TEXT,
  priority            INTEGER NOT NULL,
  queue               TEXT    NOT NULL,
  tenant_id           TEXT    NOT NULL,
  correlation_id      TEXT,
  idempotency_key     TEXT,
  metadata            TEXT    NOT NULL,
  max_retries         INTEGER NOT NULL,
  retry_backoff       TEXT    NOT NULL,
  retry_delay_seconds REAL    NOT NULL,
  timeout_seconds     REAL    NOT NULL,
  scheduled_at        INTEGER,
  due_at              INTEGER NOT NULL,
  state               TEXT    NOT NULL,
  attempts            INTEGER NOT NULL DEFAULT 0,
  worker_id           TEXT,
  started_at          INTEGER,
  completed_at        INTEGER,
  duration_ms         INTEGER,
  result              TEXT,
  error               TEXT,
  cancel_requested    INTEGER NOT NULL DEFAULT 0,
  lease_expires_at    INTEGER,
  created_at          INTEGER NOT NULL,
  updated_at          INTEGER NOT NULL
);

-- "Due tasks of partition p": a range scan over waiting tasks only.
CREATE INDEX tasks_waiting_due ON tasks (partition, due_at, seq)
  WHERE state IN ('SCHEDULED', 'PENDING', 'RETRYING');

-- Listing by status, newest first; depth by state; tasks left RUNNING by a dead process.
CREATE INDEX tasks_state_seq ON tasks (state, seq);

CREATE TABLE attempts (
  task_id    TEXT    NOT NULL,
  attempt    INTEGER NOT NULL,
  worker_id  TEXT,
  started_at INTEGER NOT NULL,
  ended_at   INTEGER NOT NULL,
  outcome    TEXT    NOT NULL,
  error      TEXT,
  PRIMARY KEY (task_id, attempt)
) WITHOUT ROWID;
`;
